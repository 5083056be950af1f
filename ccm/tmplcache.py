"""Templated manifests fast (issue 27 item 8): the seam and its switch.

Three shortcuts, all off with ``CCM_TEMPLATE_CACHE=0`` (then a templated manifest loads in
full on every run, every template expression runs against the full environment built per
resource, and a templated file content is never batched, as before):

* the compiled-plan cache (``ccm.apply.plancache``) also keeps a manifest whose templates
  all sit in fields rendered at run time (``DEFERRED``: a file's ``content``...): the plan
  holds the templates, not what they render, so nothing it stores depends on ``Data`` or
  ``Facts`` beyond the resolved data its digest already checks;
* a template expression that only reads one value of ``Data`` or ``Facts`` (``{{ Data.by
  }}``, ``{{ Facts.host.info.hostname }}``) reads it through ``ProbedEnvironment.probe``:
  ``Data`` from the manager's data, a fact from the cheapest source that gives the value
  the gathered facts would have (``Manager.facts_view().probe``), so a run whose templates
  read only such values neither gathers the facts nor builds the environment. A missing or
  null value (an error or a warning to report) goes through the full evaluation;
* a file content whose template reads only such values (``only_probes``: no ``readFile``,
  no function) may be batched on a first run (``ccm.apply.batch``): it reads no file.

The differential test against the plain path: ``tests/engine/test_templated_runs_equal_the_plain_path.py``.

Not: a cache of rendered values (a template renders again on every run).
"""
from __future__ import annotations

import os
from functools import lru_cache
from sys import intern

from ccm.lazymap import LazyMapping, value_at
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

SWITCH = "CCM_TEMPLATE_CACHE"
ROOTS = ("Data", "Facts")   # the environment's names a probe may answer
_TABLE_MAX = 200_000        # texts kept (an agent's manifests change): then the table starts again

# text -> its parts as a stored plan gives them (``preload``): literal strings and
# (expression source, offset, probe path or None) tuples, so the templates of a manifest
# from the plan cache are neither scanned nor parsed again (``ccm.templates.scan.scan``
# reads it too)
TABLE: Dict[str, List[Any]] = {}


def enabled() -> bool:
    """Whether the shortcuts are on (``CCM_TEMPLATE_CACHE`` is not ``0``)."""
    return os.environ.get(SWITCH, "").strip() != "0"


_NOT_YET = object()


class ProbedEnvironment(LazyMapping):
    """The lazy template environment of a manager with the shortcuts on (``loader`` builds
    it): ``probe`` answers a ``Data``/``Facts`` path without building it, ``Data`` from
    ``data`` (what the environment holds), a fact from ``facts_probe`` (the facts cache's:
    the value the gathered facts have, from the cheapest source that can tell); None for a
    root one of the ``replaced`` names (the extra template functions) takes over. Each path
    is asked once: a run's resources share one while no template resolves it
    (``ccm.resources.base.RunFlow``)."""

    def __init__(self, loader: Callable[[], Dict[str, Any]], data: Mapping[str, Any],
                 facts_probe: Callable[[Tuple[str, ...]], Any], replaced: Mapping[str, Any]) -> None:
        super().__init__(loader)
        self._answers: Dict[Tuple[str, ...], Any] = {}
        self._data, self._facts_probe, self._replaced = data, facts_probe, replaced

    def probe(self, path: Tuple[str, ...]) -> Any:
        if self.resolved:
            return value_at(self.resolve(), path)
        value = self._answers.get(path, _NOT_YET)
        if value is _NOT_YET:
            value = self._answers[path] = self._ask(path)
        return value

    def _ask(self, path: Tuple[str, ...]) -> Any:
        root = path[0]
        if root in self._replaced:   # make_environment lets a function replace it
            return None
        if root == "Facts":
            return self._facts_probe(path[1:])
        if root == "Data":
            return value_at(self._data, path[1:])
        return None


def environment(loader: Callable[[], Dict[str, Any]], data: Mapping[str, Any],
                facts_probe: Callable[[Tuple[str, ...]], Any], replaced: Mapping[str, Any]) -> LazyMapping:
    """A manager's lazy template environment: a ``ProbedEnvironment`` when the shortcuts
    are on, else the plain ``LazyMapping`` of ``loader``."""
    if enabled():
        return ProbedEnvironment(loader, data, facts_probe, replaced)
    return LazyMapping(loader)


def only_probes(text: str) -> bool:
    """Whether every expression of the template ``text`` reads one ``Data`` value or fact
    (``probe_path``): it reads no file and calls no function."""
    parts = TABLE.get(text)
    if parts is None:
        from ccm.templates.scan import scan

        return all(isinstance(p, str) or probe_path(p.source) is not None for p in scan(text))
    for p in parts:
        if type(p) is not str and (type(p) is not tuple or len(p) != 3 or type(p[2]) is not tuple):
            return False
    return True


@lru_cache(maxsize=1024)
def probe_path(source: str) -> Optional[Tuple[str, ...]]:
    """("Data", "by") for the expression ``Data.by`` (a plain chain of string keys from
    ``Data`` or ``Facts``: no optional link, index, call or operator); None for any other."""
    from ccm.expr.errors import ExprError
    from ccm.expr.nodes import Ident, Literal, Member
    from ccm.expr.parser import parse

    try:
        node = parse(source)
    except (ExprError, RecursionError):
        return None
    keys = []
    while type(node) is Member:
        if node.optional or type(node.key) is not Literal or type(node.key.value) is not str:
            return None
        keys.append(node.key.value)
        node = node.obj
    if type(node) is not Ident or node.name not in ROOTS or not keys:
        return None
    return (node.name,) + tuple(reversed(keys))


def stored_parts(text: str) -> List[Any]:
    """``text`` scanned, as plain data for a plan (``preload`` takes it back): literal
    strings and (source, offset, probe path or None) tuples; short strings interned and
    equal tuples one object, so the stored plan holds each once."""
    from ccm.templates.scan import scan

    out: List[Any] = []
    for part in scan(text):
        if isinstance(part, str):
            out.append(intern(part) if len(part) <= 64 else part)
        else:
            expression = (intern(part.source), part.offset, probe_path(part.source))
            out.append(_SHARED.setdefault(expression, expression))   # the same one in every text
    if len(_SHARED) > 4096:
        _SHARED.clear()
    return out


_SHARED: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}


def preload(table: Dict[str, Any]) -> None:
    """Take the parts of these texts from ``table`` (text -> ``stored_parts``); a table of
    another shape raises ``ValueError`` and loads nothing. (A row of another shape is no
    error either: ``render`` and ``scan`` then take the plain way.)"""
    for text, parts in table.items():
        if type(text) is not str or type(parts) is not list:
            raise ValueError("damaged template table")
    if len(TABLE) + len(table) > _TABLE_MAX:
        TABLE.clear()
    TABLE.update(table)   # a nested manifest's plan adds to its parent's


def render(text: str, env: ProbedEnvironment, typed: bool = False) -> Any:
    """``text`` rendered from its stored parts when every expression in it reads one value
    that ``env.probe`` gives (not nil), as ``ccm.templates.render_string`` would render
    it; None: render it the plain way (not stored, another expression, a nil to report, a
    lone expression rendered ``typed``)."""
    parts = TABLE.get(text)
    if parts is None:
        return None
    probe = env.probe
    out: List[str] = []
    try:
        for part in parts:
            if type(part) is str:
                out.append(part)
                continue
            path = part[2]   # (source, offset, probe path or None)
            if type(path) is not tuple:
                return None
            value = probe(path)
            if value is None:
                return None
            if not isinstance(value, str):
                from ccm.gocompat.fmt import go_sprint

                value = go_sprint(value)
            out.append(value)
    except (TypeError, IndexError, KeyError):   # a row of another shape: the plain way
        return None
    if typed and not any(type(p) is str and p.strip() for p in parts):   # a lone expression keeps its type
        return None
    return "".join(out)
