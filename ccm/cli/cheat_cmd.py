"""``ccm cheat [LABEL]``: the cheat sheets the CLI plugins declare (fisk's ``cheat`` command).

What: every ``cheat`` of every plugin (the definition's own and each command's, by
label: a command's name unless it sets ``label``) is listed, or one is printed. Upstream
registers plugin cheats but never adds the ``cheat`` command, so they cannot be shown
there. Not: ``--save`` (fisk writes the sheets as files for the ``cheat`` tool).
"""
from __future__ import annotations

import sys

from ccm.cli.common import ArgumentParser
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm cheat", description="Show the cheat sheets of the CLI plugins")
    p.add_argument("label", nargs="?", default="", help="the cheat to show")
    p.add_argument("--list", action="store_true", help="list available cheats")
    return p


def cheats() -> Dict[str, str]:
    from ccm.cli.main import plugin_dirs_exist

    if not plugin_dirs_exist():
        return {}
    from ccm.cli import plugins

    definitions, warnings = plugins.loaded()
    plugins.warn(warnings)
    out: Dict[str, str] = {}
    for definition in definitions:
        for cheat in definition.cheats():
            out.setdefault(cheat.label, cheat.text)
    return out


def listing(names: List[str]) -> str:
    if not names:
        return "No cheats defined\n"
    return "Available Cheats:\n\n" + "".join(f"    {n}\n" for n in sorted(names))


def run(argv: List[str]) -> int:
    args = parser().parse_args(argv)
    found = cheats()
    label = args.label
    if not label and len(found) == 1 and not args.list:
        label = next(iter(found))
    if args.list or label not in found:
        sys.stdout.write(listing(list(found)))
        return 0
    sys.stdout.write(found[label].rstrip("\n") + "\n")
    return 0
