"""The agent: one scheduler, one apply loop, one worker per manifest source.

What: ``Agent(cfg, log).run()`` keeps the host converged until ``stop()``.

* One scheduler thread is the only place anything is applied: priority applies
  requested by workers (coalesced per worker), the scheduled run every ``interval``,
  health-check runs every ``health_check_interval`` (CRITICAL queues a remediation
  apply after *all* checks finished), all under ``apply_lock`` so two manifests never
  apply at once and checks never interleave with applies.
* Facts are refreshed at most every 2 minutes; external data is resolved on every
  cycle; both retry with jittered back-off and fall back to the last good value. No
  external data yet means this cycle applies nothing (and says so), never a hang.
* The manifest set loop (``ccm.agent.manifest_set``) runs in its own thread every
  ``manifest_set.interval`` and on ``reload()`` (SIGHUP), and diffs the running workers
  by name on every pass.
Not: signal handling or process exit (``ccm.cli.agent_cmd``).
"""
from __future__ import annotations

import os
import threading
import time

from ccm.agent import runner, timing
from ccm.agent.config import AgentConfig
from ccm.agent.manifest_set import Member, SetError, SetLoader
from ccm.agent.sources import ObjectStore, prepare_cache_dir
from ccm.agent.worker import Worker
from ccm.log import UserLogger
from ccm.model.errors import CCMError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional


class Agent:
    def __init__(self, cfg: AgentConfig, log: UserLogger, *, nats_context: Optional[str] = None):
        self.cfg = cfg
        self.log = log
        self.nats_context = nats_context or cfg.nats_context
        self.stop_event = threading.Event()
        self.apply_lock = threading.RLock()
        self._wake = threading.Condition()
        self._woken = False
        self._reload = threading.Event()
        self._refresh_data_now = False
        self._workers_lock = threading.Lock()
        self.static: Dict[str, Worker] = {}
        self.members: Dict[str, Worker] = {}
        self.facts: Optional[Dict[str, Any]] = None
        self._facts_at: Optional[float] = None
        self.data: Optional[Dict[str, Any]] = None
        self._data_ok = not cfg.external_data_url
        self.started = time.time()
        self.metrics: Any = self._metrics()
        self.environ = {k: v for k, v in os.environ.items() if v}
        self._bridge: Any = None
        self.reporter: Any = None   # ccm.fleet.publish.ReportPublisher when cfg.report is set
        self.root: Any = None      # the manager every worker's manager is a child of
        self.set_loader: Optional[SetLoader] = None
        if cfg.manifest_set is not None:
            self.set_loader = SetLoader(cfg.manifest_set, cache_dir=cfg.cache_dir,
                                        object_bytes=lambda src: self.bridge().object_bytes(src))
        self.monitor: Any = None
        self._threads: List[threading.Thread] = []
        self.health_runs = 0
        self.scheduled_runs = 0

    # --- collaborators ----------------------------------------------------------------

    def _metrics(self) -> Any:
        if self.cfg.monitor_port:
            from ccm.metrics import Metrics

            return Metrics()
        from ccm.manager import NoopMetrics

        return NoopMetrics()

    def bridge(self) -> Any:
        if self._bridge is None:
            from ccm.agent.natsbridge import NatsBridge

            self._bridge = NatsBridge(lambda: self.root)
        return self._bridge

    def object_store(self) -> ObjectStore:
        store: ObjectStore = self.bridge().object_store()
        return store

    def new_manager(self, log: UserLogger) -> Any:
        return runner.worker_manager(self.root, log)

    def validate(self, path: str) -> None:
        """Resolve a candidate bundle with the current facts and data (nothing runs)."""
        manager = self.new_manager(self.log.bind(validate=True))
        manifest = runner.load(manager, path, self.data)
        manifest.cleanup()

    def workers(self) -> List[Worker]:
        with self._workers_lock:
            return list(self.static.values()) + list(self.members.values())

    def wake(self) -> None:
        with self._wake:
            self._woken = True
            self._wake.notify_all()

    # --- control (any thread, signal handlers included) ------------------------------

    def stop(self) -> None:
        self.stop_event.set()
        self._reload.set()
        self.wake()

    def reload(self) -> None:
        """SIGHUP: re-read the manifest set and external data now."""
        self._refresh_data_now = True
        self._reload.set()
        self.wake()

    # --- life cycle -------------------------------------------------------------------

    def start(self) -> None:
        from ccm.model.durations import go_duration_seconds

        cfg = self.cfg
        self.log.warn("Starting agent", interval=go_duration_seconds(cfg.interval),
                      health_interval=go_duration_seconds(cfg.health_check_interval or 0),
                      manifests=len(cfg.manifests), manifest_set=self.set_loader.shown if self.set_loader else "")
        prepare_cache_dir(cfg.cache_dir)
        if cfg.monitor_port:
            from ccm.agent.monitor import serve

            try:
                self.monitor = serve(self, cfg.monitor_port, cfg.monitor_address)
            except OSError as exc:
                raise CCMError(f"cannot serve monitor_port {cfg.monitor_port} on {cfg.monitor_address}: "
                               f"{exc.strerror or exc}") from None
            self.log.info("Serving metrics and status", address=cfg.monitor_address,
                          port=self.monitor.server_address[1])
        self.root = runner.root_manager(environ=self.environ, metrics=self.metrics, user_log=self.log,
                                        nats_context=self.nats_context)
        if cfg.registration:
            try:
                self.bridge().enable_registration(self.root, cfg.registration)
            except CCMError as exc:
                self.log.error("Registration publishing disabled", error=str(exc))
        if cfg.report is not None:
            from ccm.fleet.publish import ReportPublisher

            self.reporter = ReportPublisher(cfg.report.publisher, context=self.nats_context, labels=cfg.report.labels,
                                            warn=lambda line: self.log.warn(line))
        for source in cfg.manifests:
            self.static[source] = Worker(self, source, watch=cfg.watch)
        with self.apply_lock:
            self.refresh_facts()
            self.refresh_data()
        for w in self.workers():
            w.start()
        self._spawn(self._scheduler, "ccm-scheduler")
        if self.set_loader is not None:
            self._spawn(self._set_loop, "ccm-manifest-set")

    def _spawn(self, target: Any, name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def shutdown(self, timeout: float = 12.0) -> bool:
        """Stop, wait for the running resource to finish; True when everything ended."""
        self.stop()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        clean = not any(t.is_alive() for t in self._threads)
        for w in self.workers():
            w.stop()
        for w in self.workers():
            w.join(max(0.0, min(1.0, deadline - time.monotonic())))
        if self.monitor is not None:
            self.monitor.shutdown()
            self.monitor.server_close()
        if self._bridge is not None:
            self._bridge.close()
        if self.reporter is not None:
            self.reporter.close()
        self.log.info("Runner stopped")
        return clean

    # --- facts and data ---------------------------------------------------------------

    def refresh_facts(self) -> None:
        floor = timing.scaled(timing.MIN_FACT_INTERVAL)
        if self._facts_at is not None and time.monotonic() - self._facts_at < floor:
            return
        from ccm.facts import gather

        started = time.monotonic()
        previous = self.facts

        def failed(attempt: int, exc: Exception) -> None:
            self.metrics.inc("agent_facts_resolve_error")
            self.log.error("Could not gather facts", attempt=attempt, error=str(exc))

        try:
            self.facts = timing.retry(gather, stop=self.stop_event, max_tries=timing.MAX_TRIES_BEFORE_FALLBACK,
                                      on_error=failed)
            self._facts_at = time.monotonic()
            self.root.set_facts(self.facts)   # shared by every worker's manager
        except Exception:
            if previous is not None:
                self.log.warn("Using previously gathered facts")
        finally:
            self.metrics.observe("agent_facts_resolve", time.monotonic() - started)

    def _resolve_data(self) -> Dict[str, Any]:
        from ccm.data.sources import resolve_source

        url = self.cfg.external_data_url
        kv_loader = self.bridge().kv_loader() if url.startswith("kv://") else None
        result = resolve_source(url, self.facts or {}, kv_loader=kv_loader, validate=False)
        if not result.data:
            raise ValidationError("empty external data, cannot continue")
        return dict(result.data)

    def refresh_data(self) -> bool:
        """Resolve external data; False when there is none to apply with."""
        self._refresh_data_now = False
        url = self.cfg.external_data_url
        if not url:
            return True
        from ccm.data.sources import source_name

        shown = source_name(url)
        started = time.monotonic()

        def failed(attempt: int, exc: Exception) -> None:
            self.metrics.inc("agent_data_resolve_error", url=shown)
            self.log.error("Could not resolve external data", url=shown, attempt=attempt, error=str(exc))

        try:
            self.data = timing.retry(self._resolve_data, stop=self.stop_event,
                                     max_tries=timing.MAX_TRIES_BEFORE_FALLBACK, on_error=failed)
            self._data_ok = True
        except Exception:
            if self._data_ok:
                self.log.warn("Using previously resolved external data", url=shown)
        finally:
            self.metrics.observe("agent_data_resolve", time.monotonic() - started)
        return self._data_ok

    # --- the scheduler ----------------------------------------------------------------

    def _scheduler(self) -> None:
        interval = self.cfg.interval
        hc = self.cfg.health_check_interval
        next_apply = time.monotonic() + interval
        next_health = time.monotonic() + hc if hc else None
        while not self.stop_event.is_set():
            with self._wake:
                deadline = min(next_apply, next_health) if next_health else next_apply
                if not self._woken:
                    self._wake.wait(max(0.0, deadline - time.monotonic()))
                self._woken = False
            if self.stop_event.is_set():
                break
            try:
                if self._refresh_data_now:
                    with self.apply_lock:
                        self.refresh_data()
                self._priority_applies()
                now = time.monotonic()
                if next_health is not None and hc and now >= next_health:
                    self.run_health_checks()
                    next_health = max(next_health + hc, time.monotonic())
                now = time.monotonic()
                if now >= next_apply:
                    self.scheduled_run()
                    next_apply = max(next_apply + interval, time.monotonic())
            except Exception as exc:  # the one loop must never die
                self.log.error("Scheduler error", error=f"{type(exc).__name__}: {exc}")
                self.stop_event.wait(1.0)

    def _priority_applies(self) -> None:
        for w in self.workers():
            if self.stop_event.is_set():
                return
            if w.stopped:
                continue
            if not w.trigger.take():
                self._drift_apply(w)
                continue
            with self.apply_lock:
                self.refresh_facts()
                if not self.refresh_data():
                    self.log.error("No external data resolved yet, not applying", manifest=w.label)
                    continue
                w.run(force=True)

    def _drift_apply(self, w: Worker) -> None:
        """The drift watch's re-apply of what changed, with the facts and data a scheduled
        run would use (the last good ones: a drift repair never waits for a refresh)."""
        if w.drift is None or not self._data_ok:
            return
        with self.apply_lock:
            w.run_drift()

    def scheduled_run(self) -> None:
        with self.apply_lock:
            workers = [w for w in self.workers() if not w.stopped]
            self.log.info("Starting scheduled run", workers=len(workers))
            self.refresh_facts()
            if not self.refresh_data():
                self.log.error("No external data resolved yet, not applying")
                return
            for w in workers:
                if self.stop_event.is_set():
                    break
                w.run()
            self.scheduled_runs += 1
            self.log.info("Completed scheduled run")

    def run_health_checks(self) -> None:
        critical: List[Worker] = []
        started = time.monotonic()
        if not self._data_ok:   # checks resolve the manifest too; without its data they would lie
            self.log.error("No external data resolved yet, not running health checks")
            return
        with self.apply_lock:
            workers = [w for w in self.workers() if not w.stopped]
            for w in workers:
                if self.stop_event.is_set():
                    break
                summary = w.run(health_check_only=True)
                if summary is not None and summary.health_check_critical_count > 0:
                    w.log.error("Healthcheck reported critical, triggering apply to remediate",
                                critical=summary.health_check_critical_count)
                    self.metrics.inc("agent_healthcheck_remediations", manifest=w.label)
                    critical.append(w)
            self.health_runs += 1
        self.metrics.observe("agent_healthcheck", time.monotonic() - started,
                             manifests=",".join(w.label for w in workers))
        for w in critical:   # only after every check finished
            w.trigger.request()
        if critical:
            self.wake()

    # --- the manifest set loop --------------------------------------------------------

    def _set_loop(self) -> None:
        assert self.set_loader is not None and self.cfg.manifest_set is not None
        while not self.stop_event.is_set():
            self._reload.clear()
            self.set_pass()
            self._reload.wait(self.cfg.manifest_set.interval)

    def set_pass(self) -> None:
        """Load the set and bring the running members to it (diff by name, every pass)."""
        assert self.set_loader is not None
        try:
            current, changed = self.set_loader.load()
        except SetError as exc:
            self.log.error("Could not load the manifest set, keeping the last good one", error=str(exc))
            return
        if changed:
            self.log.info("Loaded manifest set", members=len(current.members), revision=current.revision)
        self._diff(current.by_name())

    def _diff(self, desired: Mapping[str, Member]) -> None:
        started: List[Worker] = []
        with self._workers_lock:
            for name in [n for n in self.members if n not in desired]:
                gone = self.members.pop(name)
                gone.stop("removed from the manifest set")
                gone.log.info("Stopped: removed from the manifest set")
            for name, member in desired.items():
                w = self.members.get(name)
                watch = self.cfg.watch if member.watch is None else member.watch
                if w is not None and w.source_text == member.source and w.watching == watch:
                    continue
                if w is not None:
                    w.stop()   # its status carries over to the replacement
                try:
                    new = Worker(self, member.source, name=name, status=w.status if w else None, watch=watch)
                except CCMError as exc:
                    self.log.error("Could not start manifest worker", manifest=name, error=str(exc))
                    continue
                new.log.info("Replacing worker: source changed" if w else "Starting worker", source=new.source.shown)
                self.members[name] = new
                started.append(new)
        for w in started:
            w.start()

    # --- status -----------------------------------------------------------------------

    def status(self) -> Dict[str, Any]:
        from ccm import __version__
        from ccm.gocompat.rfc3339 import rfc3339

        if self.set_loader is not None:
            mset = self.set_loader.status()
        else:
            mset = {"mode": "static", "source": self.cfg.path, "revision": None,
                    "last_load": rfc3339(int(self.started * 1e9)), "last_error": None,
                    "members": 0}
        manifests = [dict(w.status.to_dict(), static=True, watch=w.watch_status()) for w in list(self.static.values())]
        manifests += [dict(w.status.to_dict(), static=False, watch=w.watch_status())
                      for w in list(self.members.values())]
        return {"version": __version__, "pid": os.getpid(), "started": rfc3339(int(self.started * 1e9)),
                "interval": self.cfg.interval, "health_check_interval": self.cfg.health_check_interval,
                "manifest_set": mset, "manifests": manifests}
