"""Running ccm as a subprocess for the reliability suite."""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shipped_pyz() -> List[str]:
    """``[python, ccm.pyz]`` runnable by any user (the venv lives under root's 0700 home)."""
    import pytest

    pyz = os.environ.get("CCM_TEST_PYZ") or os.path.join(ROOT, "dist", "ccm.pyz")
    python = "/usr/bin/python3"
    if not (os.path.isfile(pyz) and os.access(python, os.X_OK)):
        pytest.skip("needs dist/ccm.pyz (make pyz) and /usr/bin/python3 to run as another user")
    return [python, pyz]


def ccm(args: List[str], cwd: str, extra_env: Optional[Dict[str, str]] = None, *, stdin: str = "",
        timeout: float = 60, preexec=None, pyz: Optional[List[str]] = None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(cwd),
           "XDG_CONFIG_HOME": os.path.join(str(cwd), ".xdg"),
           "CCM_CACHE_DIR": os.environ.get("CCM_CACHE_DIR", os.path.join(str(cwd), ".cache"))}
    if pyz is None and "CCM_LOCK_DIR" in os.environ:
        # the test's private lock dir (tests/conftest.py); runs as another user keep their own
        env["CCM_LOCK_DIR"] = os.environ["CCM_LOCK_DIR"]
    env.update(extra_env or {})
    env = {k: v for k, v in env.items() if v is not None}
    command = pyz or [sys.executable, "-m", "ccm"]
    return subprocess.run([*command, *args], cwd=str(cwd), env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)


def kill9_after(argv: List[str], cwd: str, env: Dict[str, str], delay: float) -> None:
    """Start ``argv`` (output discarded), SIGKILL it ``delay`` seconds later, reap it."""
    import signal
    import time

    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
