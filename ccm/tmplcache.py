"""Templated manifests fast (issue 27 item 8): the seam and its switch.

Two shortcuts, both off with ``CCM_TEMPLATE_CACHE=0`` (then a templated manifest loads in
full on every run and every template expression runs against the full environment, as
before):

* the compiled-plan cache (``ccm.apply.plancache``) also keeps a manifest whose templates
  all sit in fields rendered at run time (``DEFERRED``: a file's ``content``...): the plan
  holds the templates, not what they render, so nothing it stores depends on ``Data`` or
  ``Facts`` beyond the resolved data its digest already checks;
* a template expression that only reads one value of ``Data`` or ``Facts`` (``{{ Data.by
  }}``, ``{{ Facts.host.info.hostname }}``) reads it through ``ProbedEnvironment.probe``:
  ``Data`` from the manager's data, a fact from the cheapest source that gives the value
  the gathered facts would have (``Manager.facts_view().probe``), so a run whose templates
  read only such values neither gathers the facts nor builds the environment. A missing or
  null value (an error or a warning to report) goes through the full evaluation.

Not: a cache of rendered values (a template renders again on every run).
"""
from __future__ import annotations

import os
from functools import lru_cache

from ccm.lazymap import LazyMapping
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional, Tuple

SWITCH = "CCM_TEMPLATE_CACHE"
ROOTS = ("Data", "Facts")   # the environment's names a probe may answer


def enabled() -> bool:
    """Whether the shortcuts are on (``CCM_TEMPLATE_CACHE`` is not ``0``)."""
    return os.environ.get(SWITCH, "").strip() != "0"


class ProbedEnvironment(LazyMapping):
    """The lazy template environment of a manager with the shortcuts on: ``probe`` answers
    a ``Data``/``Facts`` path without building the environment (the manager's ``probe``)."""


@lru_cache(maxsize=1024)
def probe_path(source: str) -> Optional[Tuple[str, ...]]:
    """("Data", "by") for the expression ``Data.by`` (a plain chain of string keys from
    ``Data`` or ``Facts``: no optional link, index, call or operator); None for any other."""
    from ccm.expr.errors import ExprError
    from ccm.expr.parser import Ident, Literal, Member, parse

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
