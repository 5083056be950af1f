"""Running the real ``ccm`` in a subprocess for the operator-safety tests."""
from __future__ import annotations

import os
import time
from typing import Any, List

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ccm_env(tmp_path: Any, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_")}
    env["PYTHONPATH"] = ROOT
    env["TMPDIR"] = str(tmp_path)
    env["CCM_LOCK_DIR"] = str(tmp_path / "locks")
    env.update(extra)
    return env




def wait_for(predicate: Any, timeout: float = 20.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def processes_with_pgid(pgid: int) -> List[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        # fields after the comm: state ppid pgrp ...
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry))
    return out
