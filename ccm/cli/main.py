"""``ccm`` entry point: a lazy command table and one exception-to-exit-code map.

``ccm --help`` and ``ccm --version`` import nothing but this module: each command's
module is imported only when that command runs (like pip's command table), because
start-up time is paid on every cron run.
"""
from __future__ import annotations

import os
import sys

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:  # typing (and the re it imports) costs more than --version itself
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# name -> (module, summary). Aliases map to the canonical name.
COMMANDS: Dict[str, Tuple[str, str]] = {
    "apply": ("ccm.cli.apply_cmd", "Apply a manifest"),
    "validate": ("ccm.cli.validate_cmd", "Check a manifest completely without changing anything"),
    "ensure": ("ccm.cli.ensure_cmd", "Manage a single resource"),
    "status": ("ccm.cli.status_cmd", "Show the current state of a resource"),
    "facts": ("ccm.cli.facts_cmd", "Show system facts"),
    "hiera": ("ccm.cli.hiera_cmd", "Resolve hierarchical data"),
    "session": ("ccm.cli.session_cmd", "Manage shell-script sessions"),
    "registration": ("ccm.cli.registration_cmd", "Service registration over NATS"),
    "report": ("ccm.cli.report_cmd", "Fleet reports over NATS JetStream"),
    "agent": ("ccm.cli.agent_cmd", "Run the agent: apply manifests continuously"),
    "doc": ("ccm.cli.doc_cmd", "Offline reference: resource types, template functions, Hiera"),
    "kv": ("ccm.cli.kv_cmd", "Put, get and remove JetStream key-value entries"),
    "obj": ("ccm.cli.obj_cmd", "Put, get and remove JetStream object store entries"),
    "cheat": ("ccm.cli.cheat_cmd", "Show the cheat sheets of the CLI plugins"),
}
ALIASES: Dict[str, str] = {"info": "status", "reg": "registration", "r": "registration"}

EXIT_OK = 0
EXIT_ERROR = 1

USAGE = "usage: ccm [<global flags>] <command> [<args> ...]"


class GlobalFlag:
    """One global flag (a plain class: this module imports no typing at run time)."""

    __slots__ = ("name", "help", "choices", "hidden", "metavar")

    def __init__(self, name: str, help: str, choices: Tuple[str, ...] = (), hidden: bool = False,
                 metavar: str = "") -> None:
        self.name = name          # "--quiet"
        self.help = help          # with its default
        self.choices = choices    # a value is required when not empty
        self.hidden = hidden      # left out of --help (upstream's hidden flags)
        self.metavar = metavar


# Accepted anywhere on the command line (fisk does the same), before or after the command.
GLOBAL_FLAGS: Tuple[GlobalFlag, ...] = (
    GlobalFlag("--debug", "debug logging, internal and user output (default: off)"),
    GlobalFlag("--info", "info logging for internal messages (default: off)"),
    GlobalFlag("--log-level", "user output level; internal messages follow for debug and error (default: info)",
               ("debug", "info", "warn", "error"), metavar="LEVEL"),
    GlobalFlag("--quiet", "warnings and errors only (changes are warnings), the summary only when "
               "something failed, nothing at all when nothing changed; exit codes unchanged (default: off)"),
    GlobalFlag("--color", "colour the output: auto = on a terminal unless NO_COLOR is set or TERM=dumb "
               "(default: auto)", ("auto", "always", "never"), metavar="WHEN"),
    GlobalFlag("--syslog", "also send the log to the local syslog socket /dev/log, facility daemon, ident ccm "
               "(default: off)"),
    GlobalFlag("--version", "print the version, build id, Python and architecture, and exit"),
    GlobalFlag("--help-long", "print the full help: every command with its flags", hidden=True),
    GlobalFlag("--help-man", "print a man page on stdout", hidden=True),
    GlobalFlag("--completion-script-bash", "print a bash completion script", hidden=True),
    GlobalFlag("--completion-script-zsh", "print a zsh completion script", hidden=True),
)
_BY_NAME = {f.name: f for f in GLOBAL_FLAGS}


def plugin_dirs_exist() -> bool:
    """Whether a CLI plugin directory exists: two stats, so the help texts pay nothing for
    plugins on a host without them (``ccm.cli.plugins`` is imported only when one exists)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.isdir("/etc/choria/ccm/plugins") or os.path.isdir(os.path.join(xdg, "choria", "ccm", "plugins"))


def _plugin_lines() -> List[str]:
    if not plugin_dirs_exist():
        return []
    from ccm.cli import plugins

    found, warnings = plugins.loaded()
    plugins.warn(warnings)
    if not found:
        return []
    lines = ["", "Plugin commands:"]
    for definition in found:
        summary = (definition.description.strip().splitlines() or [""])[0]
        lines.append(f"  {definition.name:<14}{summary}")
    return lines


def _help_text() -> str:
    from ccm import __version__

    lines = [USAGE, "", f"Choria Configuration Manager {__version__}", "", "Commands:"]
    for name, (_mod, summary) in COMMANDS.items():
        lines.append(f"  {name:<14}{summary}")
    lines += _plugin_lines()
    lines += ["", "Global flags:"]
    import textwrap

    for flag in GLOBAL_FLAGS:
        if flag.hidden:
            continue
        head = flag.name + (f"={flag.metavar}" if flag.choices else "")
        text = flag.help + (f" ({'|'.join(flag.choices)})" if flag.choices else "")
        body = textwrap.wrap(text, 72)
        lines.append(f"  {head:<18}{body[0]}")
        lines.extend(" " * 20 + more for more in body[1:])
    lines += ["", "Run 'ccm <command> --help' for a command's flags, 'ccm --help-long' for every command's."]
    return "\n".join(lines)


def split_globals(argv: Sequence[str]) -> Tuple[Dict[str, Any], List[str]]:
    """Pull the global flags out of argv wherever they appear (fisk accepts them anywhere).

    Flags with a value take it as ``--flag VALUE`` or ``--flag=VALUE``; a missing or
    unknown value raises UsageError."""
    flags: Dict[str, Any] = {f.name[2:].replace("-", "_"): (None if f.choices else False) for f in GLOBAL_FLAGS}
    flags["help"] = False
    rest: List[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            rest.extend(args[i - 1:])
            break
        name, eq, value = arg.partition("=")
        flag = _BY_NAME.get(name)
        if flag is None or (eq and not flag.choices):
            rest.append(arg)
            continue
        key = name[2:].replace("-", "_")
        if not flag.choices:
            flags[key] = True
            continue
        if not eq:
            if i >= len(args):
                from ccm.model.errors import UsageError

                raise UsageError(f"expected argument for flag '{name}'")
            value = args[i]
            i += 1
        if value not in flag.choices:
            from ccm.model.errors import UsageError

            raise UsageError(f"enum value must be one of {','.join(flag.choices)}, got '{value}' for flag '{name}'")
        flags[key] = value
    return flags, rest


def _unicode_reason(exc: UnicodeError) -> object:
    """What a codec error says went wrong (``invalid start byte``); the error itself else."""
    if isinstance(exc, (UnicodeDecodeError, UnicodeEncodeError, UnicodeTranslateError)):
        return exc.reason
    return exc


def version_text() -> str:
    """``ccm --version``: the version first (scripts take the first word), then the build id
    (baked into the pyz's boot module, ``unknown build`` outside a pyz), the Python running
    it and the machine."""
    from ccm import __version__

    # baked into the pyz's start-up modules (pyzboot/stub.py and pyzboot/boot.py, built into the zip)
    from ccm.buildinfo import build_id as _build_id

    build_id = _build_id()
    build = f"build {build_id[:12]}" if build_id else "unknown build"
    # sys/os only: `platform` would import subprocess and pathlib on every --version
    impl = {"cpython": "CPython", "pypy": "PyPy"}.get(sys.implementation.name, sys.implementation.name)
    version = ".".join(str(v) for v in sys.version_info[:3])
    python = f"{impl} {version} {sys.executable or 'python'}"
    return f"{__version__} ({build}, {python}, {os.uname().machine or 'unknown'})"


def _run_command(name: str, args: List[str], debug: bool) -> int:
    import importlib

    module = importlib.import_module(COMMANDS[name][0])
    runner: Callable[[List[str]], int] = module.run
    return runner(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    try:
        flags, rest = split_globals(argv)
    except Exception as exc:  # UsageError; imported lazily
        sys.stderr.write(f"error: {exc}\n\n{USAGE}\n")
        return EXIT_ERROR
    if flags["version"]:
        print(version_text())
        return EXIT_OK
    for key, kind in (("help_long", "long"), ("help_man", "man"), ("completion_script_bash", "bash"),
                      ("completion_script_zsh", "zsh")):
        if flags[key]:
            from ccm.cli import docgen

            sys.stdout.write(docgen.render(kind))
            return EXIT_OK
    if not rest or rest[0] in ("-h", "--help", "help") and len(rest) <= 1:
        if not rest:
            sys.stderr.write(
                "error: a subcommand from the list below is required, use --help for full "
                "help including flags and arguments\n\n" + _help_text() + "\n"
            )
            return EXIT_ERROR
        print(_help_text())
        return EXIT_OK
    if rest[0] == "help":
        rest = rest[1:] + ["--help"]
    name = ALIASES.get(rest[0], rest[0])
    if name not in COMMANDS:
        return _run_plugin(rest, flags)

    return _run(lambda: _run_command(name, rest[1:], flags["debug"]), flags)


def _run_plugin(rest: List[str], flags: Dict[str, Any]) -> int:
    """``ccm NAME ...`` for a word that is no built-in command: a CLI plugin, or the
    unknown-command error (the plugin directories are read only now)."""
    if plugin_dirs_exist() and not rest[0].startswith("-"):
        from ccm.cli import plugins

        found, _warnings = plugins.mountable()   # a directory that cannot be read: a warning, no plugin
        path = found.get(rest[0])
        if path is not None:
            return _run(lambda: plugins.run(rest[0], path, rest[1:]), flags)
    sys.stderr.write(
        f"error: expected command but got \"{rest[0]}\", use --help for full help "
        "including flags and arguments\n\n" + _help_text() + "\n"
    )
    return EXIT_ERROR


def _run(action: Callable[[], int], flags: Dict[str, Any]) -> int:
    from ccm import log, redact

    redact.install_streams()   # values marked @sensitive never reach stdout/stderr
    log.configure(debug=flags["debug"], info=flags["info"], level=flags["log_level"], quiet=flags["quiet"],
                  color=flags["color"] or "auto", syslog=flags["syslog"])
    try:
        return action()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # one place maps every error to an exit code
        from ccm.model.errors import CCMError, UsageError

        if flags["debug"] or os.environ.get("CCM_TRACEBACK"):
            import traceback

            traceback.print_exc()
        if isinstance(exc, UsageError):
            sys.stderr.write(f"error: {exc}\n")
            return EXIT_ERROR
        if isinstance(exc, CCMError):   # names and data in it: control characters shown escaped
            sys.stderr.write(f"ccm: error: {log.escape_controls(str(exc))}\n")
            return EXIT_ERROR
        if isinstance(exc, UnicodeError):  # a safety net: input read as text that is not UTF-8
            where = f" at offset {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
            sys.stderr.write(f"ccm: error: input is not UTF-8 text{where}: {_unicode_reason(exc)}\n")
            return EXIT_ERROR
        sys.stderr.write(f"ccm: error: {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR

if __name__ == "__main__":
    sys.exit(main())
