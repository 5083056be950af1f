"""Report subjects, instance tokens and manifest ids; the checks every label and token passes.

``choria.ccm.reports.<instance>.<manifest-id>``: ``instance`` is the FNV-1a 64 digest of
the host name as 16 lowercase hex digits, made as registration makes its instance ids
(spec registration.md), so it is the same for every manifest of a host and anyone who
knows the host name can compute it (``ccm report show HOST``); ``manifest-id`` is the
same digest of the manifest source as shown (credentials redacted). Both are hex, so a
host name or source can never put ``.``, ``*`` or ``>`` into a subject; ``check_token``
refuses such tokens anyway, and ``check_labels`` refuses labels holding them.
Pure: no I/O, nothing imported.
"""
from __future__ import annotations

from ccm.fleet import SUBJECT_PREFIX
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, Mapping, Optional, Tuple

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1
MAX_TOKEN = 128
MAX_LABEL_KEY = 64
MAX_LABEL_VALUE = 256
MAX_LABELS = 32
_FORBIDDEN = {".": "'.'", "*": "'*'", ">": "'>'"}


class ReportInputError(ValueError):
    """A label or subject token that cannot be published; the message is one line naming it."""


def fnv1a64_hex(text: str) -> str:
    """FNV-1a 64 of ``text``'s UTF-8 bytes, 16 lowercase hex digits (registration's instance ids)."""
    h = FNV_OFFSET
    for b in text.encode("utf-8"):
        h = ((h ^ b) * FNV_PRIME) & MASK
    return format(h, "016x")


def instance_token(hostname: str) -> str:
    return fnv1a64_hex(hostname)


def manifest_id(source: str) -> str:
    return fnv1a64_hex(source)


def _problem(value: str, limit: int) -> Optional[str]:
    """What makes ``value`` unusable as a token or label text, or None."""
    if not value:
        return "is empty"
    if len(value) > limit:
        return f"is {len(value)} characters long (at most {limit})"
    for ch, shown in _FORBIDDEN.items():
        if ch in value:
            return f"holds {shown}"
    for ch in value:
        if ch.isspace():
            return "holds a space" if ch == " " else "holds white space"
        if ord(ch) < 32 or ord(ch) == 127:
            return "holds a control character"
    return None


def check_token(what: str, value: str) -> str:
    """``value`` when it can be one subject token, else ``ReportInputError`` naming ``what``."""
    problem = _problem(value, MAX_TOKEN) if isinstance(value, str) else "is not text"
    if problem is not None:
        raise ReportInputError(f"subject token {what} {problem} (tokens must not contain '.', '*', '>' or spaces)")
    return value


def check_labels(labels: Mapping[str, str]) -> Dict[str, str]:
    """The labels as a plain dict of strings, or ``ReportInputError`` naming the first bad one."""
    if len(labels) > MAX_LABELS:
        raise ReportInputError(f"{len(labels)} labels given (at most {MAX_LABELS})")
    out: Dict[str, str] = {}
    for key, value in labels.items():
        shown = repr(key) if isinstance(key, str) and len(key) <= MAX_LABEL_KEY else "(a long name)"
        problem = _problem(key, MAX_LABEL_KEY) if isinstance(key, str) else "is not text"
        if problem is not None:
            raise ReportInputError(f"label name {shown} {problem} (labels must not contain '.', '*', '>' or spaces)")
        if not isinstance(value, str):
            value = "" if value is None else str(value)
        problem = _problem(value, MAX_LABEL_VALUE)
        if problem is not None:
            raise ReportInputError(f"label {shown}: value {problem} (labels must not contain '.', '*', '>' "
                                   "or spaces)")
        out[key] = value
    return out


def report_subject(instance: str, manifest: str) -> str:
    return ".".join((SUBJECT_PREFIX, check_token("instance", instance), check_token("manifest-id", manifest)))


def host_filter(instance: str) -> str:
    """Every manifest's subject of one host."""
    return ".".join((SUBJECT_PREFIX, check_token("instance", instance), "*"))


def all_filter() -> str:
    return f"{SUBJECT_PREFIX}.*.*"


def parse_subject(subject: str) -> Tuple[str, str]:
    """(instance, manifest-id) of a report subject, or empty strings."""
    if not subject.startswith(_PREFIX_DOT):
        return "", ""
    instance, dot, manifest = subject[len(_PREFIX_DOT):].partition(".")
    if not dot or not instance or not manifest or "." in manifest:
        return "", ""
    return instance, manifest


_PREFIX_DOT = SUBJECT_PREFIX + "."
