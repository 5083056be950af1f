"""The agent's ``report:`` key: which publisher sends its runs' reports, and their labels.

``report: jetstream`` (or ``nats``), or a mapping::

    report:
      publisher: jetstream
      labels:
        role: web
        dc: ams1

``parse_report(path, value)`` returns a ``ReportConfig`` or raises the agent's
``ConfigError`` naming the file and the key (``report.labels.role: ...``), the way every
other key of the agent's configuration is checked. Pure (no I/O, nothing of nats).
"""
from __future__ import annotations

from ccm.fleet import KINDS
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple


class ReportConfig:
    __slots__ = ("publisher", "labels")

    def __init__(self, publisher: str, labels: Dict[str, str]):
        self.publisher = publisher
        self.labels = labels

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReportConfig) and (self.publisher, self.labels) == (other.publisher, other.labels)

    def __repr__(self) -> str:
        return f"ReportConfig({self.publisher!r}, {self.labels!r})"


KEYS: Tuple[str, ...] = ("publisher", "labels")


def parse_report(path: str, value: Any) -> Optional[ReportConfig]:
    """The ``report:`` key's value checked (None when it is not set)."""
    if value is None:
        return None
    from ccm.agent.config import ConfigError
    from ccm.fleet.subjects import ReportInputError, check_labels

    if isinstance(value, str):
        value = {"publisher": value}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: report: must be nats, jetstream or a mapping with publisher and labels, "
                          f"got {type(value).__name__}")
    for key in value:
        if key not in KEYS:
            raise ConfigError(f"{path}: report.{key}: unknown key (expected publisher, labels)")
    publisher = value.get("publisher")
    if publisher not in KINDS:
        raise ConfigError(f"{path}: report.publisher: invalid report publisher {publisher!r} "
                          "(expected nats or jetstream)")
    raw = value.get("labels") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: report.labels: must be a mapping of names to values, got {type(raw).__name__}")
    for k, v in raw.items():
        if isinstance(v, (dict, list)):
            raise ConfigError(f"{path}: report.labels.{k}: must be a plain value, got {type(v).__name__}")
    labels = {str(k): "" if v is None else (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in raw.items()}
    try:
        labels = check_labels(labels)
    except ReportInputError as exc:
        raise ConfigError(f"{path}: report.labels: {exc}") from None
    return ReportConfig(publisher, labels)
