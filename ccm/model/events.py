"""Transaction events, session start events, resource states and the session summary.

One class per wire object; JSON field order and omit-empty rules follow upstream
exactly (``events-and-observability.md``), so mixed fleets parse each other's events.
They are plain classes with what ``@dataclass`` gave them (keyword or positional
construction in field order, equality and repr over the fields, no hash: ``ValueObject``)
because building dataclasses costs every process ``dataclasses`` and ``inspect`` (issue 16).

Plain values: nothing here reads a clock or draws an id. A new event, state or session
start gets its time and id from whoever makes it (``ccm.clock``); a timestamp of 0 is
Go's zero time on the wire and an empty ``event_id`` is no id. The apply flow's events,
whose id and properties are made when first read, are ``ccm.resources.flowevents``.
"""
from __future__ import annotations

from ccm.gocompat.rfc3339 import parse_rfc3339, rfc3339
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Protocol, Set, Tuple, Union

    class PropertySource(Protocol):
        """What gives an event its properties (``ccm.model.resource.Properties``)."""

        def to_dict(self) -> Dict[str, Any]: ...


EVENT_PROTOCOL = "io.choria.ccm.v1.transaction.event"
SESSION_START_PROTOCOL = "io.choria.ccm.v1.session.start"
ENSURE_REQUEST_PROTOCOL = "io.choria.ccm.v1.resource.ensure.request"
ENSURE_RESPONSE_PROTOCOL = "io.choria.ccm.v1.resource.ensure.response"

# Health check statuses equal the nagios exit codes.
OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATUS_NAMES = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}


def state_protocol(type_name: str) -> str:
    return f"io.choria.ccm.v1.resource.{type_name}.state"


# --- resource state ---------------------------------------------------------------------

class ResourceState(ValueObject):
    """The observed state a type reports (``status`` in events).

    ``extra`` holds the per-type fields that follow the common ones (``metadata`` for
    most types; ``exitcode`` and the guard flags for exec; counts for apply).
    ``internal``: working values a type keeps between its steps (never serialised, not
    compared, not in the repr). ``timestamp_ns``: when it was observed (0: unknown).
    """

    _value_fields = ("type", "name", "ensure", "changed", "refreshed", "stable", "noop", "noop_message",
                     "timestamp_ns", "extra")

    def __init__(self, type: str, name: str, ensure: str = "", changed: bool = False, refreshed: bool = False,
                 stable: bool = False, noop: bool = False, noop_message: str = "", timestamp_ns: int = 0,
                 extra: Optional[Dict[str, Any]] = None, internal: Optional[Dict[str, Any]] = None) -> None:
        self.type = type
        self.name = name
        self.ensure = ensure
        self.changed = changed
        self.refreshed = refreshed
        self.stable = stable
        self.noop = noop
        self.noop_message = noop_message
        self.timestamp_ns = timestamp_ns
        self.extra: Dict[str, Any] = {} if extra is None else extra
        self.internal: Dict[str, Any] = {} if internal is None else internal

    @property
    def metadata(self) -> Dict[str, Any]:
        meta: Dict[str, Any] = self.extra.get("metadata", {})
        return meta

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "timestamp": rfc3339(self.timestamp_ns),
            "protocol": state_protocol(self.type),
            "type": self.type,
            "name": self.name,
            "ensure": self.ensure,
            "changed": self.changed,
            "refreshed": self.refreshed,
            "stable": self.stable,
            "noop": self.noop,
        }
        if self.noop_message:
            out["noop_message"] = self.noop_message
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "ResourceState":
        common = {"timestamp", "protocol", "type", "name", "ensure", "changed", "refreshed",
                  "stable", "noop", "noop_message", "health_check"}
        return cls(
            type=d.get("type", ""), name=d.get("name", ""), ensure=d.get("ensure", ""),
            changed=bool(d.get("changed")), refreshed=bool(d.get("refreshed")),
            stable=bool(d.get("stable")), noop=bool(d.get("noop")),
            noop_message=d.get("noop_message", "") or "",
            timestamp_ns=parse_rfc3339(d.get("timestamp", "")),
            extra={k: v for k, v in d.items() if k not in common},
        )


# --- health check results ---------------------------------------------------------------

class HealthCheckResult(ValueObject):
    _value_fields = ("status", "tries", "output", "name")

    def __init__(self, status: int, tries: int = 1, output: str = "", name: str = "") -> None:
        self.status = status
        self.tries = tries
        self.output = output
        self.name = name   # not on the wire; used for logs and metrics

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, "UNKNOWN")

    def to_dict(self) -> Dict[str, Any]:
        # Upstream serialises the status as an integer and the output under "Output".
        return {"status": self.status, "tries": self.tries, "Output": self.output}

    @classmethod
    def from_dict(cls, d: Optional[Dict[str, Any]]) -> "HealthCheckResult":
        if not d:
            return cls(status=UNKNOWN, output="missing health check result")
        status = d.get("status", UNKNOWN)
        if isinstance(status, str):
            status = {v.lower(): k for k, v in STATUS_NAMES.items()}.get(status.lower(), UNKNOWN)
        return cls(status=int(status), tries=int(d.get("tries", 1) or 1),
                   output=d.get("Output", d.get("output", "")) or "")


# --- events -----------------------------------------------------------------------------

class _Labelled:
    """``label`` and ``ref`` of an event (whole or as kept by a store)."""

    __slots__ = ()
    type: str
    name: str
    alias: str

    @property
    def label(self) -> str:
        # the alias and the name it stands for (upstream shows "(alias)" in place of the name)
        return f"{self.type}#{self.alias} ({self.name})" if self.alias else f"{self.type}#{self.name}"

    @property
    def ref(self) -> str:
        return f"{self.type}#{self.name}"


class TransactionEvent(_Labelled, ValueObject):
    """The outcome of one resource of a run (the wire's transaction event)."""

    _value_fields = ("type", "name", "provider", "alias", "requested_ensure", "final_ensure", "duration_ns",
                     "properties", "status", "noop_message", "health_checks", "health_check_only", "errors",
                     "changed", "refreshed", "failed", "skipped", "noop", "unmet_requirements", "event_id",
                     "timestamp_ns", "protocol")

    def __init__(self, type: str, name: str, provider: str = "", alias: str = "", requested_ensure: str = "",
                 final_ensure: str = "", duration_ns: int = 0, properties: Optional[Dict[str, Any]] = None,
                 status: Optional[ResourceState] = None, noop_message: str = "",
                 health_checks: Optional[List[HealthCheckResult]] = None, health_check_only: bool = False,
                 errors: Optional[List[str]] = None, changed: bool = False, refreshed: bool = False,
                 failed: bool = False, skipped: bool = False, noop: bool = False,
                 unmet_requirements: Optional[List[str]] = None, event_id: str = "",
                 timestamp_ns: int = 0, protocol: str = EVENT_PROTOCOL) -> None:
        self.type = type
        self.name = name
        self.provider = provider
        self.alias = alias
        self.requested_ensure = requested_ensure
        self.final_ensure = final_ensure
        self.duration_ns = duration_ns
        self.properties: Dict[str, Any] = {} if properties is None else properties
        self.status = status
        self.noop_message = noop_message
        self.health_checks: List[HealthCheckResult] = [] if health_checks is None else health_checks
        self.health_check_only = health_check_only
        self.errors: List[str] = [] if errors is None else errors
        self.changed = changed
        self.refreshed = refreshed
        self.failed = failed
        self.skipped = skipped
        self.noop = noop
        self.unmet_requirements: List[str] = [] if unmet_requirements is None else unmet_requirements
        self.event_id = event_id
        self.timestamp_ns = timestamp_ns
        self.protocol = protocol

    def properties_from(self, source: PropertySource) -> None:
        """``properties`` are ``source.to_dict()`` (the flow hands each event the resource's
        properties once it ran: deferred templates render in place)."""
        self.properties = source.to_dict()

    def record(self) -> "EventRecord":
        """What a session store keeps of this event when it keeps no whole events."""
        return EventRecord(self)

    def fail(self, message: str) -> None:
        self.failed = True
        if message:
            self.errors.append(message)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "protocol": self.protocol,
            "event_id": self.event_id,
            "timestamp": rfc3339(self.timestamp_ns),
            "type": self.type,
            "provider": self.provider,
            "name": self.name,
        }
        if self.alias:
            out["alias"] = self.alias
        out["requested_ensure"] = self.requested_ensure
        out["final_ensure"] = self.final_ensure
        out["duration"] = int(self.duration_ns)
        out["properties"] = self.properties
        out["status"] = self.status.to_dict() if self.status is not None else None
        if self.noop_message:
            out["noop_message"] = self.noop_message
        if self.health_checks:
            out["health_check"] = [h.to_dict() for h in self.health_checks]
        if self.health_check_only:
            out["health_check_only"] = True
        out["error"] = list(self.errors)
        out["changed"] = self.changed
        out["refreshed"] = self.refreshed
        out["failed"] = self.failed
        out["skipped"] = self.skipped
        out["noop"] = self.noop
        out["unmet_requirements"] = list(self.unmet_requirements)
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "TransactionEvent":
        status = d.get("status")
        return cls(
            protocol=d.get("protocol", EVENT_PROTOCOL), event_id=d.get("event_id", ""),
            timestamp_ns=parse_rfc3339(d.get("timestamp", "")),
            type=d.get("type", ""), provider=d.get("provider", ""), name=d.get("name", ""),
            alias=d.get("alias", "") or "", requested_ensure=d.get("requested_ensure", "") or "",
            final_ensure=d.get("final_ensure", "") or "", duration_ns=int(d.get("duration", 0) or 0),
            properties=d.get("properties") or {},
            status=ResourceState.from_dict(status) if isinstance(status, dict) else None,
            noop_message=d.get("noop_message", "") or "",
            health_checks=[HealthCheckResult.from_dict(h) for h in (d.get("health_check") or [])],
            health_check_only=bool(d.get("health_check_only")),
            errors=list(d.get("error") or []), changed=bool(d.get("changed")),
            refreshed=bool(d.get("refreshed")), failed=bool(d.get("failed")),
            skipped=bool(d.get("skipped")), noop=bool(d.get("noop")),
            unmet_requirements=list(d.get("unmet_requirements") or []),
        )


class EventRecord(_Labelled):
    """What a run reads back about an event once it is recorded: ``require``/``subscribe``
    gates, the summary, ``--last-run`` and a nested apply's counts. Its flags, counters
    and errors, without the properties, status and check output of the full event (a
    store keeps these instead of every event when nothing will serialise them)."""

    __slots__ = ("type", "name", "alias", "provider", "event_id", "timestamp_ns", "duration_ns", "errors",
                 "changed", "refreshed", "failed", "skipped", "noop", "unmet_requirements", "health_checks")

    def __init__(self, event: TransactionEvent) -> None:
        self.event_id = event.event_id
        self._copy(event)

    def _copy(self, event: TransactionEvent) -> None:
        """Everything but the id, from ``event``."""
        self.type = event.type
        self.name = event.name
        self.alias = event.alias
        self.provider = event.provider
        self.timestamp_ns = event.timestamp_ns
        self.duration_ns = event.duration_ns
        self.errors: Tuple[str, ...] = tuple(event.errors) if event.errors else ()
        self.changed = event.changed
        self.refreshed = event.refreshed
        self.failed = event.failed
        self.skipped = event.skipped
        self.noop = event.noop
        self.unmet_requirements: Tuple[str, ...] = tuple(event.unmet_requirements) if event.unmet_requirements else ()
        self.health_checks: Tuple[HealthCheckResult, ...] = tuple(
            HealthCheckResult(h.status, h.tries, "", h.name) for h in event.health_checks) if event.health_checks else ()

    def __repr__(self) -> str:
        return f"EventRecord({self.ref}, failed={self.failed}, changed={self.changed})"


if TYPE_CHECKING:
    RecordedEvent = Union[TransactionEvent, EventRecord]   # what a session store keeps of an event


class SessionStartEvent(ValueObject):
    _value_fields = ("event_id", "timestamp_ns", "protocol")

    def __init__(self, event_id: str = "", timestamp_ns: int = 0, protocol: str = SESSION_START_PROTOCOL) -> None:
        self.event_id = event_id
        self.timestamp_ns = timestamp_ns
        self.protocol = protocol

    def to_dict(self) -> Dict[str, Any]:
        return {"protocol": self.protocol, "event_id": self.event_id,
                "timestamp": rfc3339(self.timestamp_ns)}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SessionStartEvent":
        return cls(event_id=d.get("event_id", ""), timestamp_ns=parse_rfc3339(d.get("timestamp", "")))


# --- summary ----------------------------------------------------------------------------

class SessionSummary(ValueObject):
    _value_fields = ("start_time_ns", "end_time_ns", "total_duration_ns", "total_resources",
                     "unique_resources", "changed_resources", "failed_resources", "skipped_resources",
                     "stable_resources", "refreshed_count", "requirements_unmet_count", "health_checked_count",
                     "health_check_ok_count", "health_check_warning_count", "health_check_critical_count",
                     "health_check_unknown_count", "total_errors")

    def __init__(self, start_time_ns: int = 0, end_time_ns: int = 0, total_duration_ns: int = 0,
                 total_resources: int = 0, unique_resources: int = 0, changed_resources: int = 0,
                 failed_resources: int = 0, skipped_resources: int = 0, stable_resources: int = 0,
                 refreshed_count: int = 0, requirements_unmet_count: int = 0, health_checked_count: int = 0,
                 health_check_ok_count: int = 0, health_check_warning_count: int = 0,
                 health_check_critical_count: int = 0, health_check_unknown_count: int = 0,
                 total_errors: int = 0) -> None:
        self.start_time_ns = start_time_ns
        self.end_time_ns = end_time_ns
        self.total_duration_ns = total_duration_ns
        self.total_resources = total_resources
        self.unique_resources = unique_resources
        self.changed_resources = changed_resources
        self.failed_resources = failed_resources
        self.skipped_resources = skipped_resources
        self.stable_resources = stable_resources
        self.refreshed_count = refreshed_count
        self.requirements_unmet_count = requirements_unmet_count
        self.health_checked_count = health_checked_count
        self.health_check_ok_count = health_check_ok_count
        self.health_check_warning_count = health_check_warning_count
        self.health_check_critical_count = health_check_critical_count
        self.health_check_unknown_count = health_check_unknown_count
        self.total_errors = total_errors

    @classmethod
    def build(cls, events: Iterable[Any]) -> "SessionSummary":
        # counted in locals, not attributes: once per recorded event of a run
        start = end = failed = skipped = changed = refreshed = unmet = 0
        if type(events) is not list:
            events = list(events)
        checks: List[Any] = []
        names_of: Dict[str, Set[str]] = {}   # the names of each type: unique refs, without a key per event
        names: Set[str] = set()
        last_type = None
        starts = 0   # total and the sum of durations follow from the list: no int made per event
        for ev in events:
            if isinstance(ev, SessionStartEvent):
                start = ev.timestamp_ns
                starts += 1
                continue
            if ev.type is not last_type:
                last_type = ev.type
                names = names_of.setdefault(last_type, set())
            names.add(ev.name)
            # upstream: the latest event's timestamp (total_duration follows from it)
            if ev.timestamp_ns > end:
                end = ev.timestamp_ns
            if ev.failed:
                failed += 1
            elif ev.skipped:
                skipped += 1
            elif ev.changed:
                changed += 1
            if ev.refreshed:
                refreshed += 1
            if ev.unmet_requirements:
                unmet += len(ev.unmet_requirements)
            if ev.health_checks:
                checks += ev.health_checks
        total = len(events) - starts
        statuses = [h.status for h in checks]
        ok, warning, critical = statuses.count(OK), statuses.count(WARNING), statuses.count(CRITICAL)
        s = cls(start_time_ns=start, end_time_ns=end, total_resources=total,
                unique_resources=sum(len(names) for names in names_of.values()),
                changed_resources=changed, failed_resources=failed, skipped_resources=skipped,
                stable_resources=total - failed - skipped - changed, refreshed_count=refreshed,
                requirements_unmet_count=unmet, health_checked_count=len(statuses), health_check_ok_count=ok,
                health_check_warning_count=warning, health_check_critical_count=critical,
                health_check_unknown_count=len(statuses) - ok - warning - critical, total_errors=failed)
        if start and end:
            s.total_duration_ns = max(0, end - start)
        else:
            s.total_duration_ns = sum(ev.duration_ns for ev in events if not isinstance(ev, SessionStartEvent))
        return s

    def to_dict(self) -> Dict[str, Any]:
        return {
            "start_time": rfc3339(self.start_time_ns),
            "end_time": rfc3339(self.end_time_ns),
            "total_duration": self.total_duration_ns,
            "total_resources": self.total_resources,
            "unique_resources": self.unique_resources,
            "changed_resources": self.changed_resources,
            "failed_resources": self.failed_resources,
            "skipped_resources": self.skipped_resources,
            "stable_resources": self.stable_resources,
            "refreshed_count": self.refreshed_count,
            "requirements_unmet_count": self.requirements_unmet_count,
            "health_checked_count": self.health_checked_count,
            "health_check_ok_count": self.health_check_ok_count,
            "health_check_warning_count": self.health_check_warning_count,
            "health_check_critical_count": self.health_check_critical_count,
            "health_check_unknown_count": self.health_check_unknown_count,
            "total_errors": self.total_errors,
        }
