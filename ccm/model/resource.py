"""Resource contracts: property fields, property sets, plans and the type-logic protocol.

A resource type is declared once, as data (a ``TypeSpec`` in ``ccm.registry``) made of
``Field`` descriptions plus a ``TypeLogic`` implementation. Nothing anywhere switches on
type names by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ccm.model.errors import ValidationError

# Field kinds.
STR = "str"
BOOL = "bool"
INT = "int"
STR_LIST = "str_list"
INT_LIST = "int_list"
STR_MAP = "str_map"          # string -> string, values templated in string mode
ANY_MAP = "any_map"          # free-form map; values templated in typed mode
POST_LIST = "post_list"      # list of single-key maps glob -> command
HEALTH_CHECKS = "health_checks"
CONTROL = "control"
REGISTRATIONS = "registrations"
ANY = "any"

# When a field's templates are rendered.
PARSE = "parse"        # while loading (and again when the resource is built)
DEFERRED = "deferred"  # after the control gate, when the resource runs
NEVER = "never"        # never templated (expressions themselves, or booleans/ints)


@dataclass(frozen=True)
class Field:
    key: str
    kind: str = STR
    template: str = PARSE
    default: Any = None
    choices: Tuple[str, ...] = ()
    always_emit: bool = False
    typed_keys: bool = False   # map keys templated too (scaffold data)
    redact: Optional[Callable[[Any], Any]] = None   # applied by to_dict (secrets never reach events)


COMMON_FIELDS: Tuple[Field, ...] = (
    Field("name"),
    Field("alias"),
    Field("ensure"),
    Field("provider"),
    Field("health_checks", HEALTH_CHECKS),
    Field("require", STR_LIST, template=NEVER),
    Field("control", CONTROL, template=NEVER),
    Field("register_when_stable", REGISTRATIONS),
)

HEALTH_CHECK_KEYS = ("command", "goss_rules", "name", "format", "tries", "try_sleep", "timeout")
CONTROL_KEYS = ("if", "unless")


def is_templated(value: Any) -> bool:
    """A string that still holds a ``{{ }}`` or ``${ }`` template (checks wait for its value)."""
    return isinstance(value, str) and ("{{" in value or "${" in value)


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {} or value is False


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
        for f in self.fields:
            v = self.values.get(f.key)
            if f.redact is not None and not is_empty(v):
                v = f.redact(v)
            if f.always_emit:
                out[f.key] = "" if v is None else v
            elif f.key == "content" and v is not None:
                out[f.key] = v   # an empty content string is meaningful (manage an empty file)
            elif not is_empty(v):
                out[f.key] = v
        return out

    def __repr__(self) -> str:
        return f"Properties({self.type_name}, {self.values!r})"


@dataclass
class Plan:
    """What a type decided to do. No actions means the resource is stable."""

    actions: Tuple[str, ...] = ()
    noop_message: str = ""
    refresh: bool = False
    reason: str = ""
    params: Dict[str, Any] = field(default_factory=dict)

    @property
    def stable(self) -> bool:
        return not self.actions


def parse_ref(ref: str, *, what: str = "require") -> Tuple[str, str]:
    """Split ``type#name``; a reference has exactly one ``#``."""
    if not isinstance(ref, str) or ref.count("#") != 1:
        raise ValidationError(f"invalid {what} reference {ref!r}: expected type#name", field=what)
    t, n = ref.split("#", 1)
    if not t or not n:
        raise ValidationError(f"invalid {what} reference {ref!r}: expected type#name", field=what)
    return t, n


class ResourceContext:
    """What a type's logic may use while it runs: the narrow slice of the manager.

    Built by the shared flow (``ccm.resources.base``) for each resource.
    """

    def __init__(self, *, noop: bool, working_dir: Optional[str], log: Any, runner: Any,
                 should_refresh: Callable[[Sequence[str]], bool], manager: Any = None,
                 facts: Optional[Mapping[str, Any]] = None, depth: int = 0):
        self.noop = noop
        self.working_dir = working_dir
        self.log = log
        self.runner = runner
        self.should_refresh = should_refresh
        self.manager = manager
        self.facts = facts if facts is not None else {}
        self.depth = depth


class TypeLogic:
    """The per-type decision logic the shared flow calls back into.

    ``plan`` and ``is_desired`` are pure: they see properties and an observed state, and
    do no I/O. ``status`` and ``act`` go through the provider. ``verify`` re-reads the
    state after acting; types whose convergence test needs what ``act`` returned (exec's
    exit code) override it.
    """

    supports_refresh = False

    def status(self, provider: Any, props: Properties, ctx: ResourceContext) -> Any:
        raise NotImplementedError

    def plan(self, props: Properties, state: Any, refresh: bool = False) -> Plan:
        raise NotImplementedError

    def act(self, provider: Any, props: Properties, plan: Plan, ctx: ResourceContext) -> Any:
        raise NotImplementedError

    def is_desired(self, props: Properties, state: Any, acted: Any = None) -> Tuple[bool, str]:
        raise NotImplementedError

    def verify(self, provider: Any, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[Any, bool, str]:
        state = self.status(provider, props, ctx)
        ok, reason = self.is_desired(props, state, acted)
        return state, ok, reason

    def refresh_refs(self, props: Properties) -> List[str]:
        return list(props.get("subscribe") or [])

    # Types whose act() must run in noop too (it honours ctx.noop itself, e.g. nested
    # manifests) set this and implement after_noop().
    acts_in_noop = False
    # True for types whose state reports "stable" as "no action was needed" (package,
    # service) rather than "the desired-state test passed".
    stable_means_no_action = False

    def after_noop(self, props: Properties, plan: Plan, acted: Any, before: Any) -> Tuple[Any, bool, str]:
        raise NotImplementedError

    def changed(self, plan: Plan, before: Any, after: Any) -> bool:
        return bool(plan.actions)

    def desired_state_error(self, props: Properties, reason: str, acted: Any) -> str:
        return f"failed to reach desired state: {props.ensure}: {reason}"


def iter_refs(values: Any) -> Iterator[str]:
    for v in values or []:
        yield v
