"""Executing a resolved manifest: strictly in declaration order, one event per resource,
each recorded before the next starts (so ``require``/``subscribe`` see it).

Everything that holds for one run is its ``ccm.model.run.Run`` (``start_run``), never the
manager. The run's write sink decides when an event may be settled (published, logged,
recorded): at once, or, for file writes a first run batches, after the sink committed
them; the engine only hands the sink each resource and event and settles what it hands
back.
"""
from __future__ import annotations

import time

from ccm import interrupt
from ccm.apply.batch import RunBatch
from ccm.apply.manifest import MAX_DEPTH, Manifest
from ccm.apply.runcache import RunCache
from ccm.fsafe import DIRECT
from ccm.log import internal
from ccm.model.errors import CCMError, ManifestError
from ccm.model.events import SessionSummary, TransactionEvent
from ccm.model.manager import RunManager, UserLog
from ccm.model.resource import Properties
from ccm.model.run import NO_PUBLISHER, Publisher, Run
from ccm.model.value import ValueObject
from ccm.remote import name_in_bundle
from ccm.report import status_logger
from ccm.resources import base
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Tuple

    from ccm.model.events import RecordedEvent
    from ccm.model.run import RunSink, Settled

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
    """``--diff``: the unified diff of a file content change (noop: the change a real run
    would make; a real run: the change it made), capped in size; never for binary content,
    and for sensitive content (no diff is computed then) one line saying it was withheld."""
    state = event.status
    if state is None or ulog.quiet or not (event.noop or event.changed):
        return
    change = state.internal.get("content_change")
    if not change:
        return
    import sys

    if change.get("sensitive"):
        sys.stdout.write(f"diff of {event.ref} withheld: its content holds @sensitive data\n")
        sys.stdout.flush()
        return
    lines = change.get("diff")
    if not lines:
        return
    shown = [ln.rstrip("\n") for ln in lines[:DIFF_MAX_LINES]]
    shown = [ln if len(ln) <= DIFF_MAX_LINE_CHARS else ln[:DIFF_MAX_LINE_CHARS] + "..." for ln in shown]
    if len(lines) > DIFF_MAX_LINES:
        shown.append(f"... diff cut at {DIFF_MAX_LINES} of {len(lines)} lines")
    sys.stdout.write("\n".join(shown) + "\n")
    sys.stdout.flush()


def start_run(manager: RunManager, manifest: Manifest, *, log: UserLog, noop: bool, health_check_only: bool = False,
              diff: bool = False, publisher: Publisher = NO_PUBLISHER, parent: Optional[Run] = None,
              path: str = "") -> Run:
    """The ``Run`` of ``manifest``: at the top (``Manager.execute``) with a new prefetch
    cache; nested (``Manager.run_child``: ``parent`` and the child's ``path``) one level
    below ``parent``, its modes switched on where the parent's are. The write sink batches
    a first run's file writes (``RunBatch.for_run``) or writes each at once. ``log`` is
    bound to ``healthcheck`` in a health-check-only run."""
    if parent is not None:
        noop, health_check_only = parent.noop or noop, parent.health_check_only or health_check_only
    if health_check_only:
        log = log.bind(healthcheck=True)
    batch = RunBatch.for_run(manifest, manager.working_dir, noop=noop, health_check_only=health_check_only)
    sink: RunSink = DIRECT if batch is None else batch
    bundles = ((manifest.tmpdir, manifest.source),) if manifest.tmpdir else ()
    if parent is not None:   # a child of a bundle shown as its member (logs, metrics), not a temp path
        source = manifest.source
        for tmpdir, shown in parent.bundles:
            source = name_in_bundle(source, tmpdir, shown)
        return parent.child(path or manifest.path, noop=noop, health_check_only=health_check_only, log=log,
                            sink=sink, source=source, bundles=bundles)
    return Run(log=log, sink=sink, noop=noop, health_check_only=health_check_only,
               cache=RunCache.for_manifest(manifest), diff=diff, publisher=publisher, chain=(manifest.path,),
               source=manifest.source, bundles=bundles)


def _settler(manager: RunManager, run: Run, manifest: Manifest,
             result: ExecutionResult) -> Callable[[TransactionEvent, Properties, bool], bool]:
    """``settle(event, props, interrupted)``: publish, log and record one event of ``run``
    (as it comes, or as the sink hands it back); True when the run stops after it."""
    # what settling reads for every event, looked up once per run (none changes during it)
    record, events, ulog = manager.session.record, result.events, run.log
    cache = None if run.noop else run.cache   # noop changes nothing that was cached
    publish = run.publisher.event if run.publisher.hears_events else None
    log_status = status_logger(ulog)   # log_event(ulog, ·), the logger's policy read once
    health_check_only, show = run.health_check_only, run.diff
    stop_on_failure = not health_check_only and manifest.fail_on_error

    bundles = run.bundles

    def settle(event: TransactionEvent, props: Properties, interrupted: bool) -> bool:
        if bundles and event.errors:
            _name_in_bundles(event, bundles)
        if cache is not None and (event.changed or event.failed):
            cache.invalidate()   # it may have changed what was cached (even half-way)
        if publish is not None:   # before recording: a failed publish fails the resource
            publish(run, event, props)
        if not health_check_only or event.health_checks:
            log_status(event)
        if show:
            show_diff(ulog, event)
        kept: Any = event
        try:
            kept = record(event) or event
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

    return settle


def _name_in_bundles(event: TransactionEvent, bundles: Sequence[Tuple[str, str]]) -> None:
    """The errors of a resource of a bundle name the bundle and member, not the temp dir."""
    for tmpdir, shown in bundles:
        event.errors = [name_in_bundle(e, tmpdir, shown) for e in event.errors]


def execute(manager: RunManager, manifest: Manifest, run: Run) -> ExecutionResult:
    """Run ``manifest``'s resources in declaration order in ``run`` (``start_run``); the
    top-level run's publisher hears its end."""
    if run.noop and run.health_check_only:
        raise CCMError("cannot set healthcheck only and noop mode at the same time")
    if run.depth >= MAX_DEPTH:
        raise ManifestError(f"maximum apply depth of {MAX_DEPTH} exceeded")
    started = time.monotonic_ns()
    message = "Executing manifest health checks" if run.health_check_only else "Executing manifest"
    run.log.info(message, manifest=run.source, resources=len(manifest.resources))
    if run.top:
        manager.session.start_session(manifest.source)
    result = ExecutionResult()
    try:
        _run_resources(manager, manifest, run, result)
    except BaseException:
        run.sink.discard()   # held temp files removed, their targets untouched
        raise
    finally:
        manager.metrics.observe("manifest_apply", (time.monotonic_ns() - started) / 1e9, source=run.source)
    result.summary = summary = manager.session.summary()
    if run.top:
        _wall_time(summary, time.monotonic_ns() - started)
        run.publisher.finished(run, result)
    return result


def _wall_time(summary: SessionSummary, elapsed_ns: int) -> None:
    """The run's ``Run Time`` is its wall time, interrupted or not: the session's own
    reckoning (first to last event timestamp, upstream's) leaves out the last resource,
    so a run of one 140 ms resource showed ``0s`` and one interrupted after 3.6 s ``12ms``."""
    summary.total_duration_ns = max(0, elapsed_ns)
    if summary.start_time_ns:
        summary.end_time_ns = max(summary.end_time_ns, summary.start_time_ns + summary.total_duration_ns)


def _run_resources(manager: RunManager, manifest: Manifest, run: Run, result: ExecutionResult) -> None:
    """Each resource through the flow, its event settled as the sink allows; stops at a
    signal, or where settling says so."""
    settle = _settler(manager, run, manifest, result)

    def settle_all(held: Sequence[Settled]) -> bool:
        return any(settle(h.event, h.props, h.interrupted) for h in held)

    sink = run.sink
    template_free = manifest.template_free   # nothing to render, so props need no copy either
    flow = base.RunFlow(manager, run, template_free=template_free).run
    for entry in manifest.resources:
        if interrupt.signal_received is not None:   # no later resource starts
            result.interrupted = True
            break
        if not sink.admit(entry) and sink.pending and settle_all(sink.commit()):   # held events settle first
            break
        props = entry.props if template_free else entry.props.copy()   # rendering replaces values
        event = flow(entry.spec, props)
        interrupted = interrupt.signal_received is not None
        if interrupted:
            result.interrupted = True
            if not any(interrupt.message() in e for e in event.errors):
                event.fail(interrupt.message())
        held = sink.take(event, props, interrupted)   # None: nothing held, settle it now
        stop = settle(event, props, interrupted) if held is None else settle_all(held)
        if stop:
            break
    settle_all(sink.commit())


def _refs_of(entry: Any) -> Sequence[str]:
    props = entry.props
    refs = [props.resource_id]
    if props.alias:
        refs.append(f"{props.type_name}#{props.alias}")
    return refs


def _listed(entry: Any, key: str) -> List[str]:
    value = entry.props.values.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def select_resources(manifest: Manifest, refs: Sequence[str]) -> List[Any]:
    """The resources a re-apply of ``refs`` (``type#name``, the agent's drift watch) runs,
    in declaration order: those resources, every resource that subscribes to one that
    runs (their refresh, as a full run would do it), and every resource one that runs
    requires (so its ``require`` gate finds their events, as in a full run)."""
    entries = list(manifest.resources)
    wanted = set(refs)
    chosen = [False] * len(entries)
    changed = True
    while changed:
        changed = False
        for i, entry in enumerate(entries):
            if chosen[i]:
                continue
            own = _refs_of(entry)
            if any(r in wanted for r in own) or any(r in wanted for r in _listed(entry, "subscribe")):
                chosen[i] = changed = True
                wanted.update(own)
                wanted.update(_listed(entry, "require"))
    return [entry for i, entry in enumerate(entries) if chosen[i]]
