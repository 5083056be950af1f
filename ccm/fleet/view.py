"""The fleet as readers show it: one row per host from the last report of each of its manifests (pure).

What: ``Fleet.add(subject, body)`` decodes and folds one report (a malformed one is
counted in ``malformed``, never raised); ``Fleet.rows(...)`` gives the hosts, newest
first, filtered by outcome and labels; ``summary`` counts them; ``text`` is the listing of
``ccm report fleet``. A host's outcome is the worst of its manifests' last reports
(``failed`` > ``changed`` > ``ok``), or ``stale`` when its newest report is older than
``--stale``. Guarantees: memory per report is a few small tuples (texts and counts are
shared between hosts), so 30,000 reports fit in a few MiB. Not: reading the stream
(``ccm.fleet.stream``), the page (``html``), the textfile (``prom``).
"""
from __future__ import annotations

import json

from ccm.fleet import document
from ccm.fleet.subjects import parse_subject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

COUNT_KEYS = ("total", "stable", "changed", "failed", "skipped", "refreshed", "unmet_requirements",
              "health_checked", "health_critical", "health_warning", "total_errors")
SHOWN_COUNTS = ("total", "changed", "failed", "skipped")
RANK = {"failed": 0, "stale": 1, "changed": 2, "ok": 3}   # the page's order: worst first
_ZEROS = (0,) * len(COUNT_KEYS)
_FAILED, _CHANGED = COUNT_KEYS.index("failed"), COUNT_KEYS.index("changed")
_RAW_DECODE = json.JSONDecoder().raw_decode


class Run:
    """The last report of one manifest of a host, as kept in memory."""

    __slots__ = ("manifest_id", "source", "sha256", "start", "end", "end_ts", "duration", "exit_code", "noop",
                 "outcome", "counts", "resources", "error")

    def __init__(self, manifest_id: str, doc: Mapping[str, Any], end_ts: float, shared: Dict[Any, Any]):
        get = doc.get
        manifest = doc["manifest"]
        source, sha = manifest["source"], manifest.get("sha256") or ""
        self.manifest_id = manifest_id
        self.source = shared.setdefault(source, source)   # one text for every host's copy
        self.sha256 = shared.setdefault(sha, sha) if type(sha) is str else ""
        self.start = doc["start"]
        self.end = doc["end"]
        self.end_ts = end_ts
        self.duration = get("duration", 0)
        self.exit_code = get("exit_code", 0)
        self.noop = get("noop") is True
        counts = tuple(map(doc["summary"].get, COUNT_KEYS, _ZEROS))
        self.counts: Tuple[int, ...] = shared.setdefault(counts, counts)
        resources = get("resources")
        self.error = get("error") or ""   # a manifest rejected before its run
        self.resources: Tuple[Tuple[str, str, str], ...] = ()
        if self.error:
            self.outcome = "failed"
        elif resources:
            self.resources = tuple(
                (r.get("resource", ""), r.get("outcome", ""), r.get("error", "")) for r in resources)
            self.outcome = document.outcome(doc)
        else:   # document.outcome from the counts alone (most reports list nothing)
            self.outcome = "failed" if counts[_FAILED] else "changed" if counts[_CHANGED] else "ok"

    def count(self, key: str) -> int:
        return self.counts[COUNT_KEYS.index(key)]

    def first_failed(self) -> Optional[Tuple[str, str]]:
        if self.error:
            return "manifest", self.error
        for resource, outcome, error in self.resources:
            if outcome == "failed":
                return resource, error
        return None

    def to_dict(self) -> Dict[str, Any]:
        return {"manifest": {"source": self.source, "sha256": self.sha256}, "start": self.start, "end": self.end,
                "duration": self.duration, "exit_code": self.exit_code, "noop": self.noop, "outcome": self.outcome,
                "summary": dict(zip(COUNT_KEYS, self.counts)),
                "resources": [{"resource": r, "outcome": o, "error": e} for r, o, e in self.resources],
                **({"error": self.error} if self.error else {})}


class Host:
    __slots__ = ("instance", "hostname", "labels", "runs", "last")

    def __init__(self, instance: str):
        self.instance = instance
        self.hostname = ""
        self.labels: Dict[str, str] = {}
        self.runs: Dict[str, Run] = {}
        self.last = 0.0

    def add(self, run: Run, hostname: str, labels: Dict[str, str]) -> None:
        old = self.runs.get(run.manifest_id)
        if old is not None and old.end_ts > run.end_ts:
            return
        self.runs[run.manifest_id] = run
        if run.end_ts >= self.last:   # the newest report names the host and its labels
            self.last, self.hostname, self.labels = run.end_ts, hostname, labels

    def outcome(self, now: float, stale: Optional[float]) -> str:
        if stale is not None and now - self.last > stale:
            return "stale"
        return min((r.outcome for r in self.runs.values()), key=lambda o: RANK[o], default="ok")

    def total(self, key: str) -> int:
        return sum(r.count(key) for r in self.runs.values())

    def first_failed(self) -> Optional[Tuple[str, str]]:
        for run in sorted(self.runs.values(), key=lambda r: -r.end_ts):
            found = run.first_failed()
            if found is not None:
                return found
        return None


class Row:
    """A host as listed: its outcome at the time of reading."""

    __slots__ = ("host", "outcome", "age")

    def __init__(self, host: Host, outcome: str, age: float):
        self.host, self.outcome, self.age = host, outcome, age

    def to_dict(self) -> Dict[str, Any]:
        h = self.host
        failed = h.first_failed()
        return {"hostname": h.hostname, "instance": h.instance, "labels": h.labels,
                "last_run": max(h.runs.values(), key=lambda r: r.end_ts).end if h.runs else None,
                "age_seconds": round(self.age, 3), "outcome": self.outcome,
                "counts": {k: h.total(k) for k in SHOWN_COUNTS},
                "first_failed": {"resource": failed[0], "error": failed[1]} if failed else None,
                "manifests": [r.to_dict() for r in sorted(h.runs.values(), key=lambda r: r.source)]}


def decode(body: bytes) -> Optional[Dict[str, Any]]:
    """A report document, or None when ``body`` is not one."""
    return decode_timed(body)[0]


def decode_timed(body: bytes, labels: bool = True) -> Tuple[Optional[Dict[str, Any]], float]:
    """(the report document or None, its end as Unix seconds); ``labels=False``: the
    caller checks the labels (``document.inspect``)."""
    try:   # what json.loads does, minus its encoding detection and wrappers (once per report)
        text = body.decode("utf-8").strip()
        doc, used = _RAW_DECODE(text)
        if used != len(text):
            return None, 0.0
    except (ValueError, RecursionError):
        return None, 0.0
    problem, end = document.inspect(doc, labels=labels)
    return (doc, end) if problem is None else (None, 0.0)


class Fleet:
    def __init__(self) -> None:
        self.hosts: Dict[str, Host] = {}
        self.malformed = 0
        self._shared: Dict[Any, Any] = {}

    def add(self, subject: str, body: bytes) -> bool:
        """Fold one report; False (and counted) when it is malformed."""
        instance, mid = parse_subject(subject)
        doc, end_ts = decode_timed(body, False) if instance else (None, 0.0)
        labels = self._labels(doc) if doc is not None and doc["instance"] == instance else None
        if doc is None or labels is None:
            self.malformed += 1
            return False
        shared = self._shared
        host = self.hosts.get(instance)
        if host is None:
            host = self.hosts[instance] = Host(instance)
        host.add(Run(mid, doc, end_ts, shared), shared.setdefault(doc["hostname"], doc["hostname"]), labels)
        return True

    def _labels(self, doc: Dict[str, Any]) -> Optional[Dict[str, str]]:
        """The report's labels as one dict shared by every host with the same ones (checked
        once per set of labels), or None when they are not a map of text."""
        labels = doc.get("labels") or {}
        try:
            key = tuple(sorted(labels.items()))
            found = self._shared.get(key)
        except (AttributeError, TypeError):   # not a map, or of values that are not text
            return None
        if found is None:
            if not document.is_text_map(labels):
                return None
            shared = self._shared
            found = shared[key] = {shared.setdefault(k, k): shared.setdefault(v, v) for k, v in key}
        return found

    def rows(self, now: float, *, stale: Optional[float] = None, outcome: str = "",
             labels: Optional[Mapping[str, str]] = None) -> List[Row]:
        """Hosts newest first; ``outcome`` keeps one outcome only, ``labels`` must all match."""
        out: List[Row] = []
        wanted = list((labels or {}).items())
        for host in self.hosts.values():
            if wanted and any(host.labels.get(k) != v for k, v in wanted):
                continue
            state = host.outcome(now, stale)
            if outcome and state != outcome:
                continue
            out.append(Row(host, state, max(0.0, now - host.last)))
        out.sort(key=lambda r: (-r.host.last, r.host.hostname))
        return out


class FailedHosts:
    """A fleet read for ``--failed``: every body kept as it arrives, and only the hosts with
    a report whose ``Ccm-Outcome`` header is not ``ok`` or ``changed`` (``failed``, or none:
    an older publisher's) decoded, all of their reports. Why: 50 failed hosts of 10,000 need
    150 decoded reports, not 30,000. Not: malformed reports of the other hosts are not
    counted (they are not decoded)."""

    def __init__(self) -> None:
        self.bodies: Dict[str, List[Tuple[str, bytes]]] = {}
        self.wanted: Dict[str, None] = {}

    def add(self, subject: str, body: bytes, outcome: str) -> None:
        host = subject[:subject.rfind(".")]   # the subject without its manifest id
        found = self.bodies.get(host)
        if found is None:
            found = self.bodies[host] = []
        found.append((subject, body))
        if outcome != "ok" and outcome != "changed":
            self.wanted[host] = None

    def fleet(self) -> Fleet:
        fleet = Fleet()
        for host in self.wanted:
            for subject, body in self.bodies[host]:
                fleet.add(subject, body)
        return fleet


def summary(rows: Iterable[Row], malformed: int = 0) -> Dict[str, int]:
    counts = {"hosts": 0, "ok": 0, "changed": 0, "failed": 0, "stale": 0}
    for row in rows:
        counts["hosts"] += 1
        counts[row.outcome] += 1
    counts["malformed"] = malformed
    return counts


def summary_line(counts: Mapping[str, int]) -> str:
    line = " ".join(f"{k}={counts[k]}" for k in ("hosts", "ok", "changed", "failed", "stale"))
    if counts.get("malformed"):
        line += f" malformed={counts['malformed']} (skipped)"
    return line


def age_text(seconds: float) -> str:
    """``45s``, ``3m``, ``2h5m``, ``3d4h``: an age at a glance."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        h, m = divmod(s // 60, 60)
        return f"{h}h{m}m" if m else f"{h}h"
    d, h = divmod(s // 3600, 24)
    return f"{d}d{h}h" if h else f"{d}d"


def labels_text(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "-"


def counts_text(host: Host) -> str:
    return " ".join(f"{k}={host.total(k)}" for k in SHOWN_COUNTS)


def text(rows: List[Row], counts: Mapping[str, int]) -> str:
    """The listing: aligned columns, one host a line, then the summary line."""
    table = []
    for row in rows:
        h = row.host
        failed = h.first_failed()
        table.append((h.hostname, labels_text(h.labels), age_text(row.age), row.outcome, counts_text(h),
                      f"{failed[0]}: {failed[1]}" if failed else ""))
    lines = []
    if table:
        header = ("HOST", "LABELS", "AGE", "OUTCOME", "COUNTS", "FIRST FAILURE")
        widths = [max(len(r[i]) for r in table + [header]) for i in range(5)]
        for r in [header] + table:
            lines.append("  ".join(r[i].ljust(widths[i]) for i in range(5)) + ("  " + r[5] if r[5] else ""))
    else:
        lines.append("No matching reports")
    lines.append(summary_line(counts))
    return "\n".join(line.rstrip() for line in lines) + "\n"
