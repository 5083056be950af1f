"""The record of the last ``ccm apply`` (``--last-run FILE``), for monitoring.

What: ``LastRun`` collects the facts of one run (start and end, the manifest as shown to
the user, noop, the exit code, the summary counts, each failed resource with its errors,
or the error that rejected the manifest) and ``write`` stores them as one JSON document,
atomically. Puppet's ``last_run_summary.yaml`` is the anchor: a monitor reads
``end_time`` to alert on stale runs and ``exit_code``/``failed_resources`` on bad ones.

Guarantees: the file is replaced atomically (``ccm.fsafe.atomic_replace``: no symlink
followed, no partial file, parents created the same way); times are UTC RFC 3339 plus
Unix seconds; messages are the ones the run printed, scrubbed as the console is.
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
    report_delivered: Optional[bool] = None   # --publish-report: whether this run's report reached the stream

    def finish(self, exit_code: int, *, summary: Any = None, events: Optional[List[Any]] = None,
               error: str = "") -> None:
        self.end = time.time()
        self.exit_code = exit_code
        self.summary = summary
        self.error = error
        self.failed = [{"resource": ev.ref, "errors": list(ev.errors) or (
                        [f"unmet requirements: {', '.join(ev.unmet_requirements)}"] if ev.unmet_requirements else [])}
                       for ev in events or () if ev.failed]

    def to_dict(self) -> Dict[str, Any]:
        from ccm import __version__
        from ccm.report import summary_counts

        end = self.end if self.end is not None else time.time()
        counts = summary_counts(self.summary) if self.summary is not None else {}
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
            **({} if self.report_delivered is None else {"report_delivered": self.report_delivered}),
        }

    def write(self, path: str) -> None:
        """Replace ``path`` atomically; a missing parent directory is created (0755), as
        cron lines and timers name a state directory nothing else creates. Parents are
        made and reached through ``fsafe.open_dir`` (descriptor-relative, no untrusted
        symlink followed), the same way as the file itself; every string of the record
        goes through the output scrubber (``ccm.redact.scrub_value``)."""
        from ccm import fsafe
        from ccm.model.errors import ProviderError
        from ccm.redact import scrub_value

        target = os.path.abspath(path)
        doc = scrub_value(self.to_dict())
        try:
            os.close(fsafe.open_dir(os.path.dirname(target), create=True))
            with fsafe.atomic_replace(target, mode=0o644) as fh:
                fh.write((json.dumps(doc, indent=2) + "\n").encode("utf-8"))
        except ProviderError as exc:   # a symlink of another user on the way
            raise PermissionError(errno.EPERM, str(exc)) from None
