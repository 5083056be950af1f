"""What the service providers share: host probes (no subprocess: cheap in is_manageable)
and the text of a failed service command."""
from __future__ import annotations

import os

from ccm.cmdsearch import find_command
from ccm.model.runner import CommandResult
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def command_problem(res: CommandResult, summary: str) -> Optional[str]:
    """None when ``res`` succeeded; else ``ARGV exited N: SUMMARY`` (the line that explains it)
    and, when the output holds more than that line, its last 20 lines (stderr first, then
    stdout, secrets redacted) on the following lines, as a failed exec reports them."""
    if res.error:
        return f"{' '.join(res.argv)}: {res.error}"
    if res.exit_code != 0:
        detail = res.detail_with_output(summary or None)
        return f"{' '.join(res.argv)} exited {res.exit_code}" + (f": {detail}" if detail else "")
    return None


def which(tool: str) -> Optional[str]:
    """Found by the runner's own lookup rule (``ccm.cmdsearch.find_command``)."""
    return find_command(tool)


def systemd_is_pid1(proc_root: str = "/proc", run_dir: str = "/run/systemd/system") -> bool:
    """systemd's own test (sd_booted): /run/systemd/system exists; else PID 1's name."""
    if os.path.isdir(run_dir):
        return True
    try:
        with open(os.path.join(proc_root, "1", "comm")) as fh:
            return fh.read().strip() == "systemd"
    except OSError:
        return False
