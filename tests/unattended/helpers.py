"""Running ``python -m ccm`` as cron or a timer would: real subprocesses, a clean environment."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
