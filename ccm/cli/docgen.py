"""The documentation inside the file: ``--help-man``, ``--completion-script-bash`` and
``--completion-script-zsh`` (upstream's hidden flags), generated from the argparse tree.

What: ``tree()`` imports every command module in ``ccm.cli.main.COMMANDS`` and walks its
``parser()`` (subcommands included; a parser that builds its subcommands lazily takes
``selected=NAME``, as ``ensure`` does), so a new command or flag shows up in the man page
and the completions without touching this module. ``render(kind)`` returns the text.

Guarantees: only the CLI's own parsers are read (no manager, no facts, no provider is
built); the output depends on nothing else (the man page's date is SOURCE_DATE_EPOCH's
when set, for reproducible packages). Not: used by ``ccm --help`` (which must stay cheap).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
from datetime import datetime, timezone
from typing import NamedTuple

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

    from ccm.cli.reference import Section


class Node(NamedTuple):
    path: Tuple[str, ...]                 # ("ensure", "file"); () for ccm itself
    summary: str
    parser: Optional[argparse.ArgumentParser]
    aliases: Tuple[str, ...]
    children: List["Node"]


def _subparsers(parser: argparse.ArgumentParser) -> Optional[argparse._SubParsersAction]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _walk(parser: argparse.ArgumentParser, path: Tuple[str, ...], summary: str, aliases: Tuple[str, ...],
          factory: Optional[object] = None) -> Node:
    children: List[Node] = []
    sub = _subparsers(parser)
    if sub is not None:
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        names: Dict[int, List[str]] = {}
        for name, child in sub.choices.items():
            names.setdefault(id(child), []).append(name)
        seen = set()
        for _name, child in sub.choices.items():
            if id(child) in seen:
                continue
            seen.add(id(child))
            canonical, *alias = names[id(child)]
            if factory is not None:  # lazily built subcommands: ask for this one's flags
                rebuilt = _subparsers(factory(selected=canonical))  # type: ignore[operator]
                if rebuilt is not None:
                    child = rebuilt.choices[canonical]
            children.append(_walk(child, path + (canonical,), helps.get(canonical, ""), tuple(alias)))
    return Node(path, summary, parser, aliases, children)


def tree(strict: bool = False) -> Node:
    """Every command of ``COMMANDS`` with its parser. A command module without ``parser()``
    is listed by name and summary only, or raises RuntimeError when ``strict`` (the tests)."""
    from ccm.cli.main import ALIASES, COMMANDS

    commands: List[Node] = []
    for name, (module_name, summary) in COMMANDS.items():
        module = importlib.import_module(module_name)
        try:
            build = module.parser
        except AttributeError:   # a command without an argparse tree of its own
            build = None
        aliases = tuple(a for a, target in ALIASES.items() if target == name)
        if build is None:
            if strict:
                raise RuntimeError(f"{module_name} has no parser(): every command exposes its argparse tree")
            commands.append(Node((name,), summary, None, aliases, []))
            continue
        lazy = "selected" in inspect.signature(build).parameters
        commands.append(_walk(build(), (name,), summary, aliases, build if lazy else None))
    return Node((), "Choria Configuration Manager", None, (), commands)


def flags(node: Node) -> List[argparse.Action]:
    """The documented flags of a command (hidden ones and -h left out)."""
    if node.parser is None:
        return []
    return [a for a in node.parser._actions
            if a.option_strings and a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]


def positionals(node: Node) -> List[argparse.Action]:
    if node.parser is None:
        return []
    return [a for a in node.parser._actions
            if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def walk(node: Node) -> List[Node]:
    out = [node]
    for child in node.children:
        out.extend(walk(child))
    return out


def takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _global_flags() -> List[Tuple[str, str, Tuple[str, ...], bool]]:
    from ccm.cli.main import GLOBAL_FLAGS

    return [(f.name, f.help, f.choices, f.hidden) for f in GLOBAL_FLAGS]


def resource_types() -> List[str]:
    """Every registered resource type, in declaration order (``status`` completes these)."""
    from ccm.registry import default_registry

    return list(default_registry().types_in_order())


# --- man page ----------------------------------------------------------------------------

def _roff(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def _flag_head(action: argparse.Action) -> str:
    names = ", ".join(f"\\fB{_roff(o)}\\fR" for o in action.option_strings)
    if takes_value(action):
        metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices else
                                     action.dest.upper())
        names += f" \\fI{_roff(str(metavar))}\\fR"
    return names


def _help_of(action: argparse.Action) -> str:
    from ccm.cli.common import shown_default

    text = action.help or ""
    default = shown_default(action)
    if default is not None:
        text += f" (default: {default})"
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        text += f" [{', '.join(map(str, action.choices))}]"
    return text


def man_page() -> str:
    from ccm import __version__

    root = tree()
    import os
    import time

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    stamp = int(epoch) if epoch.isdigit() else time.time()
    date = datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d")
    out = [f'.TH CCM 1 "{date}" "ccm {__version__}" "User Commands"',
           ".SH NAME", "ccm \\- Choria Configuration Manager",
           ".SH SYNOPSIS", "\\fBccm\\fR [\\fIglobal flags\\fR] \\fIcommand\\fR [\\fIargs\\fR ...]",
           ".SH DESCRIPTION",
           "Manages packages, services, files, commands, archives and template directories from a "
           "manifest (\\fBccm apply\\fR) or one resource at a time (\\fBccm ensure\\fR).",
           ".SH GLOBAL FLAGS", "Accepted anywhere on the command line."]
    for name, help_text, choices, _hidden in _global_flags():
        out += [".TP", f"\\fB{_roff(name)}\\fR" + (f" \\fI{'|'.join(choices)}\\fR" if choices else ""),
                _roff(help_text)]
    out.append(".SH COMMANDS")
    for node in walk(root)[1:]:
        title = " ".join(node.path)
        out += [".SS " + _roff("ccm " + title), _roff(node.summary or "")]
        if node.aliases:
            out += [".br", _roff("Aliases: " + ", ".join(node.aliases))]
        for action in positionals(node):
            out += [".TP", f"\\fI{_roff(str(action.metavar or action.dest))}\\fR", _roff(_help_of(action))]
        for action in flags(node):
            out += [".TP", _flag_head(action), _roff(_help_of(action))]
        epilog = node.parser.epilog if node.parser is not None else None
        if epilog:
            out += [".PP", ".nf", _roff(epilog.rstrip()), ".fi"]
    out += reference_roff()
    out += [".SH EXIT STATUS",
            "0 success; 1 an error, a rejected manifest or (apply) a failed resource; with "
            "\\fB\\-\\-detailed\\-exit\\-codes\\fR 2 changes, 4 failures, 6 both.",
            ".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        out += [".TP", f"\\fB{_roff(name)}\\fR", _roff(text)]
    out += [".SH SEE ALSO", "The README shipped with ccm: cron, systemd timers, cloud\\-init and air\\-gapped hosts."]
    return "\n".join(out) + "\n"


def _roff_sections(sections: List["Section"]) -> List[str]:
    out: List[str] = []
    for section in sections:
        out += [".SS " + _roff(section.title)]
        if section.intro:
            out.append(_roff(section.intro))
        for e in section.entries:
            out += [".TP", f"\\fB{_roff(e.name)}\\fR ({_roff(e.facts())})", _roff(e.description)]
            if e.example:
                out += [".nf", _roff(e.example), ".fi"]
        if section.example:
            out += [".PP", "Example:", ".nf", _roff(section.example), ".fi"]
    return out


def reference_roff() -> List[str]:
    """The ``ccm doc`` reference as man page sections: every resource type, the template
    functions, Hiera (``ccm.cli.reference``)."""
    from ccm.cli import reference

    out = [".SH RESOURCE TYPES", "Every property of every type (also: \\fBccm doc\\fR \\fItype\\fR)."]
    for type_name in resource_types():
        out += _roff_sections(reference.type_section(type_name)[:1])
    out += _roff_sections(reference.nested_sections())
    out += [".SH MANIFEST"] + _roff_sections(reference.manifest_sections())
    out += [".SH TEMPLATE FUNCTIONS"] + _roff_sections(reference.topic("functions"))
    out += [".SH HIERA"] + _roff_sections(reference.hiera_sections())
    return out


ENVIRONMENT: Tuple[Tuple[str, str], ...] = (
    ("CCM_SESSION_STORE", "session directory used by ccm ensure and ccm apply"),
    ("CCM_HIERA_DATA", "default of --hiera"),
    ("CCM_CACHE_DIR", "private cache of schema verdicts and parsed manifests"),
    ("CCM_LOCK_DIR", "directory of the run, package and service lock files (default /run/ccm for root)"),
    ("CCM_LOCK_TIMEOUT", "how long to wait for those locks (default 10 minutes)"),
    ("CCM_MAX_DOCUMENT_BYTES", "the largest manifest, data or facts file read"),
    ("CCM_MAX_DOWNLOAD_BYTES", "the largest download: archives, bundles (default 4 GiB)"),
    ("CCM_STATE_DIR", "where undelivered fleet reports are queued (default /var/lib/ccm for root)"),
    ("CCM_REPORT_SECONDS", "how long a run may spend delivering its fleet report (default 4)"),
    ("CCM_REPORT_QUEUE_MAX", "queued fleet reports kept, the oldest dropped first (default 100)"),
    ("CCM_REPORT_CLIENT", "nats-py: publish and read fleet reports through nats-py and json, not ccm's fast paths"),
    ("CCM_TEMPLATE_CACHE", "0: no template cache (templated manifests load in full on every run)"),
    ("CCM_WATCH_SUBSET", "0: a drift found by the agent's watch re-applies the whole manifest"),
    ("CCM_WATCH_KEEP", "0: the drift watch places its watches again after every full apply"),
    ("CCM_WATCH_PACKAGE_DB", "tests: the package database files the drift watch watches (:-separated)"),
    ("CCM_NATS_RETRY_SECONDS", "how long JetStream operations retry through elections (default 15)"),
    ("CCM_AGENT_TEST_TIMESCALE", "tests only: a factor (0 < x <= 1) that shrinks every fixed period of ccm agent"),
    ("CCM_SYSLOG_SOCKET", "syslog socket for --syslog (default /dev/log)"),
    ("CCM_TRACEBACK", "print a Python traceback with an error"),
    ("CCM_WRITE_BATCH", "files per durability batch of a first run (default 64; 0: an fsync per file)"),
    ("CCM_SYNC_MODE", "fsync: make a batch durable with an fsync per file instead of syncfs"),
    ("CCM_FILE_STEADY", "0: file states build their metadata at once instead of when read (the plain path)"),
    ("CCM_LAZY_EVENTS", "0: events get their id and properties when made instead of when read (the plain path)"),
    ("CCM_NO_IMPORT_BUNDLE", "any value: ccm.pyz imports its modules one by one, not from the import bundle"),
    ("NO_COLOR", "any value turns colour off (as does TERM=dumb)"),
    ("NATS_CONTEXT", "default NATS context"),
    ("XDG_CONFIG_HOME", "base of the user's NATS contexts, facts and CLI plugins (default ~/.config)"),
    ("BUILDER_DRY_RUN", "any value: a CLI plugin's exec command prints what it would run and runs nothing"),
    ("SHIV_ROOT", "where ccm.pyz unpacks itself"),
    ("TMPDIR", "where bundles are extracted (a private manifest-* directory, removed after the run)"),
)


# --- completion ---------------------------------------------------------------------------

def _completion_table() -> Tuple[List[Tuple[str, str, str]], Dict[str, List[str]], Dict[str, List[str]],
                                 Dict[str, Dict[str, List[str]]], Dict[str, str]]:
    """(transitions (path, word, new path), children by path, flags by path,
    flag value choices by path, positional kind by path)."""
    root = tree()
    transitions: List[Tuple[str, str, str]] = []
    children: Dict[str, List[str]] = {}
    flag_names: Dict[str, List[str]] = {}
    values: Dict[str, Dict[str, List[str]]] = {}
    positional: Dict[str, str] = {}
    for node in walk(root):
        key = " ".join(node.path)
        children[key] = [c.path[-1] for c in node.children]
        for child in node.children:
            for word in (child.path[-1],) + child.aliases:
                transitions.append((key, word, " ".join(child.path)))
        names: List[str] = []
        opts: Dict[str, List[str]] = {}
        for action in flags(node):
            names.extend(o for o in action.option_strings if o.startswith("--"))
            if takes_value(action):
                for o in action.option_strings:
                    opts[o] = [str(c) for c in action.choices] if action.choices else []
        flag_names[key] = names
        values[key] = opts
        if any(a.dest == "type" for a in positionals(node)) and not node.children:
            positional[key] = "types"
    for name, _help, choices, _hidden in _global_flags():
        flag_names[""].append(name)
        if choices:
            values[""][name] = list(choices)
    return transitions, children, flag_names, values, positional


def _words(items: List[str]) -> str:
    return " ".join(items)


def _lookup_functions(echo: str) -> List[str]:
    """The table lookups both shells' completers call (sh syntax, which zsh reads too):
    ``_ccm_next PATH WORD`` (the command path after WORD), ``_ccm_children PATH``,
    ``_ccm_flags PATH``, ``_ccm_value PATH FLAG`` (the choices of FLAG's value, empty for a
    free value, failing for a flag without one) and ``_ccm_positional PATH``."""
    transitions, children, flag_names, values, positional = _completion_table()
    global_flags = flag_names[""]
    lines = ["_ccm_next() {", '    case "$1|$2" in']
    lines += [f'        "{path}|{word}") {echo} "{new}" ;;' for path, word, new in transitions]
    lines += [f'        *) {echo} "$1" ;;', "    esac", "}", "", "_ccm_children() {", '    case "$1" in']
    lines += [f'        "{path}") {echo} "{_words(kids)}" ;;' for path, kids in children.items() if kids]
    lines += ["    esac", "}", "", "_ccm_flags() {", '    case "$1" in']
    lines += [f'        "{path}") {echo} "{_words(names if path == "" else names + global_flags)}" ;;'
              for path, names in flag_names.items()]
    lines += ["    esac", "}", "", "_ccm_value() {", '    case "$1|$2" in']
    lines += [f'        "{path}|{opt}") {echo} "{_words(choices)}" ;;'
              for path, opts in values.items() for opt, choices in opts.items()]
    lines += [f'        *"|{name}") {echo} "{_words(list(global_choices))}" ;;'
              for name, _help, global_choices, _hidden in _global_flags() if global_choices]
    lines += ["        *) return 1 ;;", "    esac", "}", "", "_ccm_positional() {", '    case "$1" in']
    lines += [f'        "{path}") {echo} "{kind}" ;;' for path, kind in positional.items()]
    lines += ["    esac", "}", ""]
    return lines


def bash_script() -> str:
    types = _words(resource_types())
    lines = ["# bash completion for ccm (generated by ccm --completion-script-bash)",
             "# install: ccm --completion-script-bash > /etc/bash_completion.d/ccm", ""]
    lines += _lookup_functions("echo")
    lines += ["_ccm() {",
              '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" i w',
              '    [ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"',
              "    COMPREPLY=()",
              "    for ((i = 1; i < COMP_CWORD; i++)); do",
              '        w="${COMP_WORDS[i]}"',
              '        case "$w" in -*) continue ;; esac',
              '        if [ "$i" -gt 1 ] && _ccm_value "$path" "${COMP_WORDS[i-1]}" >/dev/null; then continue; fi',
              '        path="$(_ccm_next "$path" "$w")"',
              "    done",
              '    local choices',
              '    if [[ "$prev" == -* ]] && choices="$(_ccm_value "$path" "$prev")"; then',
              '        if [ -n "$choices" ]; then',
              '            COMPREPLY=($(compgen -W "$choices" -- "$cur"))',
              "        else",
              '            COMPREPLY=($(compgen -f -- "$cur"))',
              "        fi",
              "        return 0",
              "    fi",
              '    if [[ "$cur" == -* ]]; then',
              '        COMPREPLY=($(compgen -W "$(_ccm_flags "$path")" -- "$cur"))',
              "        return 0",
              "    fi",
              '    local kids="$(_ccm_children "$path")"',
              '    if [ -n "$kids" ]; then',
              '        COMPREPLY=($(compgen -W "$kids" -- "$cur"))',
              '    elif [ "$(_ccm_positional "$path")" = types ]; then',
              f'        COMPREPLY=($(compgen -W "{types}" -- "$cur"))',
              "    else",
              '        COMPREPLY=($(compgen -f -- "$cur"))',
              "    fi",
              "}", "", "complete -o default -F _ccm ccm ccm.pyz"]
    return "\n".join(lines) + "\n"


def zsh_script() -> str:
    """zsh's own completion (no bashcompinit): the same tables, answered with compadd."""
    types = _words(resource_types())
    lines = ["#compdef ccm ccm.pyz", "# zsh completion for ccm (generated by ccm --completion-script-zsh)",
             "# install: ccm --completion-script-zsh > \"${fpath[1]}/_ccm\"", ""]
    lines += _lookup_functions("print -r --")
    lines += ["_ccm() {",
              "    local path_='' w prev cur i choices",
              "    local -a kids",
              "    cur=${words[CURRENT]}",
              "    prev=${words[CURRENT-1]}",
              "    for (( i = 2; i < CURRENT; i++ )); do",
              "        w=${words[i]}",
              "        [[ $w == -* ]] && continue",
              "        if (( i > 2 )) && _ccm_value \"$path_\" \"${words[i-1]}\" >/dev/null; then continue; fi",
              "        path_=$(_ccm_next \"$path_\" \"$w\")",
              "    done",
              "    if [[ $prev == -* ]] && choices=$(_ccm_value \"$path_\" \"$prev\"); then",
              "        if [[ -n $choices ]]; then compadd -- ${=choices}; else _files; fi",
              "        return",
              "    fi",
              "    if [[ $cur == -* ]]; then",
              "        compadd -- ${=$(_ccm_flags \"$path_\")}",
              "        return",
              "    fi",
              "    kids=(${=$(_ccm_children \"$path_\")})",
              "    if (( ${#kids} )); then",
              "        compadd -- $kids",
              "    elif [[ $(_ccm_positional \"$path_\") == types ]]; then",
              f"        compadd -- {types}",
              "    else",
              "        _files",
              "    fi",
              "}", "",
              'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then', '    _ccm "$@"',
              "else", "    compdef _ccm ccm ccm.pyz", "fi"]
    return "\n".join(lines) + "\n"


def render(kind: str) -> str:
    if kind == "long":
        from ccm.cli.helplong import long_help

        return long_help()
    if kind == "man":
        return man_page()
    if kind == "bash":
        return bash_script()
    if kind == "zsh":
        return zsh_script()
    raise ValueError(f"unknown documentation kind {kind!r}")
