"""One built ccm.pyz per test session, and helpers to run it like a host would.

The pyz is built by build_zipapp.py into a session temp dir (the wheel cache under
build/wheels is shared, so only the first build on a machine needs the network), or taken
from CCM_TEST_PYZ to test a given artifact.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

from tests.kit import overlay

import pytest

REPO = Path(__file__).resolve().parents[2]
PYENV = Path("/root/.pyenv/versions")


class Pyz(NamedTuple):
    path: Path
    build_id: str
    version: str
    pythons: List[str]  # "3.9", ... as baked into the boot module


def base_python() -> str:
    """The interpreter running the tests, outside any venv."""
    return os.path.realpath(sys.executable)


def pyenv_python(minor: str) -> Optional[str]:
    found = sorted(glob.glob(str(PYENV / f"{minor}.*" / "bin" / f"python{minor}")))
    return found[-1] if found else None


def clean_env(**extra: Optional[str]) -> Dict[str, str]:
    """The test's environment minus what would steer the pyz; ``None`` values unset."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SHIV_", "PYTHON")) and k not in ("TMPDIR", "XDG_RUNTIME_DIR")}
    return overlay(env, extra)


def run(argv: List[str], env: Dict[str, str], timeout: float = 120,
        stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def read_pyz(path: Path) -> Pyz:
    with zipfile.ZipFile(path) as zf:
        env = json.loads(zf.read("environment.json"))
        boot = zf.read("_ccm_stub.py").decode()
    ns: Dict[str, object] = {}
    for line in boot.splitlines():
        if line.startswith(("SUPPORTED = ", "ARCH = ")):
            exec(line, ns)
    pythons = ["%d.%d" % v for v in ns["SUPPORTED"]]  # type: ignore[attr-defined]
    sys.path.insert(0, str(REPO))
    from ccm import __version__

    return Pyz(path, env["build_id"], __version__, pythons)


@pytest.fixture(scope="session")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Pyz:
    given = os.environ.get("CCM_TEST_PYZ")
    if given:
        return read_pyz(Path(given))
    dist = tmp_path_factory.mktemp("dist")
    res = subprocess.run([sys.executable, str(REPO / "build_zipapp.py"), "--dist", str(dist)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    arch = os.uname().machine
    return read_pyz(dist / f"ccm-{arch}.pyz")


@pytest.fixture
def shared_tmp() -> Path:
    """A scratch dir other users can enter (tmp_path is 0700 under /tmp/pytest-of-root)."""
    import shutil
    import tempfile

    base = REPO / "build" / "test-tmp"
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=base))
    os.chmod(path, 0o755)
    yield path
    subprocess.run(["chmod", "-R", "u+rwX", str(path)], check=False)
    shutil.rmtree(path, ignore_errors=True)
