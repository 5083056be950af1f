"""The narrow manager contract the resource flow programs against.

The concrete manager (``ccm.manager.Manager``) has more; resources see only this.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Protocol, Sequence


class Metrics(Protocol):
    def observe(self, metric: str, seconds: float, **labels: str) -> None: ...

    def record_event(self, event: Any) -> None: ...


class SessionView(Protocol):
    def is_failed(self, ref: str) -> bool: ...

    def should_refresh(self, refs: Sequence[str]) -> bool: ...

    def record(self, event: Any) -> None: ...


class Manager(Protocol):
    noop: bool
    working_dir: Optional[str]
    user_log: Any
    runner: Any
    session: SessionView
    registry: Any
    metrics: Metrics
    depth: int

    def facts(self) -> Dict[str, Any]: ...

    def data(self) -> Dict[str, Any]: ...

    def template_environment(self) -> Mapping[str, Any]: ...
