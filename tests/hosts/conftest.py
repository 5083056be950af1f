"""Fixtures for the minimal-root proofs (marker ``hosts``; ``make test-hosts``).

Needs root, debootstrap, unshare and chroot; the roots are cached under build/hosts.
The pyz under test is $CCM_TEST_PYZ (``make test-hosts`` passes dist/ccm.pyz) or a fresh
build. Timings are collected in RESULTS and printed at the end of the run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
from . import roots  # noqa: E402,F401  (re-exported for the tests)

RESULTS: List[Dict[str, str]] = []


def _missing_tools() -> List[str]:
    return [t for t in ("debootstrap", "unshare", "chroot") if shutil.which(t) is None]


@pytest.fixture(scope="session")
def host_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("the host proofs need root (debootstrap, chroot, unshare)")
    missing = _missing_tools()
    if missing:
        pytest.skip(f"missing tools: {missing}")
    given = os.environ.get("CCM_TEST_PYZ")
    if given:
        return Path(given).resolve()
    dist = tmp_path_factory.mktemp("hosts-dist")
    subprocess.run([sys.executable, str(REPO / "build_zipapp.py"), "--dist", str(dist)],
                   check=True, stdout=subprocess.DEVNULL)
    return dist / f"ccm-{os.uname().machine}.pyz"


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not RESULTS:
        return
    tr = terminalreporter
    tr.section("ccm.pyz on minimal Debian roots")
    for row in RESULTS:
        tr.write_line("  ".join(f"{k}={v}" for k, v in row.items()))
