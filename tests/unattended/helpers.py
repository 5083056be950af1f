"""Running ``python -m ccm`` as cron or a timer would: real subprocesses, a clean environment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: Optional[str]) -> Dict[str, str]:
    """No CCM_*/NO_COLOR/TERM from the caller, except the per-test cache and lock
    directories (tests/conftest.py); ``None`` unsets."""
    env = {k: v for k, v in os.environ.items()
           if k in ("CCM_CACHE_DIR", "CCM_LOCK_DIR") or not (k.startswith(("CCM_", "NO_COLOR")) or k == "TERM")}
    env["PYTHONPATH"] = str(ROOT)
    env.update({k: v for k, v in extra.items() if v is not None})
    return {k: v for k, v in env.items() if extra.get(k, "") is not None}


def ccm(*args: str, env: Optional[Dict[str, str]] = None, cwd: Optional[Path] = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ccm", *args], env=env or clean_env(), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def manifest(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def file_manifest(path: Path, target: Path, content: str = "hello\n") -> Path:
    """One file resource: changed on the first run, stable after."""
    return manifest(path, f"""\
ccm:
  resources:
    - file:
        - {target}:
            ensure: present
            content: {content!r}
            owner: {os.getuid()}
            group: {os.getgid()}
            mode: "0644"
""")


FAILING = """\
ccm:
  resources:
    - exec:
        - /bin/false:
            refreshonly: false
"""
