"""Running ccm as a subprocess for the reliability suite."""
from __future__ import annotations

import os
import subprocess
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


def cli_env(cwd: str, extra_env: Optional[Dict[str, Optional[str]]] = None, *,
            pyz: Optional[List[str]] = None) -> Dict[str, Optional[str]]:
    """The environment of a reliability run of ccm in ``cwd`` (its HOME): ``PATH``, the
    source tree, the test's cache directory, and its lock directory unless the run is the
    shipped pyz (as another user: that keeps its own); ``extra_env`` last, ``None`` unsets."""
    env: Dict[str, Optional[str]] = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT, "HOME": str(cwd),
        "XDG_CONFIG_HOME": os.path.join(str(cwd), ".xdg"),
        "CCM_CACHE_DIR": os.environ.get("CCM_CACHE_DIR", os.path.join(str(cwd), ".cache"))}
    if pyz is None and "CCM_LOCK_DIR" in os.environ:
        # the test's private lock dir (tests/conftest.py); runs as another user keep their own
        env["CCM_LOCK_DIR"] = os.environ["CCM_LOCK_DIR"]
    env.update(extra_env or {})
    return env


def kill9_after(argv: List[str], cwd: str, env: Dict[str, str], delay: float) -> None:
    """Start ``argv`` (output discarded), SIGKILL it ``delay`` seconds later, reap it."""
    import signal
    import time

    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
