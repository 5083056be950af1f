"""Host probes the service provider factories share (no subprocess: cheap in is_manageable)."""
from __future__ import annotations

import os
from typing import Optional

from ccm.model.runner import find_command


def which(tool: str) -> Optional[str]:
    """Found by the runner's own lookup rule (``ccm.model.runner.find_command``)."""
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
