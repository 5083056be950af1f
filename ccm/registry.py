"""The provider registry: resource types and their providers, imported lazily.

Types are listed once, as module paths, in ``ccm.resources.BUILTIN_TYPES``; each type
module exposes ``TYPE``, a ``TypeSpec``. Providers are registered per type by name
(duplicates rejected; each a ``ccm.model.provider.ProviderFactory``, whose declared
capabilities the registry reads) and selected by asking every factory ``is_manageable``
and taking the lowest priority number; ties go to the first registered.

The default registry is process-wide (guarded by a lock; tests can ``reset()`` it). The
other process-wide state is as explicit: the owner/group lookup cache
(``ccm.resources.ownership``, cleared when a run starts) and the directory store's
ordering clock (``ccm.session.directory``), both locked.
"""
from __future__ import annotations

import importlib
from _thread import RLock, allocate_lock   # threading's locks, without importing threading

from ccm.log import internal
from ccm.model.errors import NoSuitableProvider, ValidationError
from ccm.model.provider import ProviderFactory
from ccm.model.resource import COMMON_FIELDS, Field, Properties, TypeLogic
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

log = internal("ccm.registry")


class DuplicateProvider(ValueError):
    pass


class TypeSpec(ValueObject):
    """Everything ccm knows about one resource type, declared in one place."""

    name: str
    fields: Tuple[Field, ...]
    logic: str                                # "module:TypeLogicClass", imported on first use
    providers: Dict[str, str]                 # provider name -> "module:FactoryClass"
    validate: Optional[Callable[[Properties], None]]
    default_ensure: Optional[str]
    prepare: Optional[Callable[[Dict[str, Any]], None]]          # defaults applied before validation
    supports_status: bool
    status_unsupported_message: str
    # How the schema check sees still-templated fields: "keep" (as written) or "env" (K=V
    # entries); other fields' templates become placeholders (ccm.apply.schema).
    deferred_placeholders: Dict[str, str]
    status_name: Optional[Callable[[str], str]]          # `ccm status` name normalisation (file: abspath)
    # `ccm ensure <type>`: help text (empty: no subcommand), aliases, and "module:NAME" of
    # the ccm.cli.ensure_cmd.EnsureFlags that turns the subcommand's flags into properties.
    cli_help: str
    cli_aliases: Tuple[str, ...]
    cli_flags: str
    # (``logic``, its imported class, the shared instance of a ``stateless`` one): imported
    # once, not per resource (others get a fresh instance each); not part of repr or equality
    _logic_class: Tuple[str, Any, Optional[TypeLogic[Any]]]
    _all_fields: Tuple[Any, Tuple[Field, ...]]

    _value_fields = (
        "name", "fields", "logic", "providers", "validate", "default_ensure", "prepare", "supports_status",
        "status_unsupported_message", "deferred_placeholders", "status_name", "cli_help", "cli_aliases",
        "cli_flags",
    )

    def __init__(self, name: str, fields: Tuple[Field, ...], logic: str, providers: Dict[str, str],
                 validate: Optional[Callable[[Properties], None]] = None, default_ensure: Optional[str] = None,
                 prepare: Optional[Callable[[Dict[str, Any]], None]] = None, supports_status: bool = True,
                 status_unsupported_message: str = "", deferred_placeholders: Optional[Dict[str, str]] = None,
                 status_name: Optional[Callable[[str], str]] = None, cli_help: str = "",
                 cli_aliases: Tuple[str, ...] = (), cli_flags: str = "") -> None:
        self.name = name
        self.fields = fields
        self.logic = logic
        self.providers = providers
        self.validate = validate
        self.default_ensure = default_ensure
        self.prepare = prepare
        self.supports_status = supports_status
        self.status_unsupported_message = status_unsupported_message
        self.deferred_placeholders = {} if deferred_placeholders is None else deferred_placeholders
        self.status_name = status_name
        self.cli_help = cli_help
        self.cli_aliases = cli_aliases
        self.cli_flags = cli_flags
        self._logic_class = ("", None, None)
        self._all_fields = (None, ())

    def new_logic(self) -> TypeLogic[Any]:
        """The type's logic: a new one, or the one shared instance of a ``stateless`` class."""
        path, cls, shared = self._logic_class
        if cls is None or path != self.logic:
            cls = import_path(self.logic)
            if not (isinstance(cls, type) and issubclass(cls, TypeLogic)):   # once per class, not per resource
                raise TypeError(f"{self.logic} is not a TypeLogic")
            shared = cls() if cls.stateless else None
            self._logic_class = (self.logic, cls, shared)
        logic: TypeLogic[Any] = cls() if shared is None else shared
        return logic

    @property
    def all_fields(self) -> Tuple[Field, ...]:
        # one tuple per spec, shared by every resource's Properties (not one per resource)
        own, combined = self._all_fields
        if own is not self.fields:
            combined = COMMON_FIELDS + tuple(self.fields)
            self._all_fields = (self.fields, combined)
        return combined

    @property
    def field_map(self) -> Dict[str, Field]:
        return {f.key: f for f in self.all_fields}


def import_path(path: str) -> Any:
    """``module:attr`` (or ``module``) as the registry names its plug-ins: the one place a
    name from data is looked up on a module (genuine reflection, not a probe)."""
    module, _, attr = path.partition(":")
    mod = importlib.import_module(module)
    return getattr(mod, attr) if attr else mod


class Registry:
    def __init__(self, builtin_types: Optional[Mapping[str, str]] = None):
        self._lock = RLock()
        self._type_paths: Dict[str, str] = dict(builtin_types or {})
        self._types: Dict[str, TypeSpec] = {}
        self._factories: Dict[str, Dict[str, ProviderFactory]] = {}
        # type -> the factory ``select`` picks when nothing is forced, kept only for types
        # whose every factory declares ``manageable_is_constant`` (its answer depends on
        # neither facts, properties nor the host), so it cannot differ between resources
        self._constant_choice: Dict[str, ProviderFactory] = {}

    # --- types ---------------------------------------------------------------------

    def type_names(self) -> List[str]:
        return sorted(self._type_paths)

    def types_in_order(self) -> List[str]:
        """Type names in declaration order (``BUILTIN_TYPES``, then registered ones)."""
        return list(self._type_paths)

    def has_type(self, name: str) -> bool:
        return name in self._type_paths

    def spec(self, name: str) -> TypeSpec:
        with self._lock:
            if name in self._types:
                return self._types[name]
            if name not in self._type_paths:
                raise ValidationError(f"unknown resource type {name}")
            spec: TypeSpec = import_path(self._type_paths[name] + ":TYPE")
            self._types[name] = spec
            return spec

    def register_type(self, module_path: str, name: str) -> None:
        with self._lock:
            self._type_paths[name] = module_path
            self._types.pop(name, None)

    # --- providers -----------------------------------------------------------------

    def register(self, factory: ProviderFactory) -> None:
        if not isinstance(factory, ProviderFactory):
            raise TypeError(f"{factory!r} is not a ccm.model.provider.ProviderFactory")
        with self._lock:
            per_type = self._factories.setdefault(factory.type_name, {})
            if factory.name in per_type:
                raise DuplicateProvider(f"provider {factory.name} already registered for {factory.type_name}")
            per_type[factory.name] = factory
            self._constant_choice.pop(factory.type_name, None)

    def factories(self, type_name: str) -> List[ProviderFactory]:
        with self._lock:
            if type_name not in self._factories:
                spec = self.spec(type_name)
                for path in spec.providers.values():
                    self.register(import_path(path)())
            return list(self._factories.get(type_name, {}).values())

    def select(self, type_name: str, facts: Mapping[str, Any], props: Properties) -> ProviderFactory:
        """Pick the provider factory for ``props`` (a forced ``provider`` wins).

        Factories with the split probe (``split_probe``: ``is_usable`` + ``priority``, see
        ``ccm.model.provider.ProviderFactory``) are asked for a priority only when more
        than one of them is usable: a priority read from the facts decides nothing for a
        lone candidate, and reading one gathers every fact."""
        forced = props.values.get("provider")   # a dict read: every resource asks
        if not forced:   # the remembered choice first: every resource of a large manifest asks
            chosen = self._constant_choice.get(type_name)
            if chosen is not None:
                return chosen
        factories = self.factories(type_name)
        if forced:
            return _forced(factories, forced, facts, props)
        split = all(f.split_probe for f in factories)
        candidates = []
        for order, f in enumerate(factories):
            try:
                if split:
                    usable, prio = f.is_usable(props), 0
                else:
                    usable, prio = f.is_manageable(facts, props)
            except Exception as exc:  # a broken probe must not hide the others
                _probe_failed(f, exc)
                continue
            if usable:
                candidates.append((prio, order, f))
        if split and len(candidates) > 1:
            candidates = self._prioritised(candidates, facts, props)
        if not candidates:
            raise NoSuitableProvider("no suitable provider found")
        candidates.sort(key=lambda c: (c[0], c[1]))
        chosen = candidates[0][2]
        if all(f.manageable_is_constant for f in factories):
            with self._lock:
                if list(self._factories.get(type_name, {}).values()) == factories:
                    self._constant_choice[type_name] = chosen
        return chosen

    @staticmethod
    def _prioritised(candidates: List[Tuple[int, int, ProviderFactory]], facts: Mapping[str, Any],
                     props: Properties) -> List[Tuple[int, int, ProviderFactory]]:
        out = []
        for _prio, order, f in candidates:
            try:
                out.append((int(f.priority(facts, props)), order, f))
            except Exception as exc:  # as a failing is_manageable: skipped
                _probe_failed(f, exc)
        return out


def _forced(factories: List[ProviderFactory], forced: str, facts: Mapping[str, Any],
            props: Properties) -> ProviderFactory:
    """The factory a resource's ``provider`` property names, if this host can use it."""
    for f in factories:
        if f.name == forced:
            usable = f.is_usable(props) if f.split_probe else f.is_manageable(facts, props)[0]
            if not usable:
                raise NoSuitableProvider(
                    f"invalid resource: provider is not manageable: provider {forced} is not applicable to this host")
            return f
    raise NoSuitableProvider(f"invalid resource: provider not found: {forced}")


def _probe_failed(factory: ProviderFactory, exc: Exception) -> None:
    log.warning("Could not check if provider is manageable",
                extra={"kv": {"provider": factory.name, "error": str(exc)}})


_registry: Optional[Registry] = None
_registry_lock = allocate_lock()


def default_registry() -> Registry:
    global _registry
    with _registry_lock:
        if _registry is None:
            from ccm.resources import BUILTIN_TYPES

            _registry = Registry(BUILTIN_TYPES)
        return _registry


def reset() -> None:
    global _registry
    with _registry_lock:
        _registry = None
