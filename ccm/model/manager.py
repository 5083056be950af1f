"""The manager contracts: what the shared resource flow (``ccm.resources.base``), the
manifest engine (``ccm.apply.engine``) and the health checks use of a manager.

``ccm.manager.Manager`` satisfies ``RunManager`` (``tests/test_contracts.py`` checks it
with mypy and at run time). Resources never see a manager: they get a
``ccm.model.resource.ResourceContext`` built from one and the run
(``ccm.model.run.Run``), whose nested-apply call is the ``NestedApply`` protocol below.
"""
from __future__ import annotations

from ccm.model.events import ResourceState, SessionSummary, TransactionEvent
from ccm.model.runner import CommandRunner
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

    from ccm.model.events import RecordedEvent
    from ccm.model.run import Run


class UserLog(Protocol):
    """The user-facing structured log (``ccm.log.UserLogger``)."""

    quiet: bool

    def bind(self, **attrs: Any) -> "UserLog": ...

    def log(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None: ...

    def line_sink(self) -> Any:
        """A ``ccm.log.LineSink`` for printing many lines of one run as ``log`` does, or
        None where this logger needs ``log`` for every line."""
        ...

    def debug(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None: ...

    def info(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None: ...

    def warn(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None: ...

    def error(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None: ...


class Metrics(Protocol):
    enabled: bool   # False: every call is a no-op (callers may skip building labels)

    def observe(self, metric: str, seconds: float, **labels: str) -> None: ...

    def record_event(self, event: Any) -> None: ...


class SessionView(Protocol):
    """The session store as the flow uses it: gates read it, every event is recorded."""

    def start_session(self, manifest: str = "") -> Any: ...

    def is_failed(self, ref: str) -> bool: ...

    def failed_refs(self, refs: Sequence[str]) -> List[str]:
        """The ``refs`` that are ``is_failed``, in order (the ``require`` gate)."""
        ...

    def events_for(self, type_name: str, name: str) -> List[RecordedEvent]: ...

    def should_refresh(self, refs: Sequence[str]) -> bool: ...

    def record(self, event: TransactionEvent) -> Any:
        """Store ``event``; returns what the store keeps of it (the event or its ``EventRecord``)."""
        ...

    def summary(self) -> SessionSummary: ...


class ProviderSelector(Protocol):
    """The registry's selection call (``ccm.registry.Registry.select``)."""

    def select(self, type_name: str, facts: Mapping[str, Any], props: Any) -> Any: ...


class ChildRun(ValueObject):
    """What a nested manifest run produced: its events, or why it could not load or run."""

    resource_count: int
    events: List[RecordedEvent]
    load_error: str
    run_error: str

    _value_fields = ("resource_count", "events", "load_error", "run_error")

    def __init__(self, resource_count: int = 0, events: Optional[List[RecordedEvent]] = None,
                 load_error: str = "", run_error: str = "") -> None:
        self.resource_count = resource_count
        self.events = [] if events is None else events
        self.load_error = load_error
        self.run_error = run_error

class NestedApply(Protocol):
    """Run a child manifest one level deeper in the same session (``ResourceContext.nested``).

    ``noop`` and ``health_check_only`` can only be switched on for the child; ``data``
    (when given) replaces the inherited data as the child's overriding data; ``label``
    names the child in its log lines.
    """

    def apply_child(self, path: str, *, noop: bool, health_check_only: bool,
                    data: Optional[Mapping[str, Any]], deny_apply: bool, label: str) -> ChildRun: ...


class RunManager(Protocol):
    """Everything ``ccm.resources.base``, ``ccm.apply.engine`` and ``ccm.healthcheck``
    read on a manager: its collaborators and the runs it makes. Nothing here changes
    during a run; what holds for one run only is its ``ccm.model.run.Run``."""

    working_dir: Optional[str]   # set by loading a manifest (relative paths resolve against it)
    user_log: UserLog
    runner: CommandRunner

    @property
    def registry(self) -> ProviderSelector: ...

    @property
    def session(self) -> SessionView: ...

    @property
    def metrics(self) -> Metrics: ...

    def facts_view(self) -> Mapping[str, Any]: ...

    def template_environment(self) -> Dict[str, Any]: ...

    def lazy_template_environment(self) -> Mapping[str, Any]: ...

    def status(self, type_name: str, name: str, *, provider: Optional[str] = None) -> ResourceState: ...

    def single_run(self, *, health_check_only: bool = False) -> Run:
        """The run of one resource outside a manifest (``ensure``, ``status``, health checks)."""
        ...

    def run_child(self, parent: Run, path: str, *, noop: bool, health_check_only: bool,
                  data: Optional[Mapping[str, Any]], deny_apply: bool, label: str) -> ChildRun:
        """A nested manifest at ``path``, run in ``parent.child(...)`` (``NestedApply``)."""
        ...
