"""fisk's ``--help-long``: the usage, the global flags, then every command with its help,
arguments and flags, the CLI plugins' commands included (when a plugin directory exists).

Built from the same argparse tree as the man page and the completions (``ccm.cli.docgen``).
"""
from __future__ import annotations

import argparse

from ccm.cli.docgen import Node, _global_flags, _help_of, _walk, flags, positionals, takes_value, tree, walk
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Tuple


def plugin_nodes() -> List[Node]:
    """The CLI plugins' commands (``ccm.cli.plugins``), when a plugin directory exists; a
    plugin file that does not load is left out with a warning."""
    from ccm.cli.main import plugin_dirs_exist

    if not plugin_dirs_exist():
        return []
    from ccm.cli import plugins
    from ccm.cli.plugins.parser import build

    definitions, warnings = plugins.loaded()
    plugins.warn(warnings)
    nodes = []
    for d in definitions:
        try:
            nodes.append(_walk(build(d), (d.name,), d.description.strip(), ()))
        except plugins.PluginError as exc:
            plugins.warn([str(exc)])
    return nodes


def _usage_words(node: Node) -> str:
    words = ["ccm"] + list(node.path)
    if flags(node):
        words.append("[<flags>]")
    for action in positionals(node):
        name = str(action.metavar or action.dest)
        words.append(f"[<{name}>]" if action.nargs in ("?", "*") else f"<{name}>")
    if node.children:
        words.append("<command> [<args> ...]")
    return " ".join(words)


def _flag_text(action: argparse.Action) -> Tuple[str, str]:
    head = ", ".join(action.option_strings)
    if takes_value(action):
        metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices else
                                     action.dest.upper())
        head += f"={metavar}"
    return head, _help_of(action)


def _columns(rows: List[Tuple[str, str]], indent: int) -> List[str]:
    """fisk's two columns: the head, then its help wrapped beside it (below a long head)."""
    import textwrap

    pad = " " * indent
    out: List[str] = []
    for head, text in rows:
        body = textwrap.wrap(text, 96) or [""]
        if len(head) < 28:
            out.append(f"{pad}{head:<28}{body[0]}")
        else:
            out += [f"{pad}{head}", f"{pad}{' ' * 28}{body[0]}"]
        out.extend(f"{pad}{' ' * 28}{more}" for more in body[1:])
    return out


def long_help() -> str:
    """fisk's ``--help-long``: the usage, the global flags, then every command (plugins too)
    with its help, arguments and flags."""
    import textwrap

    root = tree()
    root = Node(root.path, root.summary, None, (), root.children + plugin_nodes())
    out = ["usage: ccm [<global flags>] <command> [<args> ...]", "", "Choria Configuration Manager", "",
           "Global flags:"]
    out += _columns([(name + (f"={'|'.join(choices)}" if choices else ""), help_text)
                     for name, help_text, choices, _hidden in _global_flags()], 2)
    out += ["", "Commands:"]
    for node in walk(root)[1:]:
        out.append(f"  {_usage_words(node)}")
        out.extend(textwrap.wrap(node.summary or "", 100, initial_indent="    ", subsequent_indent="    "))
        if node.aliases:
            out.append(f"    aliases: {', '.join(node.aliases)}")
        rows = [(f"<{a.metavar or a.dest}>", _help_of(a)) for a in positionals(node)]
        out += _columns(rows + [_flag_text(a) for a in flags(node)], 4)
        out.append("")
    return "\n".join(out).rstrip() + "\n"
