"""Cross-resource checks of a flattened manifest (manifest.md §Resolution pipeline): no
``type#name`` declared twice, and every ``require``/``subscribe`` naming a resource
declared earlier. Each returns its problems as lines, so a load reports all of them.
"""
from __future__ import annotations

from ccm.model.errors import did_you_mean
from ccm.model.resource import REFERENCE_FIELDS, Properties, is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

    from ccm.apply.manifest import ResourceEntry

    Flat = List[Tuple[int, str, Dict[str, Any]]]


def _resource_line(text: str, idx: int, raw_name: Any, occurrence: int = 0) -> Optional[int]:
    """The 1-based line of resource list item ``idx`` (or of its ``raw_name`` element in
    the list form), found only when an error needs it."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    except Exception:
        return None

    def child(node: Any, key: str) -> Any:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    return v
        return None

    seq = child(child(root, "ccm"), "resources")
    if not isinstance(seq, yaml.SequenceNode) or not 0 < idx <= len(seq.value):
        return None
    item = seq.value[idx - 1]
    if isinstance(item, yaml.MappingNode) and len(item.value) == 1 and isinstance(item.value[0][1], yaml.SequenceNode):
        matches = [e for e in item.value[0][1].value if child(e, str(raw_name)) is not None]
        if occurrence < len(matches):
            return int(matches[occurrence].start_mark.line) + 1
    return int(item.start_mark.line) + 1


def check_duplicates(entries: List[Optional[ResourceEntry]], flat: Flat,
                     text: str) -> List[str]:
    """The same ``type#name`` twice (after templating and defaults): both places named."""
    seen: Dict[str, int] = {}
    problems: List[str] = []

    def where(i: int) -> str:
        idx, _t, raw = flat[i]
        occurrence = sum(1 for j in range(i) if flat[j][0] == idx and flat[j][2].get("name") == raw.get("name"))
        line = _resource_line(text, idx, raw.get("name"), occurrence)
        return f"resource {idx}" + (f" (line {line})" if line else "")

    for i, entry in enumerate(entries):
        if entry is None or is_templated(entry.props.name):
            continue
        rid = entry.props.resource_id
        if rid in seen:
            problems.append(f"duplicate resource {rid}: declared as {where(seen[rid])} and again as {where(i)}")
        else:
            seen[rid] = i
    return problems


def _ref_fields(props: Properties) -> List[Tuple[str, str]]:
    out = []
    for key in REFERENCE_FIELDS:
        refs = props.values.get(key)
        if refs and any(f.key == key for f in props.fields):
            for ref in refs:
                out.append((key, ref))
    return out


def _ids(i: int, entry: Optional[ResourceEntry], flat: Optional[Flat]) -> Tuple[str, str, str]:
    """(type, name, alias) of resource ``i``: its entry's, or its raw ones when rejected."""
    if entry is not None:
        return entry.props.type_name, entry.props.name, entry.props.alias
    if flat is not None and i < len(flat):
        raw = flat[i][2]
        return flat[i][1], str(raw.get("name") or ""), str(raw.get("alias") or "")
    return "", "", ""


def _declared_at(entries: List[Optional[ResourceEntry]], flat: Optional[Flat]) -> Dict[str, int]:
    """``type#name`` and ``type#alias`` -> the list item first declaring it."""
    at: Dict[str, int] = {}
    for i, entry in enumerate(entries):
        t, n, a = _ids(i, entry, flat)
        index = entry.index if entry is not None else (flat[i][0] if flat is not None and i < len(flat) else 0)
        for key in (n, a):
            if t and key:
                at.setdefault(f"{t}#{key}", index)
    return at


def _unresolved(entry: ResourceEntry, declared: Set[Tuple[str, str]], session: Any) -> Iterator[Tuple[str, str]]:
    """(field, reference) of ``entry`` naming nothing declared so far nor held by ``session``."""
    for key, ref in _ref_fields(entry.props):
        if not isinstance(ref, str) or is_templated(ref) or "#" not in ref:
            continue
        t, n = ref.split("#", 1)
        if (t, n) in declared:
            continue
        try:
            if session is not None and session.events_for(t, n):
                continue
        except Exception:
            pass
        yield key, ref


def _reference_problem(entry: ResourceEntry, key: str, ref: str, later: Dict[str, int],
                       declared_names: Dict[str, List[str]]) -> str:
    message = (f"invalid manifest resource {entry.index} ({entry.label}): {key}: {ref!r} names a "
               f"resource not declared earlier in this manifest")
    if ref in later and later[ref] >= entry.index:
        return message + f" (it is declared later, as resource {later[ref]}: move it before this one)"
    t, n = ref.split("#", 1)
    close = did_you_mean(n, declared_names.get(t, []))
    if close:
        message += close.replace("`", f"`{t}#", 1)
    return message


def check_references(entries: List[Optional[ResourceEntry]], session: Any,
                     flat: Optional[Flat] = None) -> List[str]:
    """A ``require``/``subscribe`` must name a resource declared earlier in the manifest,
    unless the session store in use already holds it (shell sessions, nested applies).
    Resources rejected for other reasons (``None`` entries) still count as declared, under
    their raw name from ``flat``, so one mistake is not reported twice."""
    later = _declared_at(entries, flat)
    # (type, name) and (type, alias) of every resource declared so far: one lookup per
    # reference (scanning the declared list made a long require chain quadratic)
    declared: Set[Tuple[str, str]] = set()
    declared_names: Dict[str, List[str]] = {}   # type -> names in declaration order (did-you-mean)
    problems: List[str] = []
    for i, entry in enumerate(entries):
        if entry is not None:
            problems.extend(_reference_problem(entry, key, ref, later, declared_names)
                            for key, ref in _unresolved(entry, declared, session))
        dt, dn, da = _ids(i, entry, flat)
        declared.add((dt, dn))
        declared.add((dt, da))
        declared_names.setdefault(dt, []).append(dn)
    return problems
