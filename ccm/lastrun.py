"""The record of the last ``ccm apply`` (``--last-run FILE``), for monitoring.

What: ``LastRun`` collects the facts of one run (start and end, the manifest as shown to
the user, noop, the exit code, the summary counts, each failed resource with its errors,
or the error that rejected the manifest) and ``write`` stores them as one JSON document,
atomically. Puppet's ``last_run_summary.yaml`` is the anchor: a monitor reads
``end_time`` to alert on stale runs and ``exit_code``/``failed_resources`` on bad ones.

Guarantees: the file is replaced atomically (``ccm.fsafe.atomic_replace``: no symlink
followed, no partial file); times are UTC RFC 3339 plus Unix seconds; messages are the ones the run printed (already redacted there).
Not: a history (one run only), nor the event log (``--json`` or a session has that).
"""
from __future__ import annotations

import errno
import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

FORMAT_VERSION = 1


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class LastRun:
    manifest: str
    noop: bool = False
    start: float = field(default_factory=time.time)
    end: Optional[float] = None
    exit_code: Optional[int] = None
    summary: Optional[Any] = None          # ccm.model.events.SessionSummary
    failed: List[Dict[str, Any]] = field(default_factory=list)
    error: str = ""

    def finish(self, exit_code: int, *, summary: Any = None, events: Optional[List[Any]] = None,
               error: str = "") -> None:
        self.end = time.time()
        self.exit_code = exit_code
        self.summary = summary
        self.error = error
        self.failed = [{"resource": ev.ref, "errors": list(ev.errors) or (
                        [f"unmet requirements: {', '.join(ev.unmet_requirements)}"] if ev.unmet_requirements else [])}
                       for ev in events or () if getattr(ev, "failed", False)]

    def to_dict(self) -> Dict[str, Any]:
        from ccm import __version__

        end = self.end if self.end is not None else time.time()
        s = self.summary
        counts: Dict[str, Any] = {}
        if s is not None:
            counts = {"total": s.total_resources, "stable": s.stable_resources, "changed": s.changed_resources,
                      "failed": s.failed_resources, "skipped": s.skipped_resources,
                      "refreshed": s.refreshed_count, "unmet_requirements": s.requirements_unmet_count,
                      "health_checked": s.health_checked_count, "health_critical": s.health_check_critical_count,
                      "health_warning": s.health_check_warning_count, "total_errors": s.total_errors}
        return {
            "format": FORMAT_VERSION,
            "version": __version__,
            "manifest": self.manifest,
            "noop": self.noop,
            "start_time": _rfc3339(self.start),
            "end_time": _rfc3339(end),
            "start_timestamp": round(self.start, 3),
            "end_timestamp": round(end, 3),
            "duration_seconds": round(end - self.start, 3),
            "exit_code": self.exit_code,
            "rejected": bool(self.error),
            "error": self.error,
            "resources": counts,
            "failed_resources": self.failed,
        }

    def write(self, path: str) -> None:
        """Replace ``path`` atomically; a missing parent directory is created (0755), as
        cron lines and timers name a state directory nothing else creates."""
        from ccm import fsafe

        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            if os.path.lexists(parent):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), parent)
            os.makedirs(parent, mode=0o755, exist_ok=True)
        with fsafe.atomic_replace(os.path.abspath(path), mode=0o644) as fh:
            fh.write((json.dumps(self.to_dict(), indent=2) + "\n").encode("utf-8"))
