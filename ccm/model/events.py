"""Transaction events, session start events, resource states and the session summary.

One class per wire object; JSON field order and omit-empty rules follow upstream
exactly (``events-and-observability.md``), so mixed fleets parse each other's events.
They are plain classes with what ``@dataclass`` gave them (keyword or positional
construction in field order, equality and repr over the fields, no hash: ``ValueObject``)
because building dataclasses costs every process ``dataclasses`` and ``inspect`` (issue 16).
"""
from __future__ import annotations

import os
import time

from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Set, Tuple, Union

    class _PropertySource(Protocol):
        """What gives an event its properties (``ccm.model.resource.Properties``)."""

        def to_dict(self) -> Dict[str, Any]: ...

EVENT_PROTOCOL = "io.choria.ccm.v1.transaction.event"
SESSION_START_PROTOCOL = "io.choria.ccm.v1.session.start"
ENSURE_REQUEST_PROTOCOL = "io.choria.ccm.v1.resource.ensure.request"
ENSURE_RESPONSE_PROTOCOL = "io.choria.ccm.v1.resource.ensure.response"

ZERO_TIME = "0001-01-01T00:00:00Z"

# Health check statuses equal the nagios exit codes.
OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATUS_NAMES = {OK: "OK", WARNING: "WARNING", CRITICAL: "CRITICAL", UNKNOWN: "UNKNOWN"}


def state_protocol(type_name: str) -> str:
    return f"io.choria.ccm.v1.resource.{type_name}.state"


# --- time helpers -----------------------------------------------------------------------

def now_ns() -> int:
    return time.time_ns()


_last_second: Tuple[Optional[int], str] = (None, "")  # one entry: events come in bursts


def rfc3339(ns: Optional[int]) -> str:
    """Go ``RFC3339Nano`` in UTC: fraction trimmed of trailing zeros, none when zero."""
    global _last_second
    if not ns:
        return ZERO_TIME
    if type(ns) is not int:
        ns = int(ns)
    secs, frac = divmod(ns, 1_000_000_000)
    last = _last_second
    if last[0] == secs:
        base = last[1]
    else:
        tm = time.gmtime(secs)  # what strftime printed, without building a datetime
        if 1 <= tm.tm_year <= 9999:
            base = "%d-%02d-%02dT%02d:%02d:%02d" % tm[:6]
        else:
            from datetime import datetime, timezone

            base = datetime.fromtimestamp(secs, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second = (secs, base)
    if frac:   # nine digits, without a format spec to parse (file status formats every mtime)
        return f"{base}.{str(frac).zfill(9).rstrip('0')}Z"
    return base + "Z"


def parse_rfc3339(text: str) -> int:
    """Parse an RFC 3339 timestamp (as written by us or upstream) into epoch nanoseconds."""
    if not text or text.startswith("0001-01-01"):
        return 0
    s = text.strip()
    tz = 0
    if s.endswith("Z"):
        s = s[:-1]
    else:
        sign_pos = max(s.rfind("+"), s.rfind("-"))
        if sign_pos > 10:
            off = s[sign_pos:]
            s = s[:sign_pos]
            hh, mm = off[1:].split(":")
            tz = (int(hh) * 3600 + int(mm) * 60) * (1 if off[0] == "+" else -1)
    from datetime import datetime, timezone

    frac_ns = 0
    if "." in s:
        s, frac = s.split(".", 1)
        frac_ns = int(frac.ljust(9, "0")[:9])
    dt = datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return (int(dt.timestamp()) - tz) * 1_000_000_000 + frac_ns


# --- KSUID ------------------------------------------------------------------------------

_KSUID_EPOCH = 1_400_000_000
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


_random_chunks: List[bytes] = []   # the random parts of KSUIDs, 16 bytes each


def _reset_pool() -> None:
    del _random_chunks[:]


os.register_at_fork(after_in_child=_reset_pool)  # a forked child must not reuse our bytes


_chunks_made = [0]


def _random_chunk() -> bytes:
    """16 random bytes, popped from a pool made by one getrandom() call: ``list.pop`` is
    atomic, so no lock (threads that find the pool empty each refill it). The first pools
    are small (a run of a few resources does not cut 256 chunks), later ones 256."""
    while True:
        try:
            return _random_chunks.pop()
        except IndexError:
            count = 256 if _chunks_made[0] >= 64 else 16
            _chunks_made[0] += count
            pool = os.urandom(16 * count)
            _random_chunks.extend([pool[i:i + 16] for i in range(0, 16 * count, 16)])


# Two digits per divmod (14 steps, not 27), once a run makes enough ids to pay for the
# 3,844-entry table: a small run (a few ids) is cheaper digit by digit.
_B62_PAIRS: List[str] = []
_PAIRS_AFTER = 32
_ids_made = 0


def _base62(n: int) -> str:
    global _ids_made
    out = []
    pairs = _B62_PAIRS
    if not pairs:
        _ids_made += 1
        if _ids_made <= _PAIRS_AFTER:
            while n:
                n, r = divmod(n, 62)
                out.append(_B62[r])
            return "".join(reversed(out))
        pairs.extend(a + b for a in _B62 for b in _B62)
    while n:
        n, r = divmod(n, 3844)
        out.append(pairs[r])
    return "".join(reversed(out))


def new_ksuid(ts: Optional[float] = None) -> str:
    """A KSUID: 4-byte seconds since 2014-05-13 + 16 random bytes, base62, 27 chars."""
    return ksuid_text(time.time() if ts is None else ts, _random_chunk())


def ksuid_text(ts: float, random16: bytes) -> str:
    """The KSUID of seconds ``ts`` and 16 random bytes (an event draws both when it is
    made, ``_LazyId``, and encodes them only when something reads its id)."""
    secs = (int(ts) - _KSUID_EPOCH) & 0xFFFFFFFF   # Go's uint32()
    n = secs << 128 | int.from_bytes(random16, "big")
    return _base62(n).rjust(28, "0")[-27:]  # 20 bytes < 62**27: digit 28 is 0


_new_object = object.__new__


class _LazyId:
    """``event_id`` drawn when the event is made (``time.time()`` and 16 random bytes),
    encoded on first read (a steady run that prints no JSON and keeps no event files reads
    none). Encoding is deterministic, so an event and its ``EventRecord`` copy, or two
    threads reading at once, see the same id."""

    __slots__ = ()
    _event_id: Optional[str]
    _id_drawn: Optional[Tuple[float, bytes]]

    @property
    def event_id(self) -> str:
        eid = self._event_id
        if eid is None:
            drawn = self._id_drawn
            eid = "" if drawn is None else ksuid_text(drawn[0], drawn[1])
            object.__setattr__(self, "_event_id", eid)   # a slot or __dict__ of the subclass
        return eid

    @event_id.setter
    def event_id(self, value: str) -> None:
        object.__setattr__(self, "_event_id", value)


def is_ksuid(text: str) -> bool:
    return isinstance(text, str) and len(text) == 27 and all(c in _B62 for c in text)


# --- resource state ---------------------------------------------------------------------

class _MadeOnFirstRead:
    """A non-data descriptor: ``state.<name>`` is ``make(state)``, made on first read and
    from then on an ordinary instance attribute (later reads are plain reads; assigning
    replaces it, as for any attribute). Two threads reading it at once get the same
    object (``dict.setdefault`` keeps the first one stored)."""

    __slots__ = ("name", "make")

    def __init__(self, name: str, make: Callable[["ResourceState"], Any]) -> None:
        self.name = name
        self.make = make

    def __get__(self, obj: Optional["ResourceState"], owner: Any = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__.setdefault(self.name, self.make(obj))


def _made_extra(state: "ResourceState") -> Dict[str, Any]:
    make = state._make_extra
    return {} if make is None else make(state)


class ResourceState(ValueObject):
    """The observed state a type reports (``status`` in events).

    ``extra`` holds the per-type fields that follow the common ones (``metadata`` for
    most types; ``exitcode`` and the guard flags for exec; counts for apply).
    ``internal``: working values a type keeps between its steps (never serialised, not
    compared, not in the repr).

    ``observed`` makes a state whose ``extra`` is built from the provider's raw facts
    (``raw``) only when something reads it (JSON, the stores, noop messages, ``ccm status``): a
    steady run that keeps no status builds none. Equality, repr and ``to_dict`` read
    ``extra`` like any other field, so such a state equals, shows and serialises as the
    one built eagerly.
    """

    _value_fields = ("type", "name", "ensure", "changed", "refreshed", "stable", "noop", "noop_message",
                     "timestamp_ns", "extra")

    # the defaults of the common fields (``observed`` sets only what differs), the raw
    # facts a provider kept for its type's logic (not serialised, compared or shown) and
    # what makes ``extra`` from them
    changed = refreshed = stable = noop = False
    noop_message = ""
    raw: Any = None
    _make_extra: Optional[Callable[["ResourceState"], Dict[str, Any]]] = None
    if TYPE_CHECKING:
        extra: Dict[str, Any]
        internal: Dict[str, Any]
    else:
        extra = _MadeOnFirstRead("extra", _made_extra)
        internal = _MadeOnFirstRead("internal", lambda state: {})

    def __init__(self, type: str, name: str, ensure: str = "", changed: bool = False, refreshed: bool = False,
                 stable: bool = False, noop: bool = False, noop_message: str = "",
                 timestamp_ns: Optional[int] = None, extra: Optional[Dict[str, Any]] = None,
                 internal: Optional[Dict[str, Any]] = None) -> None:
        self.type = type
        self.name = name
        self.ensure = ensure
        self.changed = changed
        self.refreshed = refreshed
        self.stable = stable
        self.noop = noop
        self.noop_message = noop_message
        self.timestamp_ns: int = time.time_ns() if timestamp_ns is None else timestamp_ns
        self.extra = {} if extra is None else extra
        self.internal = {} if internal is None else internal

    @classmethod
    def observed(cls, type: str, name: str, ensure: str, raw: Any,
                 make_extra: Callable[["ResourceState"], Dict[str, Any]]) -> "ResourceState":
        """The state just observed (timestamp now, the other common fields at their
        defaults) whose ``extra`` is ``make_extra(state)``, made on first read from
        ``raw``, the provider's own observation (which must not change afterwards;
        ``make_extra`` must give equal answers however often it runs)."""
        state: ResourceState = _new_object(cls)   # no __init__: once per file resource
        state.type = type
        state.name = name
        state.ensure = ensure
        state.timestamp_ns = time.time_ns()
        state.raw = raw
        state._make_extra = make_extra
        return state

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
        return f"{self.type}#{self.alias} (alias)" if self.alias else f"{self.type}#{self.name}"

    @property
    def ref(self) -> str:
        return f"{self.type}#{self.name}"


class TransactionEvent(_LazyId, _Labelled, ValueObject):
    _value_fields = ("type", "name", "provider", "alias", "requested_ensure", "final_ensure", "duration_ns",
                     "properties", "status", "noop_message", "health_checks", "health_check_only", "errors",
                     "changed", "refreshed", "failed", "skipped", "noop", "unmet_requirements", "event_id",
                     "timestamp_ns", "protocol")

    # the defaults of __init__, read here by an event ``begin`` made (it sets only the rest)
    provider = final_ensure = noop_message = ""
    duration_ns = 0
    _properties: Optional[Dict[str, Any]] = None
    _properties_of: Optional[_PropertySource] = None
    status: Optional[ResourceState] = None
    health_check_only = changed = refreshed = failed = skipped = noop = False
    _event_id: Optional[str] = None
    protocol = EVENT_PROTOCOL

    def __init__(self, type: str, name: str, provider: str = "", alias: str = "", requested_ensure: str = "",
                 final_ensure: str = "", duration_ns: int = 0, properties: Optional[Dict[str, Any]] = None,
                 status: Optional[ResourceState] = None, noop_message: str = "",
                 health_checks: Optional[List[HealthCheckResult]] = None, health_check_only: bool = False,
                 errors: Optional[List[str]] = None, changed: bool = False, refreshed: bool = False,
                 failed: bool = False, skipped: bool = False, noop: bool = False,
                 unmet_requirements: Optional[List[str]] = None, event_id: Optional[str] = None,
                 timestamp_ns: Optional[int] = None, protocol: str = EVENT_PROTOCOL) -> None:
        self.type = type
        self.name = name
        self.provider = provider
        self.alias = alias
        self.requested_ensure = requested_ensure
        self.final_ensure = final_ensure
        self.duration_ns = duration_ns
        self._properties = properties   # None: {}, or the ``to_dict()`` of ``properties_from``
        self._properties_of: Optional[_PropertySource] = None
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
        self._event_id = event_id
        if event_id is None:
            try:   # _random_chunk(), without the call while the pool lasts
                chunk = _random_chunks.pop()
            except IndexError:
                chunk = _random_chunk()
            self._id_drawn = (time.time(), chunk)
        else:
            self._id_drawn = None
        self.timestamp_ns: int = time.time_ns() if timestamp_ns is None else timestamp_ns
        self.protocol = protocol

    @classmethod
    def begin(cls, type: str, name: str, alias: str, requested_ensure: str, health_check_only: bool,
              properties_of: _PropertySource) -> "TransactionEvent":
        """``cls(type=type, name=name, alias=alias, requested_ensure=requested_ensure,
        health_check_only=health_check_only)`` with ``properties_from(properties_of)``, as
        the flow makes one per resource (its properties are read once the resource ran:
        the flow renders ``properties_of`` first). The fields the flow neither sets nor
        reads on every resource are left to their defaults on the class, not stored."""
        event = _new_object(cls)
        event._properties = None
        event._properties_of = properties_of
        # stored although they equal the class's: every event has them read several times
        event.failed = event.skipped = False
        event._event_id = None
        event.type = type
        event.name = name
        event.alias = alias
        event.requested_ensure = requested_ensure
        if health_check_only:
            event.health_check_only = health_check_only
        event.health_checks = []
        event.errors = []
        event.unmet_requirements = []
        try:   # _random_chunk(), without the call while the pool lasts
            chunk = _random_chunks.pop()
        except IndexError:
            chunk = _random_chunk()
        event._id_drawn = (time.time(), chunk)
        event.timestamp_ns = time.time_ns()
        return event

    @property
    def properties(self) -> Dict[str, Any]:
        """The resource's properties as the wire shows them; made on first read when the
        event was given their source (``properties_from``): a plain ``ccm apply`` keeps only
        an ``EventRecord`` of each event and reads none."""
        props = self._properties
        if props is None:   # the source stays: two threads reading at once make equal dicts
            source = self._properties_of
            props = self._properties = {} if source is None else source.to_dict()
        return props

    @properties.setter
    def properties(self, value: Dict[str, Any]) -> None:
        self._properties = value
        self._properties_of = None

    def properties_from(self, source: _PropertySource) -> None:
        """``properties`` will be ``source.to_dict()``, made when first read (``source``
        must not change after this: the flow hands it on only to readers)."""
        self._properties = None
        self._properties_of = source

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


class EventRecord(_LazyId, _Labelled):
    """What a run reads back about an event once it is recorded: ``require``/``subscribe``
    gates, the summary, ``--last-run`` and a nested apply's counts. Its flags, counters
    and errors, without the properties, status and check output of the full event (a
    store keeps these instead of every event when nothing will serialise them)."""

    __slots__ = ("type", "name", "alias", "provider", "_event_id", "_id_drawn", "timestamp_ns", "duration_ns",
                 "errors", "changed", "refreshed", "failed", "skipped", "noop", "unmet_requirements",
                 "health_checks")

    def __init__(self, event: TransactionEvent) -> None:
        self.type = event.type
        self.name = event.name
        self.alias = event.alias
        self.provider = event.provider
        self._event_id = event._event_id
        self._id_drawn = event._id_drawn
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

    def __init__(self, event_id: Optional[str] = None, timestamp_ns: Optional[int] = None,
                 protocol: str = SESSION_START_PROTOCOL) -> None:
        self.event_id: str = new_ksuid() if event_id is None else event_id
        self.timestamp_ns: int = time.time_ns() if timestamp_ns is None else timestamp_ns
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
