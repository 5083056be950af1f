"""The manifest's resource list flattened (manifest.md §Resolution pipeline): each list
item is one type key holding a properties map, or a list of ``name: properties`` maps
with optional ``defaults``; the result is one raw property map per resource, in order.
Errors name the list item (``invalid manifest resource N``) and, where the YAML is
mis-indented, say how to fix it.
"""
from __future__ import annotations

from ccm.model.errors import ManifestError, did_you_mean
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    Flat = List[Tuple[int, str, Dict[str, Any]]]


def flatten(items: Any, registry: Any) -> Flat:
    """The resource list -> ordered (item index, type, raw properties), defaults applied."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ManifestError("ccm.resources must be a list")
    out: Flat = []
    for idx, item in enumerate(items, start=1):
        where = f"invalid manifest resource {idx}"
        if not isinstance(item, dict) or len(item) != 1:
            raise ManifestError(f"{where}: each resource list item must be a map with exactly one type key"
                                + _indent_hint(item, registry))
        (type_name, block), = item.items()
        if not registry.has_type(type_name):
            raise ManifestError(f"{where}: unknown resource type {type_name!r}"
                                + did_you_mean(str(type_name), registry.type_names()))
        if isinstance(block, list) and block and all(isinstance(e, dict) for e in block):
            out.extend(_named_elements(idx, where, type_name, block, registry))
        elif isinstance(block, dict):
            out.append((idx, type_name, dict(block)))
        else:
            raise ManifestError(f"{where}: {type_name} must be a list of name: properties maps or a properties map")
    return out


def _named_elements(idx: int, where: str, type_name: str, block: List[Dict[Any, Any]], registry: Any) -> Flat:
    """The list form of one item: every ``name: properties`` element over the defaults."""
    defaults = _defaults(where, type_name, block, registry)
    out: Flat = []
    for element in block:
        (name, props), = element.items()
        if name == "defaults":
            continue
        if props is not None and not isinstance(props, dict):
            raise ManifestError(f"{where} ({type_name}#{name}): properties must be a map")
        merged = dict(defaults or {})
        merged.update(props or {})   # a null element is treated like {} (upstream drops defaults)
        merged["name"] = name if isinstance(name, str) else str(name)
        out.append((idx, type_name, merged))
    return out


def _defaults(where: str, type_name: str, block: List[Dict[Any, Any]], registry: Any) -> Optional[Dict[str, Any]]:
    """The item's ``defaults`` element (at most one), every element checked to hold one name."""
    defaults: Optional[Dict[str, Any]] = None
    for element in block:
        if len(element) != 1:
            raise ManifestError(f"{where}: multiple resource names found in {type_name} resource"
                                + _element_indent_hint(element, registry.spec(type_name)))
        (name, props), = element.items()
        if name == "defaults":
            if defaults is not None:
                raise ManifestError(f"{where}: multiple defaults found in {type_name} resource")
            if props is not None and not isinstance(props, dict):
                raise ManifestError(f"{where}: defaults must be a map")
            defaults = dict(props or {})
    return defaults


def _field_keys(spec: Any) -> List[str]:
    return [f.key for f in spec.all_fields]


def _indent_hint(item: Any, registry: Any) -> str:
    """``- file:`` followed by ``ensure: present`` at the level of ``file``: say so."""
    if not isinstance(item, dict):
        return ""
    types = [k for k in item if isinstance(k, str) and registry.has_type(k)]
    if len(types) != 1:
        return ""
    others = [k for k in item if k != types[0]]
    fields = _field_keys(registry.spec(types[0]))
    props = [k for k in others if k in fields]
    if props and len(props) == len(others):
        return _hint(props, types[0])
    return ""


def _element_indent_hint(element: Any, spec: Any) -> str:
    """``- nginx:`` followed by ``ensure: present`` at the level of the name: say so."""
    fields = _field_keys(spec)
    names = [k for k in element if k not in fields]
    props = [k for k in element if k in fields]
    if len(names) == 1 and props:
        return _hint(props, repr(names[0]))
    return ""


def _hint(props: List[Any], owner: str) -> str:
    one = len(props) == 1
    return (f" (hint: {', '.join(map(repr, props))} {'is a property' if one else 'are properties'}"
            f" of {owner}: indent {'it' if one else 'them'} under {owner})")
