"""A plugin definition as an argparse tree: what ``ccm NAME ...`` accepts and its ``--help``.

What: ``build(definition)`` makes the parser of ``ccm NAME`` (its commands as
subcommands, each with its arguments and flags as App Builder declares them through
fisk: ``required``, ``default``, ``enum``, ``placeholder``, ``env``, ``short``, ``type``,
booleans negatable when their default is true, ``--prompt``/``--no-prompt`` on a command
with a ``confirm_prompt``); ``values(command, namespace)`` gives the typed
``.Arguments`` and ``.Flags`` maps its templates see, after the ``validate`` expressions.

Guarantees: usage problems are ``UsageError`` (fisk's ``error: ...`` and usage, exit 1);
``--flag=VALUE`` on a boolean is refused, never read as true; no abbreviations. The
help of a command that has subcommands lists every command below it with its
arguments and flags (what fisk's ``--help-long`` shows). Not: running anything.
"""
from __future__ import annotations

import argparse
import os

from ccm.cli.common import ArgumentParser
from ccm.cli.plugins.definition import Command, Definition, Input, PluginError
from ccm.model.errors import UsageError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

LEAF = "_ccm_plugin_command"
_INT_BITS = {"int": 64, "integer": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINT_BITS = {"uint": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
_TRUE = ("1", "t", "true")
_FALSE = ("0", "f", "false")


def _go_int(text: str) -> int:
    """strconv.ParseInt(s, 0, 64): 0x/0o/0b prefixes, a leading 0 is octal, _ between digits."""
    sign = "-" if text.startswith("-") else ""
    body = text.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] in "01234567_":
        return int(sign + "0o" + body[1:], 0)
    return int(text, 0)


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"strconv.ParseBool: parsing {text!r}: invalid syntax")


def _int_converter(kind: str) -> Callable[[str], int]:
    signed = kind in _INT_BITS
    bits = _INT_BITS.get(kind) or _UINT_BITS[kind]
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)

    def to_int(text: str) -> int:
        try:
            value = _go_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range for {kind} ({low}..{high})")
        return value
    return to_int


def _to_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _path_converter(want_dir: bool) -> Callable[[str], str]:
    """fisk's ExistingFile / ExistingDir."""
    def existing(text: str) -> str:
        if not os.path.exists(text):
            raise argparse.ArgumentTypeError(f"path '{text}' does not exist")
        if os.path.isdir(text) != want_dir:
            raise argparse.ArgumentTypeError(f"'{text}' is a {'file' if want_dir else 'directory'}")
        return text
    return existing


def converter(kind: str) -> Callable[[str], Any]:
    """The function turning a command-line word into the value of an App Builder type."""
    if kind in _INT_BITS or kind in _UINT_BITS:
        return _int_converter(kind)
    if kind in ("float", "float32", "float64"):
        return _to_float
    if kind in ("existing_file", "existing_dir"):
        return _path_converter(kind == "existing_dir")
    if kind == "bool":
        return _parse_bool
    return str


def zero(kind: str) -> Any:
    """Go's zero value of the type (what an unset input reads as in a template)."""
    if kind in _INT_BITS or kind in _UINT_BITS or kind == "counter":
        return 0
    if kind in ("float", "float32", "float64"):
        return 0.0
    if kind == "bool":
        return False
    return ""


def _preset(inp: Input) -> Optional[str]:
    """The value used when the input is not given: its ``env`` variable, then its default."""
    if inp.env and os.environ.get(inp.env, "") != "":
        return os.environ[inp.env]
    return inp.default_text()


def _add_flag(p: argparse.ArgumentParser, inp: Input) -> None:
    names = [f"--{inp.name}"] + ([f"-{inp.short}"] if inp.short else [])
    dest = f"flag:{inp.name}"
    preset = _preset(inp)
    help_text = inp.description + (f" (env {inp.env})" if inp.env else "")
    if inp.enum:
        help_text += f" (one of: {', '.join(inp.enum)})"
    if inp.is_bool:
        try:
            default = _parse_bool(preset) if preset is not None else False
        except argparse.ArgumentTypeError:
            source = f"${inp.env}" if inp.env and os.environ.get(inp.env) == preset else "its default"
            raise UsageError(f"flag --{inp.name}: {source} is {preset!r}, not true or false") from None
        p.add_argument(*names, dest=dest, action="store_true", default=default, help=help_text)
        if inp.negatable:
            p.add_argument(f"--no-{inp.name}", dest=dest, action="store_false", help=argparse.SUPPRESS)
        return
    if inp.kind == "counter":
        p.add_argument(*names, dest=dest, action="count", default=int(preset or 0), help=help_text)
        return
    kwargs: Dict[str, Any] = {"dest": dest, "help": help_text,
                              "metavar": inp.placeholder or inp.name.upper()}
    if inp.enum:
        kwargs["choices"] = inp.enum
    else:
        kwargs["type"] = converter(inp.kind)
    if preset is not None:
        kwargs["default"] = preset   # argparse converts a string default with ``type``
    elif inp.required:
        kwargs["required"] = True
    p.add_argument(*names, **kwargs)


def _add_argument(p: argparse.ArgumentParser, inp: Input) -> None:
    kwargs: Dict[str, Any] = {"help": inp.description, "metavar": inp.name}
    if inp.enum:
        kwargs["choices"] = inp.enum
    else:
        kwargs["type"] = converter(inp.kind or "string")
    preset = inp.default_text()
    if not inp.required or preset is not None:
        kwargs["nargs"] = "?"
        kwargs["default"] = preset
    p.add_argument(f"arg:{inp.name}", **kwargs)


def _implicit_flags(cmd: Command) -> List[Tuple[str, str]]:
    """The flags ccm adds to a command: ``--no-prompt`` (App Builder's) and a manifest's ``--noop``."""
    out = []
    if cmd.confirm_prompt:
        out.append(("--[no-]prompt", "ask for confirmation before running (default: true)"))
    if cmd.type == "ccm_manifest" and not any(f.name == "noop" for f in cmd.flags):
        out.append(("--noop", "do not change anything"))
    return out


def _usage_line(cmd: Command) -> str:
    parts = [" ".join(cmd.path)]
    if cmd.flags or _implicit_flags(cmd):
        parts.append("[<flags>]")
    for a in cmd.arguments:
        parts.append(f"<{a.name}>" if a.required and a.default is None else f"[<{a.name}>]")
    return " ".join(parts)


def overview(commands: List[Command], indent: str = "  ") -> List[str]:
    """fisk's --help-long listing: each command, its help, then its flags."""
    lines: List[str] = []
    for cmd in commands:
        if cmd.type != "parent":
            lines.append(f"{indent}{_usage_line(cmd)}")
            lines.extend(f"{indent}    {line}" for line in cmd.description.strip().splitlines())
            for f in cmd.flags:
                value = "" if f.is_bool or f.kind == "counter" else f"={f.placeholder or f.name.upper()}"
                head = f"--{f.name}" + value
                if f.short:
                    head = f"-{f.short}, {head}"
                lines.append(f"{indent}    {head:<24}{f.description}")
            lines.extend(f"{indent}    {head:<24}{text}" for head, text in _implicit_flags(cmd))
            lines.append("")
        lines.extend(overview(cmd.children, indent))
    return lines


def _fill(p: argparse.ArgumentParser, cmd: Command) -> None:
    if cmd.type == "parent":
        _children(p, cmd.children, cmd.path)
        return
    p.set_defaults(**{LEAF: cmd})
    for a in cmd.arguments:
        _add_argument(p, a)
    for f in cmd.flags:
        _add_flag(p, f)
    if cmd.confirm_prompt:
        p.add_argument("--prompt", dest="flag:prompt", action="store_true", default=True,
                       help="ask for confirmation before running (--no-prompt: run without asking)")
        p.add_argument("--no-prompt", dest="flag:prompt", action="store_false", help=argparse.SUPPRESS)
    if cmd.type == "ccm_manifest" and not any(f.name == "noop" for f in cmd.flags):
        p.add_argument("--noop", dest="_ccm_noop", action="store_true", help="do not change anything")


def _children(p: argparse.ArgumentParser, commands: List[Command], path: Tuple[str, ...]) -> None:
    sub = p.add_subparsers(dest=f"_ccm_sub:{' '.join(path)}", metavar="<command>", parser_class=ArgumentParser)
    sub.required = True
    for cmd in commands:
        first = cmd.description.strip().splitlines()[0] if cmd.description.strip() else ""
        child = sub.add_parser(cmd.name, aliases=list(cmd.aliases), help=first, description=cmd.description,
                               prog=" ".join(("ccm",) + cmd.path), allow_abbrev=False)
        _fill(child, cmd)
        if cmd.type == "parent":
            child.epilog = "commands:\n" + "\n".join(overview(cmd.children)).rstrip()


def build(definition: Definition) -> ArgumentParser:
    """The parser of ``ccm NAME``; PluginError for a definition argparse cannot express."""
    try:
        return _build(definition)
    except UsageError:   # an environment variable's value, not the file
        raise
    except (argparse.ArgumentError, argparse.ArgumentTypeError, ValueError) as exc:
        raise PluginError(f"plugin {definition.path}: {exc}") from None


def _build(definition: Definition) -> ArgumentParser:
    top = definition.collapsed
    prog = f"ccm {definition.name}"
    if top is not None:
        p = ArgumentParser(prog=prog, description=top.description, allow_abbrev=False)
        _fill(p, top)
        if top.type == "parent":
            p.epilog = "commands:\n" + "\n".join(overview(top.children)).rstrip()
        return p
    p = ArgumentParser(prog=prog, description=definition.description, allow_abbrev=False,
                       epilog="commands:\n" + "\n".join(overview(definition.commands)).rstrip()
                       + ("\n\nUse 'ccm cheat' to access cheat sheet style help" if definition.cheats() else ""))
    _children(p, definition.commands, (definition.name,))
    return p


def values(cmd: Command, ns: argparse.Namespace) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(.Arguments, .Flags) of the chosen command, typed; each ``validate`` expression checked."""
    given = vars(ns)
    arguments: Dict[str, Any] = {}
    flags: Dict[str, Any] = {}
    for inputs, out, prefix in ((cmd.arguments, arguments, "arg:"), (cmd.flags, flags, "flag:")):
        for inp in inputs:
            value = given.get(prefix + inp.name)
            out[inp.name] = zero(inp.kind) if value is None else value
            if inp.validate:
                _validate(inp, out[inp.name])
    if cmd.confirm_prompt:
        flags["prompt"] = bool(given.get("flag:prompt", True))
    return arguments, flags


def _validate(inp: Input, value: Any) -> None:
    from ccm.expr import ExprError, compile_expr

    what = f"flag --{inp.name}" if inp.flag else f"argument {inp.name}"
    try:
        ok = compile_expr(inp.validate).run({"value": value})
    except ExprError as exc:
        raise UsageError(f"{what}: validation {inp.validate!r} failed: {exc}") from None
    if ok is not True:
        raise UsageError(f"{what}: {value!r} did not pass the validation {inp.validate!r}")
