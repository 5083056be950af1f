"""Resource contracts: property fields, property sets, plans and the type-logic protocol.

A resource type is declared once, as data (a ``TypeSpec`` in ``ccm.registry``) made of
``Field`` descriptions plus a ``TypeLogic`` implementation. Nothing anywhere switches on
type names by hand.
"""
from __future__ import annotations

from ccm.model.errors import ResourceError, ValidationError
# Field kinds are objects (``ccm.model.kinds``); re-exported here, where type modules import them.
from ccm.model.kinds import (ANY as ANY, ANY_MAP as ANY_MAP, BOOL as BOOL, CONTROL as CONTROL,
                             CONTROL_KEYS as CONTROL_KEYS, HEALTH_CHECK_KEYS as HEALTH_CHECK_KEYS,
                             HEALTH_CHECKS as HEALTH_CHECKS, INT as INT, INT_LIST as INT_LIST,
                             POST_LIST as POST_LIST, REGISTRATIONS as REGISTRATIONS, STR as STR,
                             STR_LIST as STR_LIST, STR_MAP as STR_MAP)
from ccm.model.kinds import Kind, kind_named
from ccm.model.value import FrozenValueObject, ValueObject
from ccm.typing_guard import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

    from ccm.model.manager import ChildRun, NestedApply, UserLog
    from ccm.model.runner import CommandRunner

# When a field's templates are rendered.
PARSE = "parse"        # while loading (and again when the resource is built)
DEFERRED = "deferred"  # after the control gate, when the resource runs
NEVER = "never"        # never templated (expressions themselves, or booleans/ints)


class Field(FrozenValueObject):
    """One declared property: frozen, compared and hashed by its values (what a frozen
    ``@dataclass`` gave it, without building one at import time: issue 16).

    ``kind``: a Kind, or its name (normalised to the Kind); ``typed_keys``: map keys
    templated too (scaffold data); ``redact``: applied by ``to_dict`` (secrets never
    reach events)."""

    __slots__ = ("key", "kind", "template", "default", "choices", "always_emit", "typed_keys", "redact")
    _value_fields = __slots__

    key: str
    kind: Kind
    template: str
    default: Any
    choices: Tuple[str, ...]
    always_emit: bool
    typed_keys: bool
    redact: Optional[Callable[[Any], Any]]

    def __init__(self, key: str, kind: Any = STR, template: str = PARSE, default: Any = None,
                 choices: Tuple[str, ...] = (), always_emit: bool = False, typed_keys: bool = False,
                 redact: Optional[Callable[[Any], Any]] = None) -> None:
        init = object.__setattr__
        init(self, "key", key)
        init(self, "kind", kind_named(kind))
        init(self, "template", template)
        init(self, "default", default)
        init(self, "choices", choices)
        init(self, "always_emit", always_emit)
        init(self, "typed_keys", typed_keys)
        init(self, "redact", redact)

    def replace(self, **changes: Any) -> "Field":
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Field(**values)


COMMON_FIELDS: Tuple[Field, ...] = (
    Field("name"),
    Field("alias"),
    Field("ensure"),
    Field("provider"),
    Field("health_checks", HEALTH_CHECKS),
    Field("require", STR_LIST),   # rendered at load, as subscribe is
    Field("control", CONTROL, template=NEVER),
    Field("register_when_stable", REGISTRATIONS),
)



def is_templated(value: Any) -> bool:
    """A string that still holds a ``{{ }}`` or ``${ }`` template (checks wait for its value)."""
    return isinstance(value, str) and ("{{" in value or "${" in value)


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or value is False


_EMIT_PLANS: "Dict[int, Tuple[Tuple[Field, ...], Tuple[Tuple[str, bool, Optional[Callable[[Any], Any]]], ...]]]" = {}


def _emit_plan(fields: Tuple[Field, ...]) -> Tuple[Tuple[str, bool, Optional[Callable[[Any], Any]]], ...]:
    """(key, always_emit, redact) of each field, once per field tuple (a type's fields are
    one shared tuple) rather than three attribute reads per field of every event."""
    hit = _EMIT_PLANS.get(id(fields))
    if hit is None or hit[0] is not fields:
        hit = (fields, tuple((f.key, f.always_emit, f.redact) for f in fields))
        if len(_EMIT_PLANS) > 256:
            _EMIT_PLANS.clear()
        _EMIT_PLANS[id(fields)] = hit
    return hit[1]


class Properties:
    """A validated property set of one resource: values keyed by YAML key.

    ``fields`` gives the declared order (common fields first, then the type's own), which
    is also the serialisation order of ``to_dict`` (events, ``--render``).
    """

    __slots__ = ("type_name", "values", "fields")

    def __init__(self, type_name: str, values: Dict[str, Any], fields: Sequence[Field]):
        self.type_name = type_name
        self.values = values
        self.fields = tuple(fields)

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key)

    def get(self, key: str, default: Any = None) -> Any:
        v = self.values.get(key)
        return default if v is None else v

    def __contains__(self, key: str) -> bool:
        return self.values.get(key) is not None

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value

    @property
    def name(self) -> str:
        return self.values.get("name") or ""

    @property
    def alias(self) -> str:
        return self.values.get("alias") or ""

    @property
    def ensure(self) -> str:
        return self.values.get("ensure") or ""

    @property
    def resource_id(self) -> str:
        return f"{self.type_name}#{self.name}"

    def copy(self) -> "Properties":
        """A copy whose top-level values can be replaced (template rendering does that,
        it never mutates nested values) without touching the original."""
        return Properties(self.type_name, dict(self.values), self.fields)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        values = self.values
        for key, always_emit, redact in _emit_plan(self.fields):
            v = values.get(key)
            if v is None:   # most fields of most resources: only always_emit ones appear
                if always_emit:
                    out[key] = ""
                continue
            if redact is not None and not is_empty(v):
                v = redact(v)
            if always_emit:
                out[key] = "" if v is None else v
            elif key == "content" and v is not None:
                out[key] = v   # an empty content string is meaningful (manage an empty file)
            elif (v != "") if type(v) is str else not is_empty(v):
                out[key] = v
        return out

    def __repr__(self) -> str:
        return f"Properties({self.type_name}, {self.values!r})"


class Plan(ValueObject):
    """What a type decided to do. No actions means the resource is stable."""

    actions: Tuple[str, ...]
    noop_message: str
    refresh: bool
    reason: str
    params: Dict[str, Any]

    _value_fields = ("actions", "noop_message", "refresh", "reason", "params")

    def __init__(self, actions: Tuple[str, ...] = (), noop_message: str = "", refresh: bool = False,
                 reason: str = "", params: Optional[Dict[str, Any]] = None) -> None:
        self.actions = actions
        self.noop_message = noop_message
        self.refresh = refresh
        self.reason = reason
        self.params = {} if params is None else params

    @property
    def stable(self) -> bool:
        return not self.actions


# The fields whose entries name other resources (``type#name``), in every type that has them.
REFERENCE_FIELDS = ("require", "subscribe")


def parse_ref(ref: str, *, what: str = "require") -> Tuple[str, str]:
    """Split ``type#name``; a reference has exactly one ``#``. Upstream's words first
    (``invalid require properties``, exec's ``invalid subscribe format <s>``), then ours."""
    if not isinstance(ref, str) or ref.count("#") != 1 or not all(ref.split("#", 1)):
        if what == "subscribe":
            raise ValidationError(f"invalid subscribe format {ref}: expected type#name (exactly one '#')", field=what)
        raise ValidationError(f"invalid {what} properties: {ref!r} is not type#name (exactly one '#')", field=what)
    t, n = ref.split("#", 1)
    return t, n


class ResourceContext:
    """What a type's logic may use while it runs: the narrow slice of the manager.

    Built by the shared flow (``ccm.resources.base``) for each resource. ``log``
    is bound to the resource; ``run_log`` is the run's log (command output goes there);
    ``nested`` runs child manifests (the apply type) and is ``None`` where nesting is
    impossible. ``diff``: the run prints each content change (``--diff``), so a type that
    can tell one computes it in a real run too (in noop it always does).
    """

    def __init__(self, noop: bool, working_dir: Optional[str], log: UserLog, runner: CommandRunner,
                 facts: Optional[Mapping[str, Any]] = None, depth: int = 0,
                 chain: Sequence[str] = (), run_log: Optional[UserLog] = None,
                 template_environment: Optional[Callable[[], Mapping[str, Any]]] = None,
                 nested: Optional["NestedApply"] = None, diff: bool = False) -> None:
        self.noop = noop
        self.diff = diff
        self.working_dir = working_dir
        self.log = log
        self.run_log = run_log if run_log is not None else log
        self.runner = runner
        self.facts: Mapping[str, Any] = facts if facts is not None else {}
        self.depth = depth
        self.chain: Tuple[str, ...] = tuple(chain)
        self._template_environment = template_environment
        self.nested = nested

    def template_environment(self) -> Mapping[str, Any]:
        """The run's template environment (empty where none was given)."""
        return self._template_environment() if self._template_environment is not None else {}

    def apply_child(self, path: str, *, noop: bool, health_check_only: bool,
                    data: Optional[Mapping[str, Any]], deny_apply: bool, label: str) -> "ChildRun":
        if self.nested is None:
            raise ResourceError("nested apply needs a manager")
        return self.nested.apply_child(path, noop=noop, health_check_only=health_check_only, data=data,
                                       deny_apply=deny_apply, label=label)


ProviderT = TypeVar("ProviderT")


class TypeLogic(Generic[ProviderT]):
    """The per-type decision logic the shared flow calls back into.

    ``ProviderT`` is the type's capability protocol (``PackageProvider``, ...), declared
    next to the logic in ``ccm/resources/<type>/logic.py``.

    ``plan`` and ``is_desired`` are pure: they see properties and an observed state, and
    do no I/O. ``status`` and ``act`` go through the provider. ``verify`` re-reads the
    state after acting; types whose convergence test needs what ``act`` returned (exec's
    exit code) override it.
    """

    # Optional behaviour, declared here so the flow never probes for it:
    # the type honours ``subscribe`` (refresh_refs is consulted).
    supports_refresh = False
    # act() runs in noop too (it honours ctx.noop itself, e.g. nested manifests) and
    # after_noop() turns its result into a state.
    acts_in_noop = False
    # act() runs in health-check-only runs too (nested manifests run their child in that
    # mode instead of being skipped).
    runs_in_health_check_only = False
    # The state reports "stable" as "no action was needed" (package, service) rather
    # than "the desired-state test passed".
    stable_means_no_action = False
    # The instance keeps nothing of its own (no attribute set after construction), so one
    # instance may serve every resource and thread (``TypeSpec.new_logic``).
    stateless = False

    def status(self, provider: ProviderT, props: Properties, ctx: ResourceContext) -> Any:
        raise NotImplementedError

    def plan(self, props: Properties, state: Any, refresh: bool = False) -> Plan:
        raise NotImplementedError

    def act(self, provider: ProviderT, props: Properties, plan: Plan, ctx: ResourceContext) -> Any:
        raise NotImplementedError

    def is_desired(self, props: Properties, state: Any, acted: Any = None) -> Tuple[bool, str]:
        raise NotImplementedError

    def verify(self, provider: ProviderT, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[Any, bool, str]:
        state = self.status(provider, props, ctx)
        ok, reason = self.is_desired(props, state, acted)
        return state, ok, reason

    def refresh_refs(self, props: Properties) -> List[str]:
        return list(props.get("subscribe") or [])

    def after_noop(self, props: Properties, plan: Plan, acted: Any, before: Any) -> Tuple[Any, bool, str]:
        raise NotImplementedError

    def changed(self, plan: Plan, before: Any, after: Any) -> bool:
        return bool(plan.actions)

    def desired_state_error(self, props: Properties, reason: str, acted: Any) -> str:
        return f"failed to reach desired state: {props.ensure}: {reason}"
