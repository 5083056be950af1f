"""The report of one run: what a host publishes after it (pure; no I/O).

What: ``build(events, summary, ...)`` returns the one JSON object of the issue, keys in
this order: ``instance``, ``hostname``, ``labels``, ``manifest`` (``source``, ``sha256``),
``start``, ``end`` (RFC 3339, UTC), ``duration`` (seconds), ``exit_code``, ``noop``,
``summary`` (the counts ``--last-run`` writes) and ``resources``: each changed or failed
resource as ``{"resource": "type#name", "outcome": "failed"|"changed", "error": "..."}``,
failed ones first, at most ``MAX_RESOURCES``; a manifest rejected before its run (it
did not parse or validate) adds ``error``, its one-line error, and lists nothing else.
``outcome(doc)`` is the host outcome a
report stands for (``failed`` > ``changed`` > ``ok``); ``check(doc)`` is what readers
accept. Guarantees: every text passes ``ccm.redact`` (URL user info, every value marked
``# @sensitive``); errors are one line of at most ``MAX_ERROR`` characters.
Not: file content, diffs, properties, stable resources (none of it is ever read here).
"""
from __future__ import annotations

from ccm import redact
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

MAX_RESOURCES = 100
MAX_ERROR = 300
OUTCOMES = ("failed", "changed", "ok")   # worst first; readers add "stale"
KEYS = ("instance", "hostname", "labels", "manifest", "start", "end", "duration", "exit_code", "noop",
        "summary", "resources")   # and "error" in the report of a rejected manifest


def clean(text: Any, limit: int = 0) -> str:
    """One redacted line: white space runs collapsed, secrets and URL user info replaced."""
    line = " ".join(str(text).split())
    line = redact.scrub_known(redact.redact_url(line))
    if limit and len(line) > limit:
        line = line[:limit - 3] + "..."
    return line


def error_line(event: Any) -> str:
    errors = list(event.errors or ())
    if not errors and event.unmet_requirements:
        errors = [f"unmet requirements: {', '.join(event.unmet_requirements)}"]
    return clean("; ".join(str(e) for e in errors), MAX_ERROR)


def resources_of(events: Iterable[Any]) -> List[Dict[str, str]]:
    """Changed and failed resources, failed first, each in run order; capped."""
    failed: List[Dict[str, str]] = []
    changed: List[Dict[str, str]] = []
    for ev in events:
        if ev.failed:
            failed.append({"resource": clean(ev.ref, MAX_ERROR), "outcome": "failed", "error": error_line(ev)})
        elif ev.changed and not ev.skipped:
            changed.append({"resource": clean(ev.ref, MAX_ERROR), "outcome": "changed", "error": ""})
    return (failed + changed)[:MAX_RESOURCES]


def build(events: Iterable[Any], summary: Any, *, instance: str, hostname: str, labels: Mapping[str, str],
          source: str, sha256: str, start_ns: int, end_ns: int, exit_code: int, noop: bool,
          error: str = "") -> Dict[str, Any]:
    from ccm.gocompat.rfc3339 import rfc3339
    from ccm.report import summary_counts

    end_ns = max(end_ns, start_ns)
    doc = {
        "instance": instance,
        "hostname": clean(hostname),
        "labels": {clean(k): clean(v) for k, v in labels.items()},
        "manifest": {"source": clean(source), "sha256": sha256},
        "start": rfc3339(start_ns),
        "end": rfc3339(end_ns),
        "duration": round((end_ns - start_ns) / 1e9, 3),
        "exit_code": int(exit_code),
        "noop": bool(noop),
        "summary": summary_counts(summary),
        "resources": resources_of(events),
    }
    if error:
        doc["error"] = clean(error, MAX_ERROR) or "rejected"
    return doc


def outcome(doc: Mapping[str, Any]) -> str:
    """``failed`` if any resource failed (or the manifest was rejected), else ``changed`` if
    any changed, else ``ok``."""
    if doc.get("error"):
        return "failed"
    counts = doc.get("summary") or {}
    found = "failed" if counts.get("failed") else "changed" if counts.get("changed") else "ok"
    for r in doc.get("resources") or ():   # the counts say it all unless a report lists more
        if found == "failed":
            break
        if r.get("outcome") == "failed":
            found = "failed"
        elif r.get("outcome") == "changed":
            found = "changed"
    return found


_STR, _INT, _NUMBER = {str}, {int}, (int, float)
_TEXTS = ("instance", "hostname", "start", "end")


def is_text_map(value: Any) -> bool:
    return type(value) is dict and (not value or (set(map(type, value)) == _STR and set(map(type, value.values()))
                                                  == _STR))


def inspect(doc: Any, *, labels: bool = True) -> Tuple[Optional[str], float]:
    """(what is wrong with ``doc``, or None; its end as Unix seconds). The readers' one
    check of every message (type tests and C-level maps: a fleet read makes 30,000);
    ``labels=False``: the caller checks the labels (the fleet fold, once per set of labels)."""
    if type(doc) is not dict:
        return "not a JSON object", 0.0
    get = doc.get
    end: Any = get("end")
    texts = (get("instance"), get("hostname"), get("start"), end)
    if set(map(type, texts)) != _STR or not all(texts):
        key = next(k for k, v in zip(_TEXTS, texts) if type(v) is not str or not v)
        return f"{key} is missing or not text", 0.0
    if labels and not is_text_map(get("labels", {})):
        return "labels is not a map of text", 0.0
    manifest = get("manifest")
    if type(manifest) is not dict or type(manifest.get("source")) is not str:
        return "manifest is missing its source", 0.0
    summary = get("summary")
    if type(summary) is not dict or (summary and set(map(type, summary.values())) != _INT):
        return "summary is not a map of counts", 0.0
    resources = get("resources", [])
    if type(resources) is not list or (resources and not all(is_text_map(r) and "resource" in r
                                                             for r in resources)):
        return "resources is not a list of resources", 0.0
    if type(get("error", "")) is not str:
        return "error is not text", 0.0
    if type(get("exit_code", 0)) is not int or type(get("duration", 0)) not in _NUMBER:
        return "exit_code or duration is not a number", 0.0
    seconds = parse_time(end)
    if seconds is None:
        return "end is not an RFC 3339 time", 0.0
    return None, seconds


def check(doc: Any) -> Optional[str]:
    """None when ``doc`` is a report readers can show, else what is wrong with it."""
    return inspect(doc)[0]


_EPOCH: List[Any] = []
_SECONDS: Dict[str, float] = {}   # "2026-12-04T01:17:05" -> Unix seconds: reports of a fleet share seconds
_SECONDS_MAX = 100_000


def parse_time(text: str) -> Optional[float]:
    """Unix seconds of an RFC 3339 UTC time as ``rfc3339`` writes it (``...Z``), else None
    (``datetime.fromisoformat`` parses in C, once per distinct second; ``strptime`` would
    cost ~10 us a report)."""
    if not 20 <= len(text) <= 40 or text[-1] != "Z" or text[10] != "T":
        return None
    frac = text[19:-1]
    if frac and (frac[0] != "." or not frac[1:].isdigit()):
        return None
    head = text[:19]
    whole = _SECONDS.get(head)
    if whole is None:
        if not _EPOCH:
            from datetime import datetime

            _EPOCH.extend((datetime, datetime(1970, 1, 1)))
        dt, epoch = _EPOCH
        try:
            whole = (dt.fromisoformat(head) - epoch).total_seconds()
        except ValueError:
            return None
        if len(_SECONDS) < _SECONDS_MAX:
            _SECONDS[head] = whole
    return whole + float("0" + frac) if frac else whole
