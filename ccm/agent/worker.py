"""One worker per manifest source: watch the source, keep its last good bundle, and
run its manifest when the scheduler says so.

A worker never schedules an apply. Its watcher thread only *requests* one through a
coalescing trigger of size one (a burst of changes is one priority apply); the
agent's single apply loop calls ``run()``. Status (last apply, outcome, counts, last
error) lives in ``WorkerStatus`` so a replaced worker hands it to its successor.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ccm.agent import runner, timing
from ccm.agent.sources import ManifestSource, SourceError, SourceGone, make_source
from ccm.locks import RunLockHeld
from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set

    from ccm.agent.agent import Agent
    from ccm.agent.watch.drift import DriftWatch

SUMMARY_FIELDS = ("total_resources", "changed_resources", "failed_resources", "skipped_resources",
                  "stable_resources", "refreshed_count", "requirements_unmet_count", "health_checked_count",
                  "health_check_ok_count", "health_check_warning_count", "health_check_critical_count",
                  "health_check_unknown_count", "total_errors")


class Trigger:
    """A coalescing request flag of size one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = False

    def request(self) -> bool:
        with self._lock:
            was, self._pending = self._pending, True
            return not was

    def take(self) -> bool:
        with self._lock:
            was, self._pending = self._pending, False
            return was

    @property
    def pending(self) -> bool:
        return self._pending


def _time(ts: Optional[float]) -> Optional[str]:
    from ccm.gocompat.rfc3339 import rfc3339

    return rfc3339(int(ts * 1e9)) if ts else None


@dataclass
class WorkerStatus:
    name: Optional[str]
    source: str
    state: str = "starting"
    stopped_reason: Optional[str] = None
    manifest: Optional[str] = None
    revision: Optional[str] = None
    last_fetch: Optional[float] = None
    last_apply: Optional[float] = None
    outcome: Optional[str] = None
    summary: Optional[Dict[str, int]] = None
    last_health_check: Optional[float] = None
    health: Optional[str] = None
    last_error: Optional[str] = None
    applies: int = 0
    report: Optional[Dict[str, Any]] = None   # the last run's report: delivered, queued, dropped, error
    extra: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "source": self.source, "state": self.state,
                "stopped_reason": self.stopped_reason, "manifest": self.manifest, "revision": self.revision,
                "last_fetch": _time(self.last_fetch), "last_apply": _time(self.last_apply),
                "outcome": self.outcome, "summary": self.summary, "applies": self.applies,
                "last_health_check": _time(self.last_health_check), "health": self.health,
                "last_error": self.last_error, **({"report": self.report} if self.report is not None else {})}


def outcome_of(summary: Any) -> str:
    if summary.failed_resources or summary.total_errors:
        return "failed"
    if summary.changed_resources:
        return "changed"
    return "stable"


def health_of(summary: Any) -> str:
    if summary.health_check_critical_count:
        return "CRITICAL"
    if summary.health_check_unknown_count:
        return "UNKNOWN"
    if summary.health_check_warning_count:
        return "WARNING"
    return "OK" if summary.health_checked_count else "NONE"


class Worker:
    def __init__(self, agent: "Agent", source: str, *, name: Optional[str] = None,
                 status: Optional[WorkerStatus] = None, watch: bool = False):
        self.agent = agent
        self.source_text = source
        self.name = name
        self.ident = name if name is not None else source
        self.source: ManifestSource = make_source(
            source, cache_dir=agent.cfg.cache_dir, check_interval=timing.scaled(timing.SOURCE_CHECK_INTERVAL),
            local_interval=timing.scaled(timing.LOCAL_CHECK_INTERVAL), object_store=agent.object_store)
        self.label = name if name is not None else self.source.shown   # logs and metrics: credentials redacted
        self.status = status or WorkerStatus(name=name, source=self.source.shown)
        self.status.source = self.source.shown
        self.status.state = "starting"
        self.status.stopped_reason = None
        self.trigger = Trigger()
        self.log = agent.log.bind(manifest=self.label)
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._manager: Any = None
        self._last_full_apply: Optional[float] = None
        self._last_was_triggered = False   # the last full apply was a forced (triggered) one
        self._last_logged_error = ""
        self._good_text: Optional[str] = None     # a local manifest's last version that loaded
        self._load_error: Optional[str] = None    # this run applies that version: why
        self.watching = watch
        self.drift: Optional[DriftWatch] = None    # the drift watch (issue 29), when watching
        self._top_refs: Set[str] = set()           # the last run's manifest's resources
        if watch:
            from ccm.agent.watch.drift import DriftWatch

            self.drift = DriftWatch(label=self.label, log=self.log, metrics=agent.metrics, request=agent.wake,
                                    service_poll=agent.cfg.service_poll)

    # --- the watcher ------------------------------------------------------------------

    def start(self) -> None:
        self.status.state = "running"
        if self.drift is not None:
            self.drift.start()
        self._thread = threading.Thread(target=self._watch, name=f"ccm-worker-{self.label}", daemon=True)
        self._thread.start()

    def stop(self, reason: str = "") -> None:
        self._stop.set()
        if self.drift is not None:
            self.drift.stop()
        if reason:
            self.status.state, self.status.stopped_reason = "stopped", reason
        elif self.status.state != "stopped":
            self.status.state = "stopped"

    def join(self, timeout: float) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _watch(self) -> None:
        tries = 0
        while not self._stop.is_set() and not self.agent.stop_event.is_set():
            delay = self.source.check_interval
            try:
                self._check_once()
                tries = 0
            except SourceGone as exc:
                self.log.error("Shutting down due to context cancellation", cause=str(exc))
                self.status.last_error = str(exc)
                self.stop(str(exc))
                return
            except CCMError as exc:
                tries += 1
                self._fetch_failed(str(exc))
                delay = min(delay, timing.backoff_delay(tries)) if self.source.kind == "local" else \
                    timing.backoff_delay(tries)
            except Exception as exc:  # a bug in a source must not kill the watcher silently
                tries += 1
                self._fetch_failed(f"{type(exc).__name__}: {exc}")
                delay = timing.backoff_delay(tries)
            self._stop.wait(delay)

    def _fetch_failed(self, message: str) -> None:
        self.status.last_error = message
        if self.source.kind != "local":
            self.agent.metrics.inc("agent_manifest_fetch_error", manifest=self.label)
        if message != self._last_logged_error:
            self.log.error("Could not fetch manifest", error=message)
            self._last_logged_error = message

    def _check_once(self) -> None:
        before = self.source.fetches
        candidate = self.source.check()
        if self.source.fetches != before:
            self.agent.metrics.inc("agent_manifest_fetch", manifest=self.label)
            self.status.last_fetch = time.time()
        if candidate is None:
            return
        if self.source.kind != "local":
            try:   # validate before swap: a bundle that does not resolve never replaces the last good one
                self.agent.validate(candidate.manifest_path)
            except CCMError as exc:
                self.source.discard(candidate)
                self.agent.metrics.inc("agent_manifest_load_error", manifest=self.label)
                raise SourceError(f"bundle from {self.source.shown} does not validate, keeping the last good one: "
                                  f"{exc}") from None
        with self.agent.apply_lock:
            if self._stop.is_set():
                self.source.discard(candidate)
                return
            self.source.commit(candidate)
        self.status.manifest = self.source.manifest_path
        self.status.revision = candidate.revision or None
        self._last_logged_error = ""
        if self.source.kind != "local":
            self.status.last_error = None
            self.log.info("Fetched manifest", revision=candidate.revision)
        if self.trigger.request():
            self.agent.wake()

    # --- runs (scheduler thread only) ------------------------------------------------

    def _get_manager(self) -> Any:
        if self._manager is None:
            self._manager = runner.run_manager(self.agent.root, self.log)
        return self._manager

    def _too_soon(self, now: float) -> bool:
        """A scheduled run within the 30 s floor of a *triggered* apply would repeat it: skip.
        Only a triggered apply counts: the schedule never suppresses its own runs (comparing
        with the last scheduled start skipped every other run of a 30 s interval, the
        scheduler ticking a few milliseconds short of it)."""
        floor = timing.scaled(timing.MIN_INTERVAL)
        last = self._last_full_apply
        if not self._last_was_triggered or last is None or now - last >= floor:
            return False
        from ccm.model.durations import go_duration_seconds

        self.log.warn("Skipping apply due to minimum configured apply interval",
                      since=go_duration_seconds(round(now - last, 3)), min=go_duration_seconds(floor))
        return True

    def watch_status(self) -> Dict[str, Any]:
        return self.drift.status() if self.drift is not None else {"watching": False}

    def run_drift(self) -> Any:
        """Re-apply the resources the drift watch found changed (scheduler thread, under the
        apply lock); returns the summary or None."""
        if self.drift is None:
            return None
        ready = self.drift.watch.take_ready()
        if not ready:
            return None
        polled = not any(ready.values())   # services polled, no path changed: a stable poll says nothing
        summary = self.run(only=sorted(ready), quiet=polled)
        if summary is not None:
            self.drift.report(ready, self._top_refs)
        elif not self.stopped:
            self.drift.watch.retry(ready)
        return summary

    def run(self, *, health_check_only: bool = False, force: bool = False, only: Optional[List[str]] = None,
            quiet: bool = False) -> Any:
        """One apply (or health-check-only run); returns the summary or None. ``force``:
        a triggered apply (source change, remediation), which always runs; a scheduled one
        is skipped only right after a triggered apply (``_too_soon``). ``only``: the drift
        watch's re-apply of these resources (with what the engine runs with them), published
        as a report only when it changed something; ``quiet``: a service poll, whose run logs
        nothing unless it changed or failed something."""
        now = time.monotonic()
        if not health_check_only and only is None:
            if not force and self._too_soon(now):
                return None
            self._last_was_triggered = force
        path = self.source.manifest_path
        if path is None:
            self.log.warn("No manifest path set, skipping apply")
            return None
        # the engine names the manifest itself; set members also carry their name
        log = self.agent.log.bind(worker=self.name) if self.name is not None else self.agent.log.bind()
        manager = self._get_manager().child(user_log=log)
        if not health_check_only and only is None:
            self._last_full_apply = now
        started = time.monotonic()
        drift = None if health_check_only else self.drift
        ok = False
        try:
            manifest = self._load(manager, path)
            if drift is not None:
                self._top_refs = {e.props.resource_id for e in manifest.resources}
                drift.before(manager.session, only)
            result = runner.execute(manager, manifest, health_check_only=health_check_only,
                                    stop=self.agent.stop_event, only=only, quiet=quiet)
            ok = not result.interrupted
        except RunLockHeld as exc:
            self.log.warn("Skipping apply: another ccm run holds the run lock", error=str(exc))
            self._record_error(str(exc), health_check_only)
            return None
        except CCMError as exc:
            self.log.error("Could not resolve manifest", error=str(exc))
            self._record_error(str(exc), health_check_only)
            self._report_rejected(path, str(exc), health_check_only)
            return None
        except Exception as exc:   # the loop must survive anything a manifest does
            self.log.error("Could not execute manifest", error=f"{type(exc).__name__}: {exc}")
            self._record_error(f"{type(exc).__name__}: {exc}", health_check_only)
            self._report_rejected(path, f"{type(exc).__name__}: {exc}", health_check_only)
            return None
        else:
            quiet_run = only is not None and not (result.summary.changed_resources or result.failed)
            if not health_check_only and not quiet_run:   # before forget_run
                self._publish_report(result, manager, path)
        finally:
            if drift is not None:
                drift.after(self._top_refs, ok, only)
            if not health_check_only:
                self.agent.metrics.observe("agent_apply", time.monotonic() - started, manifest=self.label)
            runner.forget_run(manager)   # the result's summary is all a cycle reads
        summary = result.summary
        del result   # and its records: nothing of the run stays on the heap until the next one
        from ccm.report import one_line

        if quiet and not (summary.changed_resources or summary.failed_resources):
            return summary
        self._log_summary(one_line(summary), summary, path, health_check_only)
        self._record_summary(summary, health_check_only)
        return summary

    def _publish_report(self, result: Any, manager: Any, path: str) -> None:
        """The run's fleet report, when the agent has a ``report:`` publisher."""
        if self.agent.reporter is None:
            return
        from ccm.fleet.publish import RunContext, file_sha256

        self.status.report = self.agent.reporter.finished(result, RunContext(
            self.source.shown, manifest_sha256=file_sha256(path), exit_code=1 if result.failed else 0,
            events=manager.session.transaction_events())).to_dict()

    def _log_summary(self, line: str, summary: Any, path: str, health_check_only: bool) -> None:
        slog = self.log.bind(healthcheck=True) if health_check_only else self.log
        if path != self.source.shown:
            slog = slog.bind(path=path)
        if summary.changed_resources > 0:
            slog.warn(line)
        elif summary.failed_resources > 0:
            slog.error(line)
        else:
            slog.info(line)

    def _record_summary(self, summary: Any, health_check_only: bool) -> None:
        counts = {k: int(getattr(summary, k)) for k in SUMMARY_FIELDS}
        if health_check_only:
            self.status.last_health_check = time.time()
            self.status.health = health_of(summary)
        else:
            self.status.last_apply = time.time()
            self.status.outcome = outcome_of(summary)
            self.status.summary = counts
            self.status.applies += 1
            self.status.last_error = self._load_error

    def _load(self, manager: Any, path: str) -> Any:
        """Resolve the manifest to run. A local file is read and resolved at every run (it
        is the operator's live copy); when it does not load but did before, the last version
        that did is run instead, the error logged, counted and kept for ``/status``
        (validate-before-swap, as remote bundles get at fetch time)."""
        self._load_error = None
        if self.source.kind != "local":
            return runner.load(manager, path, self.agent.data)
        from ccm.readfile import read_text

        text: Optional[str] = None
        try:
            text = read_text(path, "manifest")
            manifest = runner.load(manager, path, self.agent.data, text=text)
        except CCMError as exc:
            self.agent.metrics.inc("agent_manifest_load_error", manifest=self.label)
            good = self._good_text
            if good is None or good == text:
                raise
            self._load_error = f"{exc} (applying the last good version)"
            self.log.error("Could not load manifest, applying the last good version", error=str(exc))
            return runner.load(manager, path, self.agent.data, text=good)
        self._good_text = text
        return manifest

    def _report_rejected(self, path: str, error: str, health_check_only: bool) -> None:
        """A manifest that did not resolve: a failed report naming the error (``report:``)."""
        if self.agent.reporter is None or health_check_only:
            return
        from ccm.fleet.publish import RunContext, file_sha256

        context = RunContext(self.source.shown, manifest_sha256=file_sha256(path), exit_code=1)
        self.status.report = self.agent.reporter.rejected(context, error).to_dict()

    def _record_error(self, message: str, health_check_only: bool) -> None:
        self.status.last_error = message
        if health_check_only:
            self.status.last_health_check = time.time()
            self.status.health = "UNKNOWN"
        else:
            self.status.last_apply = time.time()
            self.status.outcome = "error"
