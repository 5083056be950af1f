"""``ccm`` entry point: a lazy command table and one exception-to-exit-code map.

``ccm --help`` and ``ccm --version`` import nothing but this module: each command's
module is imported only when that command runs (like pip's command table), because
start-up time is paid on every cron run.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing (and the re it imports) costs more than --version itself
    from typing import Callable, Dict, List, Optional, Sequence, Tuple

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
    "agent": ("ccm.cli.agent_cmd", "Run the agent: apply manifests continuously"),
}
ALIASES: Dict[str, str] = {"info": "status", "reg": "registration", "r": "registration"}

EXIT_OK = 0
EXIT_ERROR = 1

USAGE = "usage: ccm [--debug|--info] [--version] <command> [<args> ...]"


def _help_text() -> str:
    from ccm import __version__

    lines = [USAGE, "", f"Choria Configuration Manager {__version__}", "", "Commands:"]
    for name, (_mod, summary) in COMMANDS.items():
        lines.append(f"  {name:<14}{summary}")
    lines += [
        "",
        "Global flags:",
        "  --debug       debug logging (internal and user output)",
        "  --info        info logging for internal messages",
        "  --version     print the version and exit",
        "",
        "Run 'ccm <command> --help' for a command's flags.",
    ]
    return "\n".join(lines)


def split_globals(argv: Sequence[str]) -> Tuple[Dict[str, bool], List[str]]:
    """Pull the global flags out of argv wherever they appear (fisk accepts them anywhere)."""
    flags = {"debug": False, "info": False, "version": False, "help": False}
    rest: List[str] = []
    seen_dashdash = False
    for arg in argv:
        if seen_dashdash:
            rest.append(arg)
            continue
        if arg == "--":
            seen_dashdash = True
            rest.append(arg)
        elif arg in ("--debug", "--info", "--version"):
            flags[arg[2:]] = True
        else:
            rest.append(arg)
    return flags, rest


def _run_command(name: str, args: List[str], debug: bool) -> int:
    import importlib

    module = importlib.import_module(COMMANDS[name][0])
    runner: Callable[[List[str]], int] = module.run
    return runner(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    flags, rest = split_globals(argv)
    if flags["version"]:
        from ccm import __version__

        print(__version__)
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
        sys.stderr.write(
            f"error: expected command but got \"{rest[0]}\", use --help for full help "
            "including flags and arguments\n\n" + _help_text() + "\n"
        )
        return EXIT_ERROR

    from ccm import log, redact

    redact.install_streams()   # values marked @sensitive never reach stdout/stderr
    log.configure(debug=flags["debug"], info=flags["info"])
    try:
        return _run_command(name, rest[1:], flags["debug"])
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
        if isinstance(exc, CCMError):
            sys.stderr.write(f"ccm: error: {exc}\n")
            return EXIT_ERROR
        sys.stderr.write(f"ccm: error: {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
