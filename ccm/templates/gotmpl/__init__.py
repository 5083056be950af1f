"""Go ``text/template`` renderer (the subset the scaffold ``go`` engine needs).

What: ``render_go(source, dot, ...)`` renders a Go text/template to text.

Guarantees: Go's semantics where they decide output: truthiness, ``eq``/``lt``
typing rules, ``and``/``or`` returning an operand (short-circuit), pipelines
passing the value as the *last* argument, ``range`` over lists, maps (sorted
keys) and integers, ``<no value>`` for a missing map key or nil (but printing a key
missing from ``.Data``/``.Facts`` is an error, as in the other engines), values printed
as ``fmt.Sprint`` (``go_sprint``), ``printf`` verbs with Go's ``%!v(...)``
complaints. Field access works on plain dicts (upstream's reflection-wrapped
maps cannot be traversed; ours can, as the spec asks) and on object attributes.

Supported: text, comments ``{{/* */}}``, trim markers ``{{- `` / `` -}}``,
custom delimiters, ``.``, ``.a.b``, ``$``, ``$x.a``, ``(pipe).a``, literals,
``$x :=`` / ``$x =`` / ``range $i, $v :=``, ``if``/``else if``/``else``,
``with``/``else with``/``else``, ``range``/``else``/``break``/``continue``,
``define``/``template``/``block``, builtins ``and or not eq ne lt le gt ge len
index print printf println html js urlquery call``, and every Sprig 3.3 function
(``ccm.templates.gotmpl.sprig``; its ``slice`` replaces the builtin, as upstream's
``template.Funcs`` does), with Go's argument conversion (``gofunc``).

Not: complex numbers, ``%#v`` on arbitrary objects, ``missingkey`` options, HTML
escaping (html/template); the Sprig functions that need crypto the standard library lacks
refuse (``sprig_crypto``).
"""
from __future__ import annotations

from ccm.gocompat.fmt import go_sprintf
from ccm.templates.gotmpl.exec import render_go
from ccm.templates.gotmpl.values import GoTemplateError

__all__ = ["GoTemplateError", "go_sprintf", "render_go"]
