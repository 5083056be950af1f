"""Running ``python -m ccm`` as cron or a timer would: real subprocesses, a clean environment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[2]


def clean_env(**extra: Optional[str]) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CCM_", "NO_COLOR")) and k != "TERM"}
    env["PYTHONPATH"] = str(ROOT)
    env.setdefault("CCM_CACHE_DIR", os.environ.get("CCM_CACHE_DIR", ""))
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


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
