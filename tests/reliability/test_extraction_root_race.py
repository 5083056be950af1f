"""Root runs ccm.pyz with an extraction root another user can swap (issue 24, first finding).

With ``HOME`` (or ``XDG_RUNTIME_DIR``, ``TMPDIR``, ``SHIV_ROOT``) in a directory owned by an
unprivileged user (``sudo -E``, ``env_keep+=HOME``), that user exchanges root's extraction
root with a tree of their own, as fast as the kernel lets them (``renameat2`` with
``RENAME_EXCHANGE``, from a real ``nobody`` process), while root runs ``ccm.pyz --version``
again and again. The planted tree is a complete extraction of this build whose
``ccm/__main__.py`` appends a line to a marker file. Nothing of it may ever run, no run may
end in a traceback, and root may leave nothing of its own in that user's directory.

``CCM_SWAP_RACE_RUNS`` bounds the root runs per case (``make test-reliability-ci`` a few,
``make test-reliability`` many).
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import stat
import subprocess
import time
import zipfile
from typing import Dict, List, Set, Tuple

import pytest

from tests.reliability.cli import shipped_pyz
from tests.reliability.conftest import drop_to

pytestmark = pytest.mark.reliability

RUNS = int(os.environ.get("CCM_SWAP_RACE_RUNS", "10"))
RENAME_EXCHANGE = 2
AT_FDCWD = -100
SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}
# Between exchanges: none (a flip every few microseconds), then windows as long as root's
# steps (a check, an import), so some runs see one tree for a whole step and another for the next.
PAUSES = [0.0] * 20 + [0.0005, 0.001, 0.002, 0.004, 0.008]
PLANTED_MAIN = """import os
def main():
    with open({marker!r}, "a") as fh:
        fh.write("planted code ran as euid %d\\n" % os.geteuid())
    return 0
"""


def _build_id(pyz: str) -> str:
    with zipfile.ZipFile(pyz) as zf:
        return str(json.loads(zf.read("environment.json"))["build_id"])


def _plant(home: str, name: str, build_id: str, marker: str) -> None:
    """As the attacker: ``home/name/ccm_<build id>``, a tree every check of an extraction passes."""
    from pyzboot.boot import write_marker

    site = os.path.join(home, name, "ccm_" + build_id, "site-packages", "ccm")
    os.makedirs(site)
    with open(os.path.join(site, "__init__.py"), "w") as fh:
        fh.write("")
    with open(os.path.join(site, "__main__.py"), "w") as fh:
        fh.write(PLANTED_MAIN.format(marker=marker))
    write_marker(os.path.join(home, name, "ccm_" + build_id))


def _swapper(home: str, pairs: List[Tuple[str, str]], out: int) -> None:
    """The attacker's loop (a forked child, already ``nobody``): exchange each pair of names
    in ``home`` until SIGTERM, then write how many exchanges succeeded to ``out``."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = SYS_RENAMEAT2[platform.machine()]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    os.chdir(home)
    names = [(a.encode(), b.encode()) for a, b in pairs]
    done = 0
    pauses = PAUSES * 1000
    deadline = time.monotonic() + 900   # never outlive a lost parent for long
    while not stop and time.monotonic() < deadline:
        for pause in pauses:
            for a, b in names:
                if libc.syscall(number, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
                    done += 1
            if pause:
                time.sleep(pause)
            if stop:
                break
    os.write(out, str(done).encode())


def _root_owned(top: str, swapped: Tuple[str, str]) -> Set[str]:
    """What root owns below ``top``, each path with the swapped name as ``*``."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.lstat(path).st_uid == 0:
                first, _, rest = os.path.relpath(path, top).partition("/")
                found.add(("*" if first in swapped else first) + "/" + rest)
    return found


def _seed(python: str, pyz: str, scratch: str, where: str) -> None:
    """Root's extraction root as an earlier ccm.pyz left it at ``where`` (in the attacker's
    directory): a complete tree of this build, unpacked by root, then moved there."""
    seed = os.path.join(scratch, "seed")
    res = subprocess.run([python, pyz, "--version"], env={"PATH": "/usr/bin:/bin", "SHIV_ROOT": seed},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    os.rename(seed, where)


# (variable that points into the attacker's directory, the root it makes there, what root must get)
CASES = {
    "HOME": ("HOME", ".shiv", "version"),
    "XDG_RUNTIME_DIR": ("XDG_RUNTIME_DIR", "ccm-0", "version"),
    "TMPDIR": ("TMPDIR", "ccm-0", "version"),
    "SHIV_ROOT": ("SHIV_ROOT", "shiv", "refusal"),
}


def _command(case: str, python: str, pyz: str, private: str) -> List[str]:
    """root's command line. With TMPDIR taken by the attacker, root's next candidate is
    /var/tmp/ccm-0: the run gets a mount namespace where /var/tmp is ``private``."""
    if case != "TMPDIR":
        return [python, pyz, "--version"]
    script = 'mount --bind "$1" /var/tmp && shift && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", private,
            python, pyz, "--version"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_root_never_runs_a_tree_another_user_swaps_in(case, nobody, public_tmp, worst_case_sysctls):
    if platform.machine() not in SYS_RENAMEAT2:
        pytest.skip(f"no renameat2 number for {platform.machine()}")
    variable, root_name, expect = CASES[case]
    python, pyz = shipped_pyz()
    build_id = _build_id(pyz)
    home = os.path.join(public_tmp, "attacker")     # the unprivileged user's directory
    os.mkdir(home)
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    os.chmod(home, 0o755)
    private = os.path.join(public_tmp, "root-tmp")   # a place of root's own, for the fallback
    os.mkdir(private, 0o700)
    marker = os.path.join(public_tmp, "planted-ran")  # root may write here; the attacker may not
    env: Dict[str, str] = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": os.path.join(public_tmp, "no-home"),
                           "TMPDIR": private}
    env[variable] = os.path.join(home, root_name) if variable == "SHIV_ROOT" else home
    pairs = [(root_name, "plant")]
    _seed(python, pyz, public_tmp, os.path.join(home, root_name))
    seeded = _root_owned(home, pairs[0])
    argv = _command(case, python, pyz, private)
    if case == "TMPDIR":
        probe = subprocess.run(argv[:-3] + ["/bin/true"], env=env, capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"cannot make a private /var/tmp here: {probe.stderr.strip()}")

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the attacker
        try:
            os.close(read_end)
            drop_to(nobody)
            _plant(home, "plant", build_id, marker)
            _swapper(home, pairs, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    results = []
    try:
        time.sleep(0.2)   # the plant is made before root's first run
        for _ in range(RUNS):
            results.append(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120))
    finally:
        os.kill(pid, signal.SIGTERM)
        swaps = int(os.read(read_end, 64) or b"0")
        os.close(read_end)
        os.waitpid(pid, 0)

    wins = open(marker).read().count("\n") if os.path.exists(marker) else 0
    tracebacks = sum("Traceback" in r.stderr for r in results)
    summary = f"{case}: {RUNS} root runs, {swaps} exchanges, {wins} ran planted code, {tracebacks} tracebacks"
    print(summary)
    assert wins == 0, summary
    assert tracebacks == 0, summary + "\n" + next(r.stderr for r in results if "Traceback" in r.stderr)
    left = sorted(_root_owned(home, pairs[0]) - seeded)
    assert not left, f"{summary}; root left in the attacker's directory: {left[:10]}"
    for r in results:
        if expect == "version":
            assert (r.returncode, r.stderr) == (0, "") and r.stdout.startswith(_version()), (summary, r)
        else:   # SHIV_ROOT is honoured as given or refused in one line, never replaced
            line = r.stderr.strip()
            assert (r.returncode, r.stdout, r.stderr.count("\n")) == (2, "", 1), (summary, r.stderr)
            assert line.startswith(f"ccm: SHIV_ROOT={env['SHIV_ROOT']} is not usable (") and home in line, line
    if expect == "version":
        st = os.lstat(os.path.join(private, "ccm-0"))   # where root unpacked instead
        assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700


def _version() -> str:
    from ccm import __version__

    return __version__ + " "
