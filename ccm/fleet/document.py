"""The report of one run: what a host publishes after it (pure; no I/O).

What: ``build(events, summary, ...)`` returns the one JSON object of the issue, keys in
this order: ``instance``, ``hostname``, ``labels``, ``manifest`` (``source``, ``sha256``),
``start``, ``end`` (RFC 3339, UTC), ``duration`` (seconds), ``exit_code``, ``noop``,
``summary`` (the counts ``--last-run`` writes) and ``resources``: each changed or failed
resource as ``{"resource": "type#name", "outcome": "failed"|"changed", "error": "..."}``,
failed ones first, at most ``MAX_RESOURCES``. ``outcome(doc)`` is the host outcome a
report stands for (``failed`` > ``changed`` > ``ok``); ``check(doc)`` is what readers
accept. Guarantees: every text passes ``ccm.redact`` (URL user info, every value marked
``# @sensitive``); errors are one line of at most ``MAX_ERROR`` characters.
Not: file content, diffs, properties, stable resources (none of it is ever read here).
"""
from __future__ import annotations

from ccm import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional

MAX_RESOURCES = 100
MAX_ERROR = 300
OUTCOMES = ("failed", "changed", "ok")   # worst first; readers add "stale"
KEYS = ("instance", "hostname", "labels", "manifest", "start", "end", "duration", "exit_code", "noop",
        "summary", "resources")


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
          source: str, sha256: str, start_ns: int, end_ns: int, exit_code: int, noop: bool) -> Dict[str, Any]:
    from ccm.model.events import rfc3339
    from ccm.report import summary_counts

    end_ns = max(end_ns, start_ns)
    return {
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


def outcome(doc: Mapping[str, Any]) -> str:
    """``failed`` if any resource failed, else ``changed`` if any changed, else ``ok``."""
    counts = doc.get("summary") or {}
    if counts.get("failed") or any(r.get("outcome") == "failed" for r in doc.get("resources") or ()):
        return "failed"
    if counts.get("changed") or any(r.get("outcome") == "changed" for r in doc.get("resources") or ()):
        return "changed"
    return "ok"


def _is_text_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def check(doc: Any) -> Optional[str]:
    """None when ``doc`` is a report readers can show, else what is wrong with it."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    for key in ("instance", "hostname", "start", "end"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            return f"{key} is missing or not text"
    if not _is_text_map(doc.get("labels", {})):
        return "labels is not a map of text"
    manifest = doc.get("manifest")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("source"), str):
        return "manifest is missing its source"
    summary = doc.get("summary")
    if not isinstance(summary, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                for v in summary.values()):
        return "summary is not a map of counts"
    resources = doc.get("resources", [])
    if not isinstance(resources, list) or not all(_is_text_map(r) and "resource" in r for r in resources):
        return "resources is not a list of resources"
    if not isinstance(doc.get("exit_code", 0), int) or isinstance(doc.get("duration", 0), bool) or \
            not isinstance(doc.get("duration", 0), (int, float)):
        return "exit_code or duration is not a number"
    if parse_time(doc["end"]) is None:
        return "end is not an RFC 3339 time"
    return None


def parse_time(text: str) -> Optional[float]:
    """Unix seconds of an RFC 3339 UTC time as ``rfc3339`` writes it (``...Z``), else None
    (by hand: ``strptime`` costs ~10 us, and a fleet read parses one per report)."""
    from datetime import datetime, timezone

    if not 20 <= len(text) <= 40 or text[-1] != "Z" or text[4] != "-" or text[7] != "-" or text[10] != "T" \
            or text[13] != ":" or text[16] != ":":
        return None
    digits = text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    frac = text[19:-1]
    if not digits.isdigit() or (frac and (frac[0] != "." or not frac[1:].isdigit())):
        return None
    try:
        whole = datetime(int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]),
                         int(text[17:19]), tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None
    return whole + (float("0" + frac) if frac else 0.0)
