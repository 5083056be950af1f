"""The manager: the only place that wires facts, data, environment, working directory,
noop, session store, runner, registry, metrics and logging together.

The CLI and the agent build one with ``build(...)`` and hand it work:

* ``ensure(type_name, raw_properties)`` -- one resource, validated exactly like a
  manifest resource, run, recorded;
* ``status(type_name, name)`` -- the observed state through the same provider selection
  and ``TypeLogic.status`` an apply uses;
* ``apply(source, noop=..., health_check_only=..., hiera=...)`` -- load a manifest
  completely, then run it (``load`` and ``execute`` are the two halves; ``execute`` takes
  the run's options: ``diff``, ``publisher``, ``quiet``, ``keep_events``);
* ``child(**overrides)`` -- a manager for a nested run or an agent worker: it shares the
  facts cache, runner, registry, metrics, publisher and session store and has its own
  noop, working directory, data and log.

Every run gets a ``ccm.model.run.Run`` of its own (``execute``, ``single_run``,
``run_child``): nothing the manager holds changes while it runs. Resources only see the
``ccm.model.manager`` contracts, through a ``ResourceContext``.

Lifetimes: facts are gathered once per manager family and refreshed on request
(``refresh_facts``); owner/group lookups are remembered for one run (cleared when a
top-level ``ensure`` or manifest run starts).
"""
from __future__ import annotations

import os
import time
from _thread import allocate_lock

from ccm.log import UserLogger, internal
from ccm.model.events import ResourceState, TransactionEvent
from ccm import tmplcache
from ccm.lazymap import LazyMapping, value_at
from ccm.model.manager import ChildRun, Metrics, UserLog
from ccm.model.resource import Properties
from ccm.model.run import NO_PUBLISHER, Publisher, Run, combine
from ccm.model.runner import CommandResult, CommandRunner
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

    from ccm.apply.engine import ExecutionResult
    from ccm.apply.manifest import Manifest
    from ccm.registry import Registry, TypeSpec
    from ccm.session import SessionStore

log = internal("ccm.manager")


class NoopMetrics:
    """Metrics sink used unless metrics were asked for (prometheus stays unimported)."""

    enabled = False

    def observe(self, metric: str, seconds: float, **labels: str) -> None:
        pass

    def inc(self, metric: str, amount: float = 1.0, **labels: str) -> None:
        pass

    def record_event(self, event: Any) -> None:
        pass


class DeferredRunner:
    """The default ``CommandRunner``: a ``ccm.runner.SubprocessRunner`` made at the first
    command, so that a run that starts none (a steady file manifest) never imports it and
    its ``signal``/``threading`` set-up (issue 16)."""

    __slots__ = ("_runner",)

    def __init__(self) -> None:
        self._runner: Optional[CommandRunner] = None

    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
            path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult:
        runner = self._runner
        if runner is None:
            from ccm.runner import SubprocessRunner

            runner = self._runner = SubprocessRunner()
        return runner.run(argv, cwd=cwd, env=env, timeout=timeout, path=path, secrets=secrets, stdin=stdin,
                          inherit_env=inherit_env)


_ABSENT = object()


class FactsCache:
    """Facts gathered on first use and kept until ``refresh`` (thread-safe).

    One instance is shared by a manager and all its children, so an agent's workers
    gather once and a worker can ask for fresh facts before a run.
    """

    def __init__(self, facts: Optional[Dict[str, Any]], extra: Mapping[str, Any],
                 metrics: Metrics) -> None:
        self._lock = allocate_lock()
        self._fixed = facts is not None      # given by the caller: never re-gathered
        self._facts = facts
        self._extra = dict(extra)
        self._metrics = metrics
        self._probed: Dict[Tuple[str, ...], Any] = {}   # probe answers until the next gather
        self._file_facts: Optional[Dict[str, Any]] = None

    def get(self) -> Dict[str, Any]:
        with self._lock:
            if self._facts is None:
                self._facts = self._gather()
            return self._facts

    def set(self, facts: Dict[str, Any]) -> None:
        with self._lock:
            self._facts = facts
            self._fixed = True

    def refresh(self) -> None:
        """Forget gathered facts; the next reader gathers again (given facts stay)."""
        with self._lock:
            self._probed, self._file_facts = {}, None
            if not self._fixed:
                self._facts = None

    def probe(self, path: Tuple[str, ...]) -> Any:
        """The fact at ``path`` (None where there is none), as the gathered facts would
        have it, without gathering when the layers the gather merges can tell: the
        ``--fact`` values over the file facts over the system's own cheap source
        (``ccm.facts.probe_system``). Anything else reads the gathered facts."""
        with self._lock:
            facts = self._facts
            if facts is None and path in self._probed:
                return self._probed[path]
        if facts is not None:
            return value_at(facts, path)
        known, value = self._probe_layers(path)
        if not known:
            return value_at(self.get(), path)
        with self._lock:
            self._probed[path] = value
        return value

    def _probe_layers(self, path: Tuple[str, ...]) -> Tuple[bool, Any]:
        from collections.abc import Mapping

        from ccm import facts as system

        if self._file_facts is None:
            self._file_facts = system.load_file_facts()
        for layer in (self._extra, self._file_facts):   # deep_merge's order: the later wins
            node: Any = layer
            for key in path:
                if not isinstance(node, Mapping):
                    return True, None   # a value here replaces the whole subtree: nothing at path
                if key not in node:
                    node = _ABSENT
                    break
                node = node[key]
            if node is _ABSENT:
                continue   # a lower layer decides
            if isinstance(node, (Mapping, list)):
                return False, None   # merged with the layers below: only the gather can tell
            return True, node
        return system.probe_system(path)

    def _gather(self) -> Dict[str, Any]:
        from ccm.data.merge import deep_merge
        from ccm.facts import gather

        started = time.monotonic()
        gathered = gather()
        self._metrics.observe("facts_gather", time.monotonic() - started)
        return deep_merge(gathered, self._extra) if self._extra else gathered


class Manager:
    def __init__(self, *, noop: bool = False, session_dir: Optional[str] = None,
                 facts: Optional[Dict[str, Any]] = None, extra_facts: Optional[Mapping[str, Any]] = None,
                 environ: Optional[Dict[str, str]] = None, working_dir: Optional[str] = None,
                 user_log: Optional[UserLogger] = None, runner: Optional[CommandRunner] = None,
                 registry: Optional["Registry"] = None, metrics: Any = None,
                 data: Optional[Dict[str, Any]] = None,
                 template_functions: Optional[Dict[str, Callable[..., Any]]] = None,
                 nats_context: str = "CCM", registration_stream: str = "REGISTRATION") -> None:
        from ccm.session import open_store

        self.noop = noop
        self.working_dir = working_dir
        self.user_log: UserLog = user_log or UserLogger()
        self.runner: CommandRunner = runner if runner is not None else DeferredRunner()
        if registry is None:
            from ccm.registry import default_registry

            registry = default_registry()
        self.registry: "Registry" = registry
        self.metrics: Any = metrics or NoopMetrics()
        self.session: "SessionStore" = open_store(session_dir)
        if self.metrics.enabled:   # a no-op sink needs no call per event
            self.session.listeners.append(self.metrics.record_event)
        self._facts_cache = FactsCache(facts, extra_facts or {}, self.metrics)
        self.environ = environ if environ is not None else {k: v for k, v in os.environ.items() if v}
        self._data: Dict[str, Any] = dict(data or {})
        self.external_data: Dict[str, Any] = {}
        # the caller's own template functions; with NATS's kvGet/registrations they make
        # ``template_functions``, built when a template first needs them
        self.extra_template_functions: Dict[str, Callable[..., Any]] = dict(template_functions or {})
        self._template_functions: Optional[Dict[str, Callable[..., Any]]] = None
        self.nats_context = nats_context
        self.registration_stream = registration_stream
        self._nats: List[Any] = []   # the one ccm.nats.connection.Connection, shared with children
        # hears every run of this manager and its children (``add_publisher``), with the
        # publisher a run is given (``execute``)
        self.publisher: Publisher = NO_PUBLISHER

    def child(self, *, noop: Optional[bool] = None, working_dir: Optional[str] = None,
              data: Optional[Mapping[str, Any]] = None, user_log: Optional[UserLog] = None) -> "Manager":
        """A manager sharing this one's facts cache, runner, registry, metrics, publisher,
        session, environment and template functions, with its own settings (each defaults
        to this manager's value)."""
        import copy   # nested runs and agent workers only

        kid = copy.copy(self)   # shares every collaborator by reference
        kid.noop = self.noop if noop is None else noop
        kid.working_dir = self.working_dir if working_dir is None else working_dir
        kid._data = copy.deepcopy(self._data) if data is None else dict(data)
        kid.user_log = self.user_log if user_log is None else user_log
        return kid

    def add_publisher(self, publisher: Publisher) -> None:
        """Let ``publisher`` hear every later run of this manager and of the children made
        after this call (the agent's registration publishing: set up once, before any run)."""
        self.publisher = combine(self.publisher, publisher)

    # --- facts and data ----------------------------------------------------------------

    def facts(self) -> Dict[str, Any]:
        return self._facts_cache.get()

    def facts_view(self) -> Mapping[str, Any]:
        """The facts, gathered only when something reads them (a new view per call, so a
        view taken after ``refresh_facts`` sees the fresh facts); ``probe`` reads a fact
        with a cheap source of its own without gathering (``FactsCache.probe``)."""
        return LazyMapping(self.facts, self._facts_cache.probe)

    def set_facts(self, facts: Dict[str, Any]) -> None:
        self._facts_cache.set(facts)

    def refresh_facts(self) -> None:
        """Gather the facts again on next use (for every manager sharing the cache)."""
        self._facts_cache.refresh()

    def data(self) -> Dict[str, Any]:
        return dict(self._data)

    def set_data(self, data: Mapping[str, Any]) -> None:
        if not self.external_data:
            self._data = dict(data)
            return
        from ccm.data.merge import deep_merge

        self._data = deep_merge(dict(data), self.external_data)

    # --- NATS ----------------------------------------------------------------------------

    def nats_connection(self) -> Any:
        """The manager's one NATS connection (lazy; a child manager shares its parent's)."""
        if not self._nats:
            from ccm.nats.connection import Connection

            self._nats.append(Connection(self.nats_context))
        return self._nats[0]

    def kv_loader(self, bucket: str, key: str) -> bytes:
        """Hiera ``kv://BUCKET/KEY`` sources, over the manager's connection."""
        from ccm.nats.kv import hiera_loader

        loaded: bytes = hiera_loader(self.nats_connection())(bucket, key)
        return loaded

    # --- templates ---------------------------------------------------------------------

    @property
    def template_functions(self) -> Dict[str, Callable[..., Any]]:
        """The NATS functions (``ccm.nats.functions``, over this manager), then the extra
        ones: made on first use, so a run without templates never imports them."""
        functions = self._template_functions
        if functions is None:
            from ccm.nats.functions import template_functions as nats_functions

            functions = self._template_functions = {**nats_functions(self), **self.extra_template_functions}
        return functions

    def template_function_names(self) -> FrozenSet[str]:
        """Every function a template may call here (checked when a manifest loads)."""
        from ccm.templates import CCM_FUNCTIONS

        return CCM_FUNCTIONS | frozenset(self.template_functions)

    def lazy_template_environment(self) -> Mapping[str, Any]:
        """An environment built (and facts gathered) only if a template or expression reads it
        (``ccm.tmplcache.environment``: with the template cache on, one value read alone)."""
        return tmplcache.environment(self.template_environment, self._data, self._facts_cache.probe,
                                     self.extra_template_functions)

    def template_environment(self) -> Dict[str, Any]:
        from ccm.templates import make_environment

        return make_environment(facts=self.facts(), data=self._data, environ=self.environ,
                                working_dir=self.working_dir, functions=self.template_functions)

    # --- work --------------------------------------------------------------------------

    def spec(self, type_name: str) -> "TypeSpec":
        return self.registry.spec(type_name)

    def prepare(self, type_name: str, raw: Mapping[str, Any],
                env: Optional[Mapping[str, Any]] = None) -> Properties:
        """Raw properties -> validated ``Properties``, exactly as a manifest resource is
        (``ccm.resources.properties.prepare``); raises ``ValidationError``."""
        from ccm.resources import properties as P

        return P.prepare(self.spec(type_name), raw, self.template_environment() if env is None else env,
                         known_functions=self.template_function_names)

    def ensure(self, type_name: str, raw_properties: Mapping[str, Any]) -> TransactionEvent:
        """Validate, run and record one resource (the event is returned, not logged)."""
        from ccm import interrupt

        props = self.prepare(type_name, raw_properties)
        begin_run()
        event = self.apply_resource(props)
        if interrupt.received() is not None and not any(interrupt.message() in e for e in event.errors):
            event.fail(interrupt.message())   # a SIGINT/SIGTERM/SIGHUP stopped it (ccm.interrupt)
        self.record(event)
        return event

    def status(self, type_name: str, name: str, *, provider: Optional[str] = None) -> ResourceState:
        """The observed state of one resource, through the provider an apply would use
        (or the forced ``provider``)."""
        from ccm.resources import base

        return base.observe(self, self.spec(type_name), name, provider=provider)

    def single_run(self, *, health_check_only: bool = False) -> Run:
        """The run of one resource outside a manifest: this manager's noop and log, no
        prefetch cache, every file written at once, no publisher."""
        from ccm.fsafe import DIRECT

        return Run(log=self.user_log, sink=DIRECT, noop=self.noop, health_check_only=health_check_only)

    def apply_resource(self, props: Properties, *, health_check_only: bool = False) -> TransactionEvent:
        """Run one already-validated resource through the shared flow (not recorded)."""
        from ccm.resources import base

        return base.run(self, self.spec(props.type_name), props, self.single_run(health_check_only=health_check_only))

    def load(self, source: str, *, hiera: Optional[str] = None,
             overriding_data: Optional[Mapping[str, Any]] = None, deny_apply: bool = False,
             checksum: Optional[str] = None, text: Optional[str] = None) -> "Manifest":
        """Resolve a manifest completely (sets this manager's data and working directory);
        ``checksum`` (``sha256:HEX``) must match the bundle or manifest file; ``text``: the
        local manifest file's content as the caller read it (the agent's last good copy)."""
        from ccm.apply.manifest import load_manifest

        return load_manifest(source, self, hiera_source=hiera, overriding_data=overriding_data,
                             deny_apply=deny_apply, checksum=checksum, plan_cache=True, text=text)

    def execute(self, manifest: "Manifest", *, health_check_only: bool = False, noop: Optional[bool] = None,
                diff: bool = False, publisher: Optional[Publisher] = None, quiet: bool = False,
                keep_events: Optional[bool] = None) -> "ExecutionResult":
        """Run a loaded manifest in declaration order, recording every event, in a run of
        its own. The run's options: ``noop`` (default: this manager's); ``diff``: print the
        unified diff of each file content change (noop: the one a real run would make); ``publisher``: hears this run
        (with the manager's own, ``add_publisher``); ``quiet``: the run logs nothing (its
        events still go to the session and the publishers); ``keep_events``: when given,
        whether the session store keeps each recorded event whole or its ``EventRecord``
        only (a store setting: it stays for the store's later runs)."""
        from ccm.apply.engine import execute, start_run

        begin_run()
        log = self.user_log
        if quiet:
            log = log.bind()
            log.quiet = True   # a copy of the manager's log, for this run only
        if keep_events is not None:
            self.session.keep_events = keep_events
        run = start_run(self, manifest, log=log, noop=self.noop if noop is None else noop,
                        health_check_only=health_check_only, diff=diff,
                        publisher=combine(self.publisher, publisher))
        return execute(self, manifest, run)

    def apply(self, source: str, *, noop: Optional[bool] = None, health_check_only: bool = False,
              hiera: Optional[str] = None) -> "ExecutionResult":
        """Load ``source`` and run it; ``noop`` (when given) applies to this run only."""
        runner = self if noop is None or noop == self.noop else self.child(noop=noop)
        manifest = runner.load(source, hiera=hiera)
        try:
            return runner.execute(manifest, health_check_only=health_check_only)
        finally:
            manifest.cleanup()

    def run_child(self, parent: Run, path: str, *, noop: bool, health_check_only: bool,
                  data: Optional[Mapping[str, Any]], deny_apply: bool, label: str) -> ChildRun:
        """A nested manifest of ``parent``'s run: resolved by a child manager (its own data
        and working directory) and run one level deeper, in the same session
        (``ccm.model.manager.NestedApply``)."""
        import copy

        from ccm.apply.engine import execute, start_run
        from ccm.model.errors import CCMError

        log = parent.log.bind(manifest=label)
        kid = self.child(noop=parent.noop or noop, user_log=log)
        overriding = copy.deepcopy(self._data) if data is None else data
        try:
            manifest = kid.load(path, overriding_data=overriding, deny_apply=deny_apply)
        except CCMError as exc:
            return ChildRun(load_error=str(exc))
        try:
            run = start_run(kid, manifest, log=log, noop=noop, health_check_only=health_check_only, parent=parent,
                            path=path)
            result = execute(kid, manifest, run)
        except CCMError as exc:
            return ChildRun(resource_count=len(manifest.resources), run_error=str(exc))
        finally:
            manifest.cleanup()
        return ChildRun(resource_count=len(manifest.resources), events=list(result.events))

    def record(self, event: TransactionEvent) -> None:
        self.session.record(event)

    def log_event(self, event: TransactionEvent, user_log: Optional[UserLog] = None) -> None:
        from ccm.report import log_event

        log_event(user_log or self.user_log, event)


def begin_run() -> None:
    """Start of a top-level run: forget per-run caches (owner/group lookups)."""
    from ccm.resources.ownership import clear_id_cache

    clear_id_cache()


def build(**kwargs: Any) -> Manager:
    return Manager(**kwargs)

