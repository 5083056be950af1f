"""What ``ccm apply`` would fail on at run time, found by ``ccm validate`` without running anything.

Deferred fields (exec ``command``/``environment``/``cwd``/``creates``/``onlyif``/``unless``,
file ``content``/``source``, ...) are rendered only when their resource runs, after its
``control`` gate. ``deferred_problems`` renders them (and evaluates ``control``) once, in
the manifest's template environment, on a copy of each resource, with every function that
reads files, NATS or the network replaced by a stand-in: an expression that depends on
such a function cannot be judged here and is left alone (so is a resource whose
``control`` cannot be judged or skips it on this host). What fails then (an unknown name,
a missing ``Data``/``Facts`` key, a value of the wrong type) fails every apply with these
data and facts, and is reported; ``--fact``/``--facts`` give another host's facts.

``missing_sources`` reports a file ``source`` (a local path, after rendering) that does
not exist, unless an earlier resource of the manifest makes that path (a file of that
name, an exec or archive ``creates``, a path under an archive's ``extract_parent``); when
an earlier resource might make anything (an exec or archive without ``creates``, a
package, a nested ``apply``, a scaffold) it is a warning instead.
"""
from __future__ import annotations

import os

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, FrozenSet, List, Mapping, Tuple

# The environment's functions that only read facts and data (everything else stands in).
_PURE_FUNCTIONS = frozenset({"lookup"})
# What ``--render`` calls too: reads of local files (never NATS or the network).
_RENDER_FUNCTIONS = _PURE_FUNCTIONS | {"readFile", "file", "template", "jet"}


# The type whose ``source`` is checked, and the types that never make files: a resource of
# any other type (a package installs files, an exec, archive, scaffold or nested apply may
# make anything) makes what its ``creates`` names, else nobody knows what before the run.
_FILE = "file"
_MAKES_NO_FILES = frozenset({_FILE, "service"})


class _Unknowable(Exception):
    """Raised by a stand-in function: the expression needs something only a run knows."""


def _stand_in(name: str) -> Any:
    def call(*_args: Any, **_kwargs: Any) -> Any:
        raise _Unknowable(name)

    return call


def trial_environment(env: Mapping[str, Any], keep: FrozenSet[str] = _PURE_FUNCTIONS) -> Dict[str, Any]:
    """``env`` with every function not in ``keep`` (those doing I/O) replaced by a stand-in."""
    return {k: (_stand_in(k) if callable(v) and k not in keep else v) for k, v in env.items()}


def _control_runs(props: Any, env: Mapping[str, Any]) -> bool:
    """True when ``control`` lets the resource run on this host (False when it cannot tell)."""
    from ccm.resources.base import _control_allows

    try:
        return bool(_control_allows(props, env))
    except Exception:   # a control that fails is reported by the run itself, not guessed here
        return False


def _rendered(props: Any, env: Mapping[str, Any]) -> Tuple[Any, List[str], bool]:
    """(a copy of ``props`` with every deferred field that renders rendered, the error each
    field that fails would hit, whether every field rendered). A field that fails or
    reaches a stand-in keeps its template in the copy."""
    from ccm.model.errors import CCMError
    from ccm.model.resource import DEFERRED, Properties
    from ccm.resources import properties as P

    copy = Properties(props.type_name, dict(props.values), props.fields)
    errors: List[str] = []
    complete = True
    for f in props.fields:
        value = props.values.get(f.key)
        if f.template != DEFERRED or value is None:
            continue
        try:
            copy.values[f.key] = P.render_field(f, value, env)
        except _Unknowable:
            complete = False
        except CCMError as exc:
            complete = False
            if not isinstance(exc.__cause__, _Unknowable) and not isinstance(exc.__context__, _Unknowable):
                errors.append(str(exc))
    return copy, errors, complete


def rendered_now(props: Any, env: Mapping[str, Any]) -> Any:
    """``props`` with its deferred fields rendered as far as they can be before the run
    (``ccm apply --render``): files are read, NATS is not; what cannot be rendered yet
    is shown as written."""
    return _rendered(props, trial_environment(env, keep=_RENDER_FUNCTIONS))[0]


def deferred_problems(entries: List[Any], env: Mapping[str, Any]) -> Tuple[List[str], List[Any]]:
    """(a problem for each resource whose deferred templates fail in ``env``, the rendered
    properties of every resource that could be judged, in manifest order)."""
    trial = trial_environment(env)
    problems: List[str] = []
    rendered: List[Any] = []
    for entry in entries:
        props = entry.props
        if props.get("control") and not _control_runs(props, trial):
            continue
        copy, errors, complete = _rendered(props, trial)
        problems += [f"resource {entry.index} ({entry.label}): apply would fail: {e}" for e in errors]
        if complete:
            rendered.append((entry, copy))
    return problems, rendered


def _made_paths(props: Any, directory: str) -> Tuple[List[str], List[str]]:
    """(paths, directories whose contents) an earlier resource makes."""
    def full(p: Any) -> str:
        return os.path.normpath(os.path.join(directory, str(p)))

    paths = [full(props.get("creates"))] if isinstance(props.get("creates"), str) and props.get("creates") else []
    if props.type_name == _FILE and props.name:
        paths.append(full(props.name))
    trees = [full(props.get("extract_parent"))] if props.get("extract_parent") else []   # an archive's
    return paths, trees


def missing_sources(rendered: List[Any], directory: str) -> Tuple[List[str], List[str]]:
    """(problems, warnings): file ``source`` paths that do not exist (see the module text)."""
    problems: List[str] = []
    warnings: List[str] = []
    made: List[str] = []
    trees: List[str] = []
    unknown_maker = ""   # an earlier exec without ``creates``
    for entry, props in rendered:
        source = props.get("source")
        if props.type_name == _FILE and props.ensure != "absent" and isinstance(source, str) and source \
                and "://" not in source:
            path = os.path.normpath(os.path.join(directory, source))
            known = path in made or any(path.startswith(t.rstrip("/") + "/") for t in trees)
            if not known and not os.path.lexists(path):
                message = f"resource {entry.index} ({entry.label}): source: {source!r} does not exist ({path})"
                if unknown_maker:
                    warnings.append(f"warning: {message}: fine only if {unknown_maker} creates it")
                else:
                    problems.append(f"{message}: apply would fail")
        p, t = _made_paths(props, directory)
        made += p
        trees += t
        if not unknown_maker and props.type_name not in _MAKES_NO_FILES and not props.get("creates") \
                and not props.get("extract_parent"):
            unknown_maker = entry.label
    return problems, warnings
