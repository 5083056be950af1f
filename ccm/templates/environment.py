"""The variables and functions templates see (spec data-and-templates §3.3).

``make_environment`` builds the full environment for resources: ``Facts``,
``Data``, ``Environ`` (missing keys read as ``""``), ``WorkingDir`` and the
functions ``lookup``, ``readFile``/``file``, ``template``, ``jet`` plus any
extra ones given (``kvGet``, ``registrations`` come from the NATS code).
``hiera_environment`` is the facts-only one used while resolving Hiera data.
The ``lookup()`` JSON snapshot is taken on first use and kept for the life of
the environment. Not: a place for NATS or network access.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping

from ccm.expr import ExprError
from ccm.templates import gjson
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["CCM_FUNCTIONS", "Environ", "make_environment", "hiera_environment"]

# The functions make_environment always provides (besides the expression builtins).
CCM_FUNCTIONS = frozenset({"lookup", "readFile", "file", "template", "jet"})


class Environ(dict[str, str]):
    """Environment variables; a missing name reads as ``""`` (Go's zero string)."""

    def __missing__(self, key: Any) -> str:
        return ""


def _json_default(value: Any) -> Any:
    if isinstance(value, Mapping):   # e.g. the manager's lazily gathered facts
        return dict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _parse_number(text: str) -> Any:
    # lookup(): a JSON number without "." is an integer (so 1e3 -> 1000)
    if "." in text:
        return float(text)
    value = float(text)
    return int(value) if value.is_integer() else value


def _snapshot(facts: Any, data: Any, environ: Any) -> Any:
    text = json.dumps({"facts": facts, "data": data, "environ": environ}, default=_json_default)
    return json.loads(text, parse_float=_parse_number)


def _lookup_function(facts: Any, data: Any, environ: Any, *, missing_is_empty: bool) -> Callable[..., Any]:
    cache: List[Any] = []

    def lookup(path: Any, default: Any = None) -> Any:
        if not isinstance(path, str):
            raise ExprError(f"lookup: path must be a string, not {type(path).__name__}")
        if not cache:
            cache.append(_snapshot(facts, data, environ))
        found, value = gjson.get(cache[0], path)
        if not found and path.startswith("env."):
            found, value = gjson.get(cache[0], "environ." + path[4:])
        if found:
            return value
        if default is not None:
            return default
        if missing_is_empty:
            return ""
        raise ExprError(f"missing key '{path}' in environment")

    return lookup


def _go_error(err: OSError, path: str) -> str:
    reason = (err.strerror or str(err))
    reason = reason[:1].lower() + reason[1:]
    return f"open {path}: {reason}"


def _render_checked(text: str, env: Mapping[str, Any]) -> Any:
    """``render_typed``, and a lone expression that yields nil gets the string renderer's
    missing-key check: ``template("{{ Data.prot }}")`` is a typo, not ``<nil>`` in a file."""
    from ccm.templates.scan import Expression, check_nil, render_typed, scan

    value = render_typed(text, env)
    if value is None:
        parts = scan(text.strip())
        if len(parts) == 1 and isinstance(parts[0], Expression):
            check_nil(parts[0].source, env)
    return value


def make_environment(*, facts: Optional[Mapping[str, Any]], data: Optional[Mapping[str, Any]],
                     environ: Optional[Mapping[str, str]], working_dir: Optional[str],
                     functions: Optional[Mapping[str, Callable[..., Any]]] = None) -> Dict[str, Any]:
    """Build the template environment for one resource (a fresh one per resource)."""
    facts = facts if facts is not None else {}
    data = data if data is not None else {}
    env_vars = Environ(environ or {})
    wd = working_dir or ""
    env: Dict[str, Any] = {
        "Facts": facts,
        "Data": data,
        "Environ": env_vars,
        "WorkingDir": wd,
    }

    def read_file(*args: Any) -> str:
        return _read_file(wd, args)

    def jet(*args: Any) -> str:
        return _jet(env, read_file, args)

    def template(*args: Any) -> Any:
        return _template(env, wd, read_file, jet, args)

    env["lookup"] = _lookup_function(facts, data, dict(env_vars), missing_is_empty=False)
    env["readFile"] = read_file
    env["file"] = read_file
    env["template"] = template
    env["jet"] = jet
    if functions:
        env.update(functions)
    return env


def _read_file(wd: str, args: Tuple[Any, ...]) -> str:
    """The ``readFile``/``file`` function: a regular file, relative to the working dir."""
    if len(args) != 1:
        raise ExprError("readFile requires a string argument")
    path = args[0]
    if not isinstance(path, str):
        raise ExprError(f"readFile: path must be a string, not {type(path).__name__}")
    full = path if os.path.isabs(path) else os.path.join(wd or os.getcwd(), path)
    from ccm.readfile import ReadError, open_regular, read_bytes

    try:
        os.close(open_regular(full, "readFile"))
    except ReadError:
        try:
            os.stat(full)
        except OSError as err:
            raise ExprError(f'failed to read file "{path}": working dir: "{wd}": {_go_error(err, full)}') from None
    try:
        return read_bytes(full, "readFile").decode("utf-8", "replace")
    except ReadError as err:
        raise ExprError(f'failed to read file "{path}": {err.message}') from None


def _jet(env: Dict[str, Any], read_file: Callable[..., str], args: Tuple[Any, ...]) -> str:
    """The ``jet`` function: a Jet body (or a ``.jet`` file) rendered with the environment."""
    if len(args) not in (1, 3):
        raise ExprError("jet requires 1 or 3 arguments")
    for arg, what in zip(args, ("template body", "left delimiter", "right delimiter")):
        if not isinstance(arg, str):
            from ccm.model.kinds import type_name

            raise ExprError(f"jet requires a string argument for {what}, not {type_name(arg)}")
    body = args[0]
    left, right = (args[1], args[2]) if len(args) == 3 else ("[[", "]]")
    if body.endswith(".jet"):
        body = read_file(body)
    from ccm.templates.jet import render_jet  # the Jet engine is only loaded when used
    # Jet sees facts/data/environ in both spellings and every function but
    # jet itself (spec §4); "." is the whole environment ([[ .Data.x ]])
    names = {k: v for k, v in env.items() if k != "jet"}
    names.update(facts=env["Facts"], data=env["Data"], environ=env["Environ"])
    return render_jet(body, names, functions=names, left=left, right=right, context=env)


def _template(env: Dict[str, Any], wd: str, read_file: Callable[..., str], jet: Callable[..., str],
              args: Tuple[Any, ...]) -> Any:
    """The ``template`` function: an inline template, a ``.templ`` file or a ``.jet`` file."""
    if len(args) != 1 or not isinstance(args[0], str):
        raise ExprError("template requires a string argument")
    source = args[0]
    if source.endswith(".jet"):
        return jet(source)
    if source.endswith(".templ"):
        return _render_checked(read_file(source), env)
    _refuse_file_name(source, wd)
    return _render_checked(source, env)


def _refuse_file_name(source: str, wd: Optional[str]) -> None:
    """``template(s)`` reads a file only for ``.templ`` and ``.jet`` names; any other ``s``
    is a template itself. One that names an existing file (``templates/app.tmpl``) is a
    mistake, never a template: rendering it would write the name in place of the file."""
    if not source or len(source) > 4096 or "\n" in source or "{{" in source:
        return
    if "/" not in source and "." not in source:   # a word, not a path ("yes", "web")
        return
    full = source if os.path.isabs(source) else os.path.join(wd or os.getcwd(), source)
    if os.path.isfile(full):
        raise ExprError(f'template: "{source}" names a file, but template() reads only files ending .templ '
                        "(rendered as {{ }}) or .jet (rendered as Jet); rename it, "
                        "or use readFile() for its text as it is")


def hiera_environment(facts: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """Facts-only environment for Hiera: only ``lookup()``, and a missing path is ``""``."""
    facts = facts if facts is not None else {}
    return {
        "Facts": facts,
        "Data": {},
        "Environ": Environ(),
        "WorkingDir": "",
        "lookup": _lookup_function(facts, {}, {}, missing_is_empty=True),
    }
