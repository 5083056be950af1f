"""Nagios-plugin health checks: run a command, map its exit code to a status.

Guarantees: the command is split with shell word rules and run without a shell through
the injected runner (fixed environment, cwd ``/``, process group killed on timeout);
output is stdout trimmed. A command that cannot start, times out or dies by a signal is
an execution error, not a status.
Not: retries, logging or templating (``ccm.healthcheck`` does those for every format).
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from ccm.model.events import CRITICAL, OK, UNKNOWN, WARNING
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional

_EXIT_STATUS = {0: OK, 1: WARNING, 2: CRITICAL}


@dataclass
class Attempt:
    status: int
    output: str = ""
    error: Optional[str] = None   # set when the check could not produce a status
    tail: str = ""                # the output tail for a failure message (stderr first)


def status_for_exit(code: int) -> int:
    """0 OK, 1 WARNING, 2 CRITICAL, any other code UNKNOWN."""
    return _EXIT_STATUS.get(code, UNKNOWN)


def split_command(command: str) -> List[str]:
    """Shell-word split; raises ValueError with the reason (unbalanced quotes, empty)."""
    if not command or not command.strip():
        raise ValueError("command not specified")
    try:
        argv = shlex.split(command.strip())
    except ValueError as exc:
        raise ValueError(f"could not parse command {command!r}: {exc}") from None
    if not argv:
        raise ValueError("command not specified")
    return argv


def default_name(command: str) -> str:
    """Base name of the command's first word (``/usr/lib/nagios/check_http -H x`` -> ``check_http``)."""
    try:
        first = split_command(command)[0]
    except ValueError:
        first = (command or "").strip().split(" ")[0]
    return os.path.basename(first) or "nagios"


def summary_line(output: str) -> str:
    """The plugin's status text: first line, without performance data after ``|``."""
    first = output.strip().splitlines()[0] if output.strip() else ""
    return first.split("|", 1)[0].strip()


def run_once(runner: Any, command: str, timeout: Optional[float]) -> Attempt:
    try:
        argv = split_command(command)
    except ValueError as exc:
        return Attempt(UNKNOWN, str(exc), error=str(exc))
    res = runner.run(argv, cwd="/", timeout=timeout)
    if res.error is not None:
        return Attempt(UNKNOWN, res.error, error=res.with_output(res.error))
    # more than the one status line (or anything on stderr): the failure message carries the tail
    more = bool(res.stderr.strip()) or len(res.stdout.strip().splitlines()) > 1
    return Attempt(status_for_exit(res.exit_code), res.stdout.strip(), tail=res.output_tail() if more else "")
