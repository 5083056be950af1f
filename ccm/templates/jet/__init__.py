"""Jet template renderer (the CloudyKit/jet v6 language, the subset CCM uses).

What: ``render_jet(source, variables, ...)`` renders a Jet template to text.
Used by manifests' ``resources_jet_file``, the ``jet()`` expression function,
``template('x.jet')`` and the scaffold ``jet`` engine.

Guarantees: pure (no I/O except through the ``loader`` and the functions the
caller passes); output is raw (no HTML escaping, CCM renders config files);
values print as Go's ``fmt.Sprint`` does (``go_sprint``); maps are ranged in
sorted key order (Go's order is random, so any fixed order is faithful).

Supported: text, ``{* comments *}``, trim markers ``[[- `` / `` -]]``, custom
delimiters, literals (strings with Go escapes, raw strings, chars, ints,
floats, true/false/nil), identifiers, ``.`` / ``.field`` on the context,
chains ``a.b.c``, index ``x[k]``, slices ``x[a:b]``, calls ``f(a)``, method
calls on objects, ``+ - * / %`` (Jet's int/float rules), ``== != < > <= >=``,
``&& || !``, ternary, pipelines ``x | f | g: a | h(a, _)``, prefix calls
``f: a, b``, ``x := e`` / ``x = e`` / ``a, b := e1, e2`` / ``v, ok := m[k]``,
``if``/``else if``/``else``, ``range`` (all Jet forms, ``else``),
``try``/``catch``, ``include`` (through ``loader``), ``block``/``yield``
(with parameters and defaults), ``return`` (ignored), and the builtins
``len isset lower upper hasPrefix hasSuffix repeat replace split trimSpace
html url json writeJson map slice array ints raw unsafe safeHtml safeJs``.

Not: ``extends``/``import``/``content``/``exec``, Go channels, the Jet
translator. Jet's quirks are kept where they decide output: with one range
variable over a list or map the variable is the index/key and ``.`` the value;
a non-nil empty list or map is true; a missing key at the end of a chain
(``Data.nokey``) prints nothing while ``.nokey`` on the context is an error.
"""
from __future__ import annotations

from ccm.templates.jet.runtime import render_jet
from ccm.templates.jet.values import JetError

__all__ = ["JetError", "render_jet"]
