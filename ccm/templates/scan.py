"""Finding and rendering ``{{ expr }}`` / ``${ expr }`` inside strings.

Scanning rules (spec data-and-templates §3.1): ``{{`` ends at the first ``}}``
outside a quoted string; ``${`` ends at the ``}`` that balances its braces;
``${{`` is a literal ``$`` followed by a ``{{`` expression; quotes (``"``, ``'``
with backslash escapes, `````` ` `````` raw) hide delimiters; an unterminated
opener is literal text. Rendered values are never re-scanned.

Modes: string (``render_string``), typed (``render_typed``: a lone expression
keeps its native value) and match (``render_match``: Hiera order entries).
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from ccm.expr import compile_expr
from ccm.gocompat.fmt import go_sprint
from ccm.tmplcache import TABLE, ProbedEnvironment, probe_path
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, FrozenSet, List, Optional, Set, Tuple, Union

    Part = Union[str, "Expression"]

__all__ = ["Expression", "scan", "has_expressions", "check_template", "functions_called", "render_string",
           "render_typed", "render_match", "render_value"]


class Expression(NamedTuple):
    source: str   # inner text, whitespace-trimmed
    offset: int   # 0-based index of the opener in the scanned text


def _skip_quoted(text: str, i: int) -> int:
    """Index just past the quoted string starting at ``text[i]``, or -1 if unterminated."""
    quote = text[i]
    i += 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and quote != "`":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return -1


def _end_of_double(text: str, start: int) -> int:
    """Index of the closing ``}}`` for a ``{{`` whose body starts at ``start``."""
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'`":
            i = _skip_quoted(text, i)
            if i < 0:
                return -1
            continue
        if ch == "}" and text.startswith("}}", i):
            return i
        i += 1
    return -1


def _end_of_dollar(text: str, start: int) -> int:
    """Index of the ``}`` balancing a ``${`` whose body starts at ``start``."""
    depth = 1
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'`":
            i = _skip_quoted(text, i)
            if i < 0:
                return -1
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def scan(text: str) -> Tuple[Part, ...]:
    """Split ``text`` into literal strings and ``Expression`` parts (a text of a stored
    plan: from its parts, ``ccm.tmplcache.TABLE``)."""
    stored = TABLE.get(text) if TABLE else None
    if stored is None:
        return _scan(text)
    try:
        return tuple(p if type(p) is str else Expression(str(p[0]), int(p[1])) for p in stored)
    except (TypeError, ValueError, IndexError):   # a row of another shape: scan it
        return _scan(text)


@lru_cache(maxsize=4096)
def _scan(text: str) -> Tuple[Part, ...]:
    parts: List[Part] = []
    literal: List[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{" and text.startswith("{{", i):
            opener, find_end, closer = "{{", _end_of_double, 2
        elif ch == "$" and text.startswith("${", i) and not text.startswith("${{", i):
            opener, find_end, closer = "${", _end_of_dollar, 1
        else:
            literal.append(ch)
            i += 1
            continue
        end = find_end(text, i + 2)
        if end < 0:   # never closed: the opener is text
            literal.append(opener)
            i += 2
            continue
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(Expression(text[i + 2:end].strip(), i))
        i = end + closer
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def has_expressions(text: str) -> bool:
    """True when ``text`` contains at least one ``{{ }}`` or ``${ }`` expression."""
    if "{{" not in text and "${" not in text:
        return False
    return any(isinstance(p, Expression) for p in scan(text))


def functions_called(text: str) -> FrozenSet[str]:
    """Names of the functions every expression in ``text`` calls (compiles, never runs)."""
    if "{{" not in text and "${" not in text:
        return frozenset()
    names: Set[str] = set()
    for part in scan(text):
        if isinstance(part, Expression):
            names |= compile_expr(part.source).function_names
    return frozenset(names)


def check_template(text: str) -> None:
    """Compile every expression in ``text`` without evaluating; raise ``ExprError``."""
    if "{{" not in text and "${" not in text:
        return
    for part in scan(text):
        if isinstance(part, Expression):
            compile_expr(part.source)


def _evaluate(part: Expression, env: Mapping[str, Any]) -> Any:
    if type(env) is ProbedEnvironment:   # ccm.tmplcache: one Data value or fact, read alone
        path = probe_path(part.source)
        if path is not None:
            value = env.probe(path)
            if value is not None:   # nil: the full run, for its error or warning
                return value
    return compile_expr(part.source).run(env)


def render_string(text: str, env: Mapping[str, Any]) -> str:
    """Replace every expression by its ``%v`` text; literal text is kept.

    An expression that reads a key missing from ``Data``/``Facts`` (a typo) fails here
    instead of writing ``<nil>``; a key present with an explicit null still renders
    ``<nil>``, with a warning (see ``check_nil``).
    """
    if "{{" not in text and "${" not in text:
        return text
    out: List[str] = []
    for part in scan(text):
        if isinstance(part, str):
            out.append(part)
        else:
            value = _evaluate(part, env)
            if value is None:
                check_nil(part.source, env)
            out.append(go_sprint(value))
    return "".join(out)


_ROOTS = ("Data", "Facts", "data", "facts")


def _member_path(node: Any) -> Optional[Tuple[str, List[Any]]]:
    """``Data.a.b`` / ``Facts["x"][0]`` -> ("Data", ["a", "b"]); anything else -> None."""
    from ccm.expr import parser as ast

    keys: List[Any] = []
    while isinstance(node, ast.Member):
        if node.optional or not isinstance(node.key, ast.Literal):
            return None
        keys.append(node.key.value)
        node = node.obj
    if not isinstance(node, ast.Ident) or node.name not in _ROOTS or not keys:
        return None
    return node.name, keys[::-1]


def check_nil(source: str, env: Mapping[str, Any]) -> None:
    """``source`` evaluated to nil in a string: fail when that is a missing ``Data``/``Facts``
    key (naming the expression and the closest existing key), warn when the key is present
    with an explicit null. Other expressions (``a ?? b``, calls, comparisons) are left alone."""
    from ccm.expr.errors import ExprError
    from ccm.expr.parser import parse
    from ccm.model.errors import did_you_mean

    try:
        path = _member_path(parse(source))
    except Exception:
        return
    if path is None:
        return
    root, keys = path
    try:
        current: Any = env[root]
    except KeyError:
        return
    walked = root
    for key in keys:
        if isinstance(current, Mapping) and isinstance(key, str):
            if key not in current:
                hint = did_you_mean(key, [k for k in current.keys() if isinstance(k, str)])
                raise ExprError(f"{{{{ {source} }}}}: {walked} has no key {key!r}{hint}; a missing key is not "
                                f"rendered into a string (use `{source} ?? \"default\"` if it may be absent)")
            current = current[key]
        elif isinstance(current, list) and isinstance(key, int) and not isinstance(key, bool):
            if not -len(current) <= key < len(current):
                raise ExprError(f"{{{{ {source} }}}}: {walked} has no index {key} (it has {len(current)} items)")
            current = current[key]
        else:
            return
        walked += f".{key}" if isinstance(key, str) else f"[{key}]"
    if current is None:
        from ccm.log import internal

        internal("ccm.templates").warning(f"{walked} is null and renders as <nil>", extra={"kv": {"key": walked}})


def render_typed(text: str, env: Mapping[str, Any]) -> Any:
    """A string that is exactly one expression yields its native value; else string mode."""
    if "{{" not in text and "${" not in text:
        return text
    parts = scan(text.strip())
    if len(parts) == 1 and isinstance(parts[0], Expression):
        return _evaluate(parts[0], env)
    return render_string(text, env)


def render_match(text: str, env: Mapping[str, Any]) -> Tuple[str, bool]:
    """String mode plus Hiera's "matched" flag.

    Text without expressions matches when non-empty; otherwise it matches when
    at least one expression produced something other than ``""`` or nil.
    """
    parts = scan(text) if ("{{" in text or "${" in text) else (text,)
    if not any(isinstance(p, Expression) for p in parts):
        return text, text != ""
    out: List[str] = []
    matched = False
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = _evaluate(part, env)
        if value is not None and value != "":
            matched = True
        out.append(go_sprint(value))
    return "".join(out), matched


def render_value(value: Any, env: Mapping[str, Any], typed: bool = False) -> Any:
    """Render every string inside ``value`` (walking lists and dicts); keys are kept.

    Returns new containers; the input is not modified.
    """
    if isinstance(value, str):
        return render_typed(value, env) if typed else render_string(value, env)
    if isinstance(value, dict):
        return {k: render_value(v, env, typed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [render_value(v, env, typed) for v in value]
    return value
