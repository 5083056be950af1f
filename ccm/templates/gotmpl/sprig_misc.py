"""Sprig's regex, path, OS, UUID, URL, network and semver functions (docs/strings.md
regex section, paths.md, os.md, uuid.md, url.md, network.md, semver.md).

Regular expressions are Go's RE2 syntax translated for Python's ``re``
(``ccm.gocompat.regexp``: what differs is listed there) and run under ccm's expression
limits (a nested quantifier such as ``(a+)+`` is refused, a search is bounded in time).
The plain regex functions fail as ``regexp.MustCompile`` panics (``regexp: Compile(...)``),
the ``must`` ones with the compile error; ``regexMatch`` of a bad pattern is false.
``env``/``expandenv`` read ccm's process environment; ``getHostByName`` is refused
(templates do no network look-ups).
"""
from __future__ import annotations

import os

from ccm.gocompat.gotypes import StringList
from ccm.gocompat.strconv import quote
from ccm.templates.gotmpl.gofunc import Row, refused, returns
from ccm.templates.gotmpl.values import FuncError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Tuple


# -- regex ------------------------------------------------------------------------------

def _re() -> Any:
    from ccm.gocompat import regexp as goregexp
    return goregexp


def _compile(pattern: str) -> Any:
    from ccm.expr import limits
    from ccm.gocompat import regexp as goregexp

    try:
        rx = goregexp.compile(pattern)
    except goregexp.RegexpError as err:
        raise FuncError(str(err)) from None
    limits.check_pattern(rx.pattern)
    return rx


def _bounded(pattern: str, text: str, run: Callable[[Any], Any]) -> Any:
    from ccm.expr import limits
    rx = _compile(pattern)
    return limits.bounded(lambda: run(rx), pattern, len(text))


def _must_compile_panic(err: FuncError, args: Tuple[Any, ...]) -> Any:
    """``regexp.MustCompile``'s panic text, what the plain regex functions report."""
    pattern = args[0]
    shown = f"`{pattern}`" if "`" not in pattern and pattern.isprintable() else quote(pattern)
    if str(err).startswith("error parsing regexp"):
        raise FuncError(f"regexp: Compile({shown}): {err}")
    raise err


def _replace(pattern: str, s: str, repl: str, literal: bool) -> str:
    from ccm.expr import limits
    from ccm.gocompat import regexp as goregexp

    result: str = _bounded(pattern, s, lambda rx: goregexp.replace_all(rx, s, repl, literal))
    limits.check_string_size("regexReplaceAll", len(result))
    return result


# -- paths (Go's path package; filepath is the same on Linux) --------------------------

def clean(p: str) -> str:
    """Go's ``path.Clean``: lexical, ``..`` past the root dropped, ``""`` is ``.``."""
    if p == "":
        return "."
    rooted = p.startswith("/")
    parts: List[str] = []
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(part)
    text = ("/" if rooted else "") + "/".join(parts)
    return text or "."


def base(p: str) -> str:
    if p == "":
        return "."
    p = p.rstrip("/")
    if "/" in p:
        p = p[p.rindex("/") + 1:]
    return p or "/"


def dirname(p: str) -> str:
    return clean(p[:p.rfind("/") + 1])


def ext(p: str) -> str:
    for i in range(len(p) - 1, -1, -1):
        if p[i] == "/":
            break
        if p[i] == ".":
            return p[i:]
    return ""


# -- OS ---------------------------------------------------------------------------------

def _shell_name(s: str) -> Tuple[Any, ...]:
    """(name, width) after a ``$``, as Go's ``os.Expand`` reads it."""
    special = "*#$@!?-0123456789"
    if s[0] == "{":
        if len(s) > 2 and s[1] in special and s[2] == "}":
            return s[1], 3
        end = s.find("}", 1)
        if end == 1:
            return "", 2
        return (s[1:end], end + 1) if end > 0 else ("", 1)
    if s[0] in special:
        return s[0], 1
    i = 0
    while i < len(s) and (s[i] == "_" or (s[i].isascii() and s[i].isalnum())):
        i += 1
    return s[:i], i


def expandenv(s: str, environ: Any = None) -> str:
    """Go's ``os.ExpandEnv``: ``$VAR`` and ``${VAR}`` replaced, unset ones by ``""``."""
    env = os.environ if environ is None else environ
    out: List[str] = []
    i = j = 0
    while j < len(s):
        if s[j] == "$" and j + 1 < len(s):
            out.append(s[i:j])
            name, width = _shell_name(s[j + 1:])
            if name:
                out.append(env.get(name, ""))
            elif not width:
                out.append("$")
            j += width
            i = j + 1
        j += 1
    return "".join(out) + s[i:]


def _uuidv4() -> str:
    import uuid   # it loads platform and subprocess: only when a template asks

    return str(uuid.uuid4())


# -- URL --------------------------------------------------------------------------------

def url_parse(raw: str) -> Dict[str, Any]:
    from ccm.gocompat import url as gourl

    try:
        u = gourl.parse(raw)
    except gourl.URLError as err:
        raise FuncError(f"unable to parse url: {err}") from None
    return {"scheme": u.scheme, "host": u.host, "hostname": u.hostname(), "path": u.path,
            "query": u.raw_query, "opaque": u.opaque, "fragment": u.fragment, "userinfo": u.userinfo()}


def _field(d: Dict[str, Any], key: str) -> str:
    if key not in d:
        return ""
    value = d[key]
    if not isinstance(value, str):
        from ccm.gocompat.gotypes import kind_name
        raise FuncError(f"unable to parse {key} key, must be of type string, but {kind_name(value)} found")
    return value


def url_join(d: Dict[str, Any]) -> str:
    from ccm.gocompat import url as gourl

    u = gourl.URL()
    u.scheme, u.host, u.path = _field(d, "scheme"), _field(d, "host"), _field(d, "path")
    u.raw_query, u.opaque, u.fragment = _field(d, "query"), _field(d, "opaque"), _field(d, "fragment")
    info = _field(d, "userinfo")
    if info:
        try:
            parsed = gourl.parse(f"proto://{info}@host")
        except gourl.URLError as err:
            raise FuncError(f"unable to parse userinfo in dict: {err}") from None
        u.user, u.password = parsed.user, parsed.password
    return u.string()


# -- semver -----------------------------------------------------------------------------

def _semver(text: str) -> Any:
    from ccm.gocompat import semver

    try:
        return semver.new_version(text)
    except semver.SemverError as err:
        raise FuncError(str(err)) from None


def _semver_compare(constraint: str, version: str) -> bool:
    from ccm.gocompat import semver

    try:
        return semver.new_constraint(constraint).check(semver.new_version(version))
    except semver.SemverError as err:
        raise FuncError(str(err)) from None


ROWS = [
    # strings.md: regular expressions
    Row("regexMatch", lambda p, s: _bounded(p, s, lambda rx: rx.search(s) is not None), "ss",
        must="mustRegexMatch", lenient=returns(False)),
    Row("regexFindAll", lambda p, s, n: StringList(_bounded(p, s, lambda rx: _re().find_all(rx, s, n))),
        "ssi", must="mustRegexFindAll", lenient=_must_compile_panic),
    Row("regexFind", lambda p, s: _bounded(p, s, lambda rx: (lambda m: m.group(0) if m else "")(rx.search(s))),
        "ss", must="mustRegexFind", lenient=_must_compile_panic),
    Row("regexReplaceAll", lambda p, s, r: _replace(p, s, r, False), "sss", must="mustRegexReplaceAll",
        lenient=_must_compile_panic),
    Row("regexReplaceAllLiteral", lambda p, s, r: _replace(p, s, r, True), "sss",
        must="mustRegexReplaceAllLiteral", lenient=_must_compile_panic),
    Row("regexSplit", lambda p, s, n: StringList(_bounded(p, s, lambda rx: _re().split(rx, s, n))), "ssi",
        must="mustRegexSplit", lenient=_must_compile_panic),
    Row("regexQuoteMeta", lambda s: _re().quote_meta(s), "s"),
    # paths.md
    Row("base", base, "s", aliases=("osBase",)),
    Row("dir", dirname, "s", aliases=("osDir",)),
    Row("clean", clean, "s", aliases=("osClean",)),
    Row("ext", ext, "s", aliases=("osExt",)),
    Row("isAbs", lambda p: p.startswith("/"), "s", aliases=("osIsAbs",)),
    # os.md, uuid.md
    Row("env", lambda name: os.environ.get(name, ""), "s"),
    Row("expandenv", expandenv, "s"),
    Row("uuidv4", _uuidv4, ""),
    # url.md, network.md
    Row("urlParse", url_parse, "s"),
    Row("urlJoin", url_join, "m"),
    refused("getHostByName", "templates do no network look-ups; put the address in the data"),
    # semver.md
    Row("semver", _semver, "s"),
    Row("semverCompare", _semver_compare, "ss"),
    # the example function every Sprig map has
    Row("hello", lambda: "Hello!", ""),
]
