"""The manager: the only place that wires facts, data, environment, working directory,
noop, session store, runner, registry, metrics and logging together.

The CLI and the agent build one with ``build(...)`` and hand it work
(``ensure``, ``apply_manifest``, ``status``); resources only see the narrow
``ccm.model.manager.Manager`` contract.
"""
from __future__ import annotations

import copy
import os
import threading
import time
from typing import Any, Callable, Dict, Mapping, Optional

from ccm.log import UserLogger, internal
from ccm.model.events import TransactionEvent
from ccm.model.lazy import LazyMapping

log = internal("ccm.manager")


class NoopMetrics:
    """Metrics sink used unless metrics were asked for (prometheus stays unimported)."""

    def observe(self, metric: str, seconds: float, **labels: str) -> None:
        pass

    def inc(self, metric: str, amount: float = 1.0, **labels: str) -> None:
        pass

    def record_event(self, event: Any) -> None:
        pass


class Manager:
    def __init__(self, *, noop: bool = False, session_dir: Optional[str] = None,
                 facts: Optional[Dict[str, Any]] = None, extra_facts: Optional[Mapping[str, Any]] = None,
                 environ: Optional[Dict[str, str]] = None, working_dir: Optional[str] = None,
                 user_log: Optional[UserLogger] = None, runner: Any = None, registry: Any = None,
                 metrics: Any = None, data: Optional[Dict[str, Any]] = None,
                 template_functions: Optional[Dict[str, Callable[..., Any]]] = None,
                 nats_context: str = "CCM", registration_stream: str = "REGISTRATION"):
        from ccm.session import open_store

        self.noop = noop
        self.working_dir = working_dir
        self.user_log = user_log or UserLogger()
        if runner is None:
            from ccm.runner import SubprocessRunner

            runner = SubprocessRunner()
        self.runner = runner
        if registry is None:
            from ccm.registry import default_registry

            registry = default_registry()
        self.registry = registry
        self.metrics = metrics or NoopMetrics()
        self.session = open_store(session_dir)
        self.session.listeners.append(self.metrics.record_event)
        self._facts = facts
        self._lazy_facts = LazyMapping(self.facts)
        self._extra_facts = dict(extra_facts or {})
        self._facts_lock = threading.Lock()
        self.environ = environ if environ is not None else {k: v for k, v in os.environ.items() if v}
        self._data: Dict[str, Any] = dict(data or {})
        self.external_data: Dict[str, Any] = {}
        self.template_functions = dict(template_functions or {})
        self.nats_context = nats_context
        self.registration_stream = registration_stream
        self.depth = 0
        self.health_check_only = False
        self.apply_chain: list = []   # manifest paths from the top-level run to the current one
        self.show_diff = False        # noop: print a unified diff of each file content change

    # --- facts and data ----------------------------------------------------------------

    def facts(self) -> Dict[str, Any]:
        with self._facts_lock:
            if self._facts is None:
                from ccm.data.merge import deep_merge
                from ccm.facts import gather

                started = time.monotonic()
                gathered = gather()
                self.metrics.observe("facts_gather", time.monotonic() - started)
                self._facts = deep_merge(gathered, self._extra_facts) if self._extra_facts else gathered
            return self._facts

    def facts_view(self) -> Mapping[str, Any]:
        """The facts, gathered only when something reads them."""
        return self._lazy_facts

    def set_facts(self, facts: Dict[str, Any]) -> None:
        with self._facts_lock:
            self._facts = facts
        self._lazy_facts = LazyMapping(self.facts)

    def data(self) -> Dict[str, Any]:
        return dict(self._data)

    def set_data(self, data: Mapping[str, Any]) -> None:
        from ccm.data.merge import deep_merge

        self._data = deep_merge(dict(data), self.external_data) if self.external_data else dict(data)

    # --- templates ---------------------------------------------------------------------

    def template_function_names(self) -> frozenset:
        """Every function a template may call here (checked when a manifest loads)."""
        from ccm.templates import CCM_FUNCTIONS

        return CCM_FUNCTIONS | frozenset(self.template_functions)

    def lazy_template_environment(self) -> Mapping[str, Any]:
        """An environment built (and facts gathered) only if a template or expression reads it."""
        return LazyMapping(self.template_environment)

    def template_environment(self) -> Dict[str, Any]:
        from ccm.templates import make_environment

        return make_environment(facts=self.facts(), data=self._data, environ=self.environ,
                                working_dir=self.working_dir, functions=self.template_functions)

    # --- work --------------------------------------------------------------------------

    def spec(self, type_name: str) -> Any:
        return self.registry.spec(type_name)

    def apply_resource(self, props: Any, *, health_check_only: bool = False) -> TransactionEvent:
        """Run one already-validated resource through the shared flow (not recorded)."""
        from ccm.resources import base

        return base.run(self, self.spec(props.type_name), props, health_check_only=health_check_only)

    def record(self, event: TransactionEvent) -> None:
        self.session.record(event)

    def log_event(self, event: TransactionEvent, user_log: Optional[UserLogger] = None) -> None:
        from ccm.report import log_event

        log_event(user_log or self.user_log, event)

    def snapshot(self) -> Dict[str, Any]:
        """What a nested apply must restore afterwards."""
        return {"noop": self.noop, "working_dir": self.working_dir, "data": copy.deepcopy(self._data),
                "depth": self.depth, "health_check_only": self.health_check_only,
                "user_log": self.user_log}

    def restore(self, snap: Dict[str, Any]) -> None:
        self.noop = snap["noop"]
        self.working_dir = snap["working_dir"]
        self._data = snap["data"]
        self.depth = snap["depth"]
        self.health_check_only = snap["health_check_only"]
        self.user_log = snap["user_log"]


def build(**kwargs: Any) -> Manager:
    return Manager(**kwargs)
