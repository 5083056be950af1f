"""argparse's answer for a plain command line, without importing or building argparse.

A cron run of ``ccm apply`` pays for every millisecond of start-up, and importing
argparse and building a parser (its formatter, gettext, shutil) is several of them. A
command describes its flags once, as ``add_argument`` calls (``Option``: the positional
strings and keyword arguments); ``build`` turns that table into the argparse parser that
``--help``, errors, the man page and completions use, and ``parse`` gives the same values
for the command lines scripts and cron write, or ``None`` for everything else, which
then goes to that parser.

What ``parse`` accepts (anything else is ``None``): exact flag names (no abbreviations),
values as ``--flag=VALUE`` or ``--flag VALUE`` / ``-f VALUE`` where VALUE does not start
with ``-``, one value per positional (none missing, none extra), values within
``choices``. ``-h``/``--help``, ``--``, an unknown or abbreviated flag, a value that
starts with ``-``, ``=`` after a flag that takes no value: ``None`` (argparse decides,
with its own messages). The result has exactly the attributes argparse's namespace
would have, with the same values (tests/cli/test_argv_values_agree_with_argparse.py compares the two).

Not: a parser of its own; the supported ``add_argument`` keywords are ``action``
(store, store_true, store_false, append), ``dest``, ``default``, ``choices``, ``help``
and ``metavar``.
"""
from __future__ import annotations

from types import SimpleNamespace

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    import argparse

    Option = Tuple[Tuple[str, ...], Dict[str, Any]]  # the arguments of one add_argument call

SUPPRESS = "==SUPPRESS=="  # argparse.SUPPRESS (checked by the tests), without importing argparse
_ACTIONS = (None, "store", "store_true", "store_false", "append")
_KEYS = frozenset(("action", "dest", "default", "choices", "help", "metavar"))


def option(*names: str, **kwargs: Any) -> Option:
    """One row of a command's table, written like ``add_argument(*names, **kwargs)``."""
    if not names or set(kwargs) - _KEYS or kwargs.get("action") not in _ACTIONS:
        raise ValueError(f"fastargs cannot mirror add_argument{names!r} {sorted(kwargs)!r}")
    return names, kwargs


def bool_option(name: str, default: bool, help_text: str) -> List[Option]:
    """A negatable boolean flag: ``--name`` / ``--no-name``, both in --help."""
    dest = name.replace("-", "_")
    return [option(f"--{name}", dest=dest, action="store_true", default=default, help=help_text),
            option(f"--no-{name}", dest=dest, action="store_false", help=negated_help(name))]


def negated_help(name: str) -> str:
    return f"the opposite of --{name}"


def add_options(parser: "argparse.ArgumentParser", options: Sequence[Option]) -> None:
    import argparse

    for names, kwargs in options:
        if kwargs.get("help") == SUPPRESS:  # argparse tests identity: its own object
            kwargs = dict(kwargs, help=argparse.SUPPRESS)
        parser.add_argument(*names, **kwargs)


def _dest(names: Tuple[str, ...], kwargs: Dict[str, Any]) -> str:
    if "dest" in kwargs:
        return str(kwargs["dest"])
    longs = [n for n in names if n.startswith("--")]
    return (longs or list(names))[0].lstrip("-").replace("-", "_")


def _default(kwargs: Dict[str, Any]) -> Any:
    if "default" in kwargs:
        return kwargs["default"]
    return {"store_true": False, "store_false": True}.get(kwargs.get("action") or "store")


def parse(options: Sequence[Option], argv: Sequence[str]) -> Optional[SimpleNamespace]:
    """The namespace argparse would return for ``argv``, or None (see the module docstring)."""
    flags: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    positionals: List[str] = []
    values: Dict[str, Any] = {}
    for names, kwargs in options:
        dest = _dest(names, kwargs)
        if names[0].startswith("-"):
            for n in names:
                flags[n] = (dest, kwargs)
            values.setdefault(dest, _default(kwargs))  # the first action of a dest sets it
        else:
            positionals.append(dest)
    given: List[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-"):
            given.append(arg)
            continue
        name, eq, value = arg.partition("=")
        found = flags.get(arg) or (flags.get(name) if eq and name.startswith("--") else None)
        if found is None:
            return None
        dest, kwargs = found
        action = kwargs.get("action") or "store"
        if action in ("store_true", "store_false"):
            if found is not flags.get(arg):  # --flag=VALUE for a flag without a value
                return None
            values[dest] = action == "store_true"
            continue
        if not eq or found is flags.get(arg):
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        choices = kwargs.get("choices")
        if choices is not None and value not in choices:
            return None
        if action == "append":
            values[dest] = list(values[dest] or []) + [value]
        else:
            values[dest] = value
    if len(given) != len(positionals):
        return None
    values.update(zip(positionals, given))
    return SimpleNamespace(**values)
