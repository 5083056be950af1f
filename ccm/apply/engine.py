"""Executing a resolved manifest: strictly in declaration order, one event per resource,
each recorded before the next starts (so ``require``/``subscribe`` see it)."""
from __future__ import annotations

import time

from ccm import interrupt
from ccm.apply.batch import RunBatch
from ccm.apply.manifest import MAX_DEPTH, Manifest
from ccm.apply.runcache import RunCache
from ccm.log import internal
from ccm.model.errors import CCMError, ManifestError
from ccm.model.events import SessionSummary, TransactionEvent
from ccm.model.manager import RunManager, UserLog
from ccm.model.resource import Properties
from ccm.model.value import ValueObject
from ccm.report import status_logger
from ccm.resources import base
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional

    from ccm.model.events import RecordedEvent

log = internal("ccm.apply")


class ExecutionResult(ValueObject):
    # each event as the session store kept it (the event, or its EventRecord when the
    # store's ``keep_events`` is off), or the event itself when recording it failed
    events: List[RecordedEvent]
    summary: SessionSummary
    terminated: bool
    interrupted: bool           # a SIGINT/SIGTERM/SIGHUP stopped the run (ccm.interrupt)

    _value_fields = ("events", "summary", "terminated", "interrupted")

    def __init__(self, events: Optional[List[RecordedEvent]] = None, summary: Optional[SessionSummary] = None,
                 terminated: bool = False, interrupted: bool = False) -> None:
        self.events = [] if events is None else events
        self.summary = SessionSummary() if summary is None else summary
        self.terminated = terminated
        self.interrupted = interrupted

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.events)

    @property
    def changed(self) -> bool:
        return any(e.changed for e in self.events)


DIFF_MAX_LINES = 200
DIFF_MAX_LINE_CHARS = 400


def show_diff(ulog: UserLog, event: TransactionEvent) -> None:
    """``--diff``: the unified diff of a file content change in noop, capped in size; never
    for sensitive content (no diff is computed then) or binary content."""
    import sys

    state = event.status
    change = (getattr(state, "internal", None) or {}).get("content_change") or {}
    lines = change.get("diff")
    if not event.noop or not lines or getattr(ulog, "quiet", False):
        return
    shown = [ln.rstrip("\n") for ln in lines[:DIFF_MAX_LINES]]
    shown = [ln if len(ln) <= DIFF_MAX_LINE_CHARS else ln[:DIFF_MAX_LINE_CHARS] + "..." for ln in shown]
    if len(lines) > DIFF_MAX_LINES:
        shown.append(f"... diff cut at {DIFF_MAX_LINES} of {len(lines)} lines")
    sys.stdout.write("\n".join(shown) + "\n")
    sys.stdout.flush()


def execute(manager: RunManager, manifest: Manifest, *, health_check_only: bool = False, nested: bool = False,
            user_log: Optional[UserLog] = None) -> ExecutionResult:
    if manager.noop and health_check_only:
        raise CCMError("cannot set healthcheck only and noop mode at the same time")
    if manager.depth >= MAX_DEPTH:
        raise ManifestError(f"maximum apply depth of {MAX_DEPTH} exceeded")
    started = time.monotonic()
    ulog = user_log or manager.user_log
    if health_check_only:
        ulog = ulog.bind(healthcheck=True)
        ulog.info("Executing manifest health checks", manifest=manifest.source, resources=len(manifest.resources))
    else:
        ulog.info("Executing manifest", manifest=manifest.source, resources=len(manifest.resources))
    if not nested:
        manager.session.start_session(manifest.source)
        manager.apply_chain = [manifest.path]   # nested applies extend it (depth-limit messages)

    result = ExecutionResult()
    saved_log, saved_hc = manager.user_log, manager.health_check_only
    saved_cache, saved_batch = manager.run_cache, manager.write_batch
    manager.user_log = ulog
    manager.health_check_only = health_check_only or saved_hc
    if not nested:   # prefetching providers batch their status queries through it
        manager.run_cache = RunCache.for_manifest(manifest)
    batch = RunBatch.for_run(manager, manifest, health_check_only)   # first runs: one sync pass

    # what settle reads for every event, looked up once per run (none changes during it)
    session, events = manager.session, result.events
    noop, show = manager.noop, manager.show_diff
    publish = getattr(manager, "publish_registrations", None)
    stop_on_failure = not health_check_only and manifest.fail_on_error
    log_status = status_logger(ulog)   # log_event(ulog, ·), the logger's policy read once

    def settle(event: TransactionEvent, props: Properties, interrupted: bool) -> bool:
        """Publish, log and record one event; True when the run stops after it."""
        if (event.changed or event.failed) and not noop and manager.run_cache is not None:
            manager.run_cache.invalidate()   # it may have changed what was cached (even half-way)
        if publish is not None:   # before recording: a failed publish fails the resource
            publish(event, props)
        if not health_check_only or event.health_checks:
            log_status(event)
        if show:
            show_diff(ulog, event)
        kept: Any = event
        try:
            kept = session.record(event) or event
        except CCMError as exc:
            ulog.error("Could not save event", error=str(exc))
        events.append(kept)
        if interrupted:
            ulog.warn("Terminating manifest execution", reason=interrupt.message())
            return True
        if stop_on_failure and event.failed:
            ulog.warn("Terminating manifest execution due to failed resource")
            result.terminated = True
            return True
        return False

    def drain() -> bool:
        """Flush the batch (durable, renamed) and settle its held events in order."""
        assert batch is not None
        return any(settle(h.event, h.props, h.interrupted) for h in batch.flush(manifest.fail_on_error))

    # after the run-wide settings above: the flow looks them up once
    template_free = manifest.template_free   # nothing to render, so props need no copy either
    run = base.RunFlow(manager, health_check_only=health_check_only, template_free=template_free).run
    try:
        for entry in manifest.resources:
            if interrupt.signal_received is not None:   # no later resource starts
                result.interrupted = True
                break
            if batch is not None:
                admitted = batch.admits(entry)
                if not admitted and batch.pending and drain():
                    break
                manager.write_batch = batch.fs if admitted else None
            props = entry.props if template_free else entry.props.copy()   # rendering replaces values
            event = run(entry.spec, props)
            interrupted = interrupt.signal_received is not None
            if interrupted:
                result.interrupted = True
                if not any(interrupt.message() in e for e in event.errors):
                    event.fail(interrupt.message())
            if batch is None or batch.passes():
                if settle(event, props, interrupted):
                    break
            elif not batch.hold(event, props, interrupted) and drain():
                break
        if batch is not None and batch.pending:
            drain()
    except BaseException:
        if batch is not None:
            batch.discard()   # staged temp files removed, their targets untouched
        raise
    finally:
        manager.user_log = saved_log
        manager.health_check_only = saved_hc
        manager.run_cache, manager.write_batch = saved_cache, saved_batch
        manager.metrics.observe("manifest_apply", time.monotonic() - started, source=manifest.source)
    result.summary = manager.session.summary()
    return result
