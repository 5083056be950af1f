"""The per-run contracts: ``Run`` (what holds for one run only), ``Publisher`` (who hears a
run's events and its end) and ``RunSink`` (where the run's file writes go).

What: the manager makes one ``Run`` for each manifest run (``Manager.execute``, with the
engine's ``ccm.apply.engine.start_run``) and for each single resource (``Manager.ensure``,
``apply_resource``, ``status``), and hands it down: the engine and the shared flow
(``ccm.resources.base.RunFlow``) read every per-run setting from it, never from the
long-lived manager. A nested manifest runs with ``Run.child`` of its parent's run: one
level deeper, the same cache, diff setting and publisher, its own sink.

Guarantees: a ``Run`` is not changed once made (the flow reads its fields once per run);
nothing of one run stays on the manager for the next (an agent's cycles, a nested run and
its parent never see each other's settings). ``Publisher.finished`` is called once per
top-level run; the events of nested runs reach the same publisher as their parent's.

Not: an implementation. The engine's batch (``ccm.apply.batch.RunBatch``) and the direct
sink (``ccm.fsafe.DirectWrites``) implement ``RunSink``; registration publishing
(``ccm.registration.publish.RegistrationPublisher``) is one ``Publisher``.
"""
from __future__ import annotations

from ccm.model.provider import WriteSink

from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, List, Optional, Sequence, Tuple

    from ccm.model.events import RecordedEvent, SessionSummary, TransactionEvent
    from ccm.model.manager import UserLog
    from ccm.model.provider import RunCache
    from ccm.model.resource import Properties


class RunResult(Protocol):
    """What a finished run produced (``ccm.apply.engine.ExecutionResult``)."""

    events: List[RecordedEvent]
    summary: SessionSummary
    terminated: bool             # fail_on_error stopped the run at a failed resource
    interrupted: bool            # a SIGINT/SIGTERM/SIGHUP stopped it (ccm.interrupt)


class Publisher:
    """Hears the events of a run and its end; this base hears nothing (the default).

    ``event(run, event, props)``: every resource's event of the run and of its nested runs
    (``run`` is the one the resource ran in), after the flow and before the event is logged
    and recorded, so a publisher may still fail it (``event.fail``): a failed registration
    fails its resource. Called only when the class declares ``hears_events``.

    ``finished(run, result)``: once per top-level run, after its last event was recorded and
    the summary made, also when the run was interrupted or stopped by ``fail_on_error``;
    not when the run raised. Nested runs fold into their parent's: no call of their own.
    """

    # True when ``event`` does something: the engine skips the call per event otherwise
    hears_events = False

    def event(self, run: Run, event: TransactionEvent, props: Properties) -> None:
        pass

    def finished(self, run: Run, result: RunResult) -> None:
        pass


NO_PUBLISHER = Publisher()


class Publishers(Publisher):
    """Several publishers as one, called in the order given (an exception of one is not
    caught: a publisher that must never fail the run catches its own)."""

    def __init__(self, members: Sequence[Publisher]) -> None:
        self.members: Tuple[Publisher, ...] = tuple(members)
        self.hears_events = any(p.hears_events for p in self.members)
        self._hearing = tuple(p for p in self.members if p.hears_events)

    def event(self, run: Run, event: TransactionEvent, props: Properties) -> None:
        for publisher in self._hearing:
            publisher.event(run, event, props)

    def finished(self, run: Run, result: RunResult) -> None:
        for publisher in self.members:
            publisher.finished(run, result)


def combine(*publishers: Optional[Publisher]) -> Publisher:
    """One publisher for all of ``publishers`` (None and the no-op default left out; a
    composite's members are taken one by one)."""
    members: List[Publisher] = []
    for publisher in publishers:
        if isinstance(publisher, Publishers):
            members += publisher.members
        elif publisher is not None and publisher is not NO_PUBLISHER:
            members.append(publisher)
    if not members:
        return NO_PUBLISHER
    return members[0] if len(members) == 1 else Publishers(members)


class Settled(Protocol):
    """An event a sink held until its writes were committed, to settle now, in order."""

    event: TransactionEvent
    props: Properties
    interrupted: bool


class RunSink(WriteSink, Protocol):
    """The run's write sink: providers write through it (``WriteSink``), the engine tells
    it each resource and event and settles what it hands back.

    Per resource the engine calls ``admit(entry)`` before it runs and ``take(...)`` with
    its event after; ``commit()`` at the end of the run; ``discard()`` when the run raised.
    A sink that batches nothing admits everything, holds nothing and commits nothing.
    """

    @property
    def pending(self) -> Sequence[Settled]:
        """The events held now, in order (empty: nothing to commit)."""
        ...

    def admit(self, entry: Any) -> bool:
        """Whether the resource of ``entry`` may run while the held events wait; False:
        the engine first settles what ``commit()`` hands back (when something is held)."""
        ...

    def take(self, event: TransactionEvent, props: Properties, interrupted: bool) -> Optional[Sequence[Settled]]:
        """The event of the resource just run. None: nothing is held, the engine settles
        ``event`` now; else the events to settle now, in order (empty while held)."""
        ...

    def commit(self) -> Sequence[Settled]:
        """Make every held write durable and in place; the held events to settle, in
        order (with ``fail_on_error``, up to the first failed one)."""
        ...

    def discard(self) -> None:
        """Drop every held write (targets untouched) and event."""
        ...


class Run:
    """Everything that holds for one run and only for it.

    ``noop``, ``health_check_only``: the run's modes. ``log``: the run's user log (bound
    to the manifest of a nested run and to ``healthcheck`` in health-check-only runs).
    ``cache``: the prefetch cache of the top-level run (None for single resources).
    ``sink``: where the run's file writes go. ``diff``: print the unified diff of each
    file content change (in noop: the one a real run would make). ``publisher``: hears the events and the end.
    ``depth``/``chain``: nesting level and the manifest paths from the top-level run to
    this one. ``source``: the manifest as logs show it ("" for a single resource).
    ``parent``: the run a nested run runs in (None at the top). ``bundles``: (temp dir,
    bundle as shown) of each bundle this run's manifests came from, so that errors name
    the bundle and member (``ccm.remote.name_in_bundle``), never the temp dir.
    """

    __slots__ = ("noop", "health_check_only", "log", "cache", "sink", "diff", "publisher", "depth", "chain",
                 "source", "parent", "bundles")

    def __init__(self, *, log: UserLog, sink: RunSink, noop: bool = False, health_check_only: bool = False,
                 cache: Optional[RunCache] = None, diff: bool = False, publisher: Publisher = NO_PUBLISHER,
                 depth: int = 0, chain: Tuple[str, ...] = (), source: str = "",
                 parent: Optional[Run] = None, bundles: Tuple[Tuple[str, str], ...] = ()) -> None:
        self.noop = noop
        self.health_check_only = health_check_only
        self.log = log
        self.cache = cache
        self.sink = sink
        self.diff = diff
        self.publisher = publisher
        self.depth = depth
        self.chain = chain
        self.source = source
        self.parent = parent
        self.bundles = bundles

    @property
    def top(self) -> bool:
        """A top-level run (not nested in another)."""
        return self.parent is None

    def child(self, path: str, *, noop: bool, health_check_only: bool, log: UserLog, sink: RunSink,
              source: str, bundles: Tuple[Tuple[str, str], ...] = ()) -> Run:
        """The run of a nested manifest at ``path``: one level deeper, its modes switched
        on where this run's are (never off), this run's cache, diff setting, publisher and
        bundles (and the child's own ``bundles``)."""
        return Run(log=log, sink=sink, noop=self.noop or noop,
                   health_check_only=self.health_check_only or health_check_only, cache=self.cache, diff=self.diff,
                   publisher=self.publisher, depth=self.depth + 1, chain=self.chain + (path,), source=source,
                   parent=self, bundles=self.bundles + bundles)

    def __repr__(self) -> str:
        return (f"Run(source={self.source!r}, noop={self.noop}, health_check_only={self.health_check_only}, "
                f"depth={self.depth})")
