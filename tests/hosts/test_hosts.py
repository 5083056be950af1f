"""ccm.pyz in minimal Debian roots: bullseye (3.9), bookworm (3.11), trixie (3.13).

``CCM_HOSTS_SUITES=bullseye,bookworm,trixie,sid`` adds sid (CPython 3.14 today).

Each command runs in a private PID namespace with its own /proc:
``unshare --pid --fork --mount-proc=ROOT/proc chroot ROOT env -i ...``, so ccm sees a
bare host: no HOME (cron), only the root's python3, no pip, no compiler. Two identities:
root with HOME unset, and ``ccmuser`` (uid 4242) whose home directory does not exist,
with TMPDIR=/tmp on a ``noexec`` tmpfs (the extraction must land elsewhere).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from . import roots
from .conftest import REPO, RESULTS

pytestmark = pytest.mark.hosts

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IDENTITIES = {
    # name: (userspec, owner/group name, extra env, noexec /tmp)
    "root-nohome": (None, "root", {}, False),
    "user-nohome": (f"{roots.UID}:{roots.UID}", roots.USER, {"TMPDIR": "/tmp"}, True),
}
TIMING = r"""
import os, shutil, statistics, subprocess, sys, time
pyz, runs = sys.argv[1], int(sys.argv[2])
def once(env):
    t = time.perf_counter()
    r = subprocess.run([sys.executable, pyz, "--version"], env=env, stdout=subprocess.DEVNULL)
    assert r.returncode == 0
    return time.perf_counter() - t
first = []
for i in range(3):
    root = "/var/tmp/ccm-first-%d-%d" % (os.getuid(), i)
    shutil.rmtree(root, True)
    first.append(once(dict(os.environ, SHIV_ROOT=root)))
    shutil.rmtree(root, True)
once(dict(os.environ))
warm = [once(dict(os.environ)) for _ in range(runs)]
print("%.1f %.1f" % (statistics.median(first) * 1000, statistics.median(warm) * 1000))
"""


def in_root(root: Path, argv: List[str], userspec: Optional[str] = None,
            env: Optional[Dict[str, str]] = None, stdin: Optional[str] = None,
            cwd: str = "/", noexec_tmp: bool = False, timeout: float = 300
            ) -> subprocess.CompletedProcess:
    """Run argv inside the root, fresh PID namespace and /proc, clean environment."""
    cmd = ["unshare", "--pid", "--fork", f"--mount-proc={root}/proc"]
    if noexec_tmp:  # host-side mount, private to this namespace
        cmd += ["sh", "-c", f"mount -t tmpfs -o noexec,nosuid,nodev,mode=1777 tmpfs {root}/tmp"
                " && exec \"$@\"", "sh"]
    cmd += ["chroot"] + ([f"--userspec={userspec}"] if userspec else []) + [str(root)]
    envs = [f"{k}={v}" for k, v in sorted({"PATH": PATH, "LANG": "C.UTF-8", **(env or {})}.items())]
    cmd += ["env", "-i"] + envs + ["/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd] + argv
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)


def _ok(res: subprocess.CompletedProcess, what: str) -> None:
    assert res.returncode == 0, f"{what}: rc={res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"


def _has_command(root: Path, name: str) -> bool:
    return (REPO / "ccm" / "cli" / f"{name}_cmd.py").exists()


@pytest.fixture(scope="module", params=roots.selected_suites())
def root(request, host_pyz: Path) -> Path:
    suite = request.param
    path = Path(roots.ensure_root(suite))
    opt = path / "opt" / "ccm"
    shutil.rmtree(opt, ignore_errors=True)
    opt.mkdir(parents=True)
    shutil.copyfile(host_pyz, opt / "ccm.pyz")
    os.chmod(opt / "ccm.pyz", 0o755)
    shutil.copytree(REPO / "demo", opt / "demo")
    (opt / "timing.py").write_text(TIMING)
    os.chmod(opt, 0o755)
    # every run starts cold: no extraction left from an earlier session
    for stale in [path / "root" / ".shiv", *path.glob("var/tmp/ccm-*"), *path.glob("tmp/ccm-*"),
                  *path.glob("var/tmp/demo-*")]:
        shutil.rmtree(stale, ignore_errors=True)
    return path


@pytest.mark.parametrize("who", list(IDENTITIES))
def test_pyz_in_root(root: Path, who: str, host_pyz: Path) -> None:
    suite = root.name
    userspec, owner, extra_env, noexec = IDENTITIES[who]
    pyz = "/opt/ccm/ccm.pyz"

    def ccm(*args: str, stdin: Optional[str] = None, cwd: str = "/",
            env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
        return in_root(root, ["/usr/bin/python3", pyz, *args], userspec=userspec,
                       env={**extra_env, **(env or {})}, stdin=stdin, cwd=cwd,
                       noexec_tmp=noexec)

    from ccm import __version__

    py = in_root(root, ["/usr/bin/python3", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"])
    _ok(py, "python3")
    assert py.stdout.strip().startswith(roots.SUITES[suite] + ".")

    res = ccm("--version")
    _ok(res, "--version")
    assert res.stdout.split()[0] == __version__ and res.stderr == ""
    # where it unpacked: the passwd home for root (cron), /var/tmp for the homeless user
    if userspec is None:
        assert list((root / "root" / ".shiv").glob("ccm_*/.ccm-extracted"))
    else:
        assert not (root / "home" / roots.USER).exists()
        assert list((root / "var" / "tmp" / f"ccm-{roots.UID}").glob("ccm_*/.ccm-extracted"))

    res = ccm("facts")
    _ok(res, "facts")
    facts = json.loads(res.stdout)
    assert facts.get("host"), "facts without a host family"

    if _has_command(root, "apply"):
        demo_root = f"/var/tmp/demo-{who}"
        env = {"CCM_DEMO_ROOT": demo_root, "CCM_DEMO_OWNER": owner, "CCM_DEMO_GROUP": owner}
        first = ccm("apply", "manifest.yaml", "--detailed-exit-codes", cwd="/opt/ccm/demo", env=env)
        assert first.returncode == 2, f"first apply should change things:\n{first.stdout}\n{first.stderr}"
        second = ccm("apply", "manifest.yaml", "--detailed-exit-codes", cwd="/opt/ccm/demo", env=env)
        assert second.returncode == 0, f"second apply not stable:\n{second.stdout}\n{second.stderr}"
        conf = root / demo_root.lstrip("/") / "etc" / "demo-app" / "app.conf"
        assert "listen = 127.0.0.1:8080" in conf.read_text()

    if _has_command(root, "ensure"):
        target = f"/var/tmp/demo-{who}-pipe.txt"
        request = json.dumps({
            "protocol": "io.choria.ccm.v1.resource.ensure.request",
            "type": "file",
            "properties": {"name": target, "ensure": "present", "content": "piped\n",
                           "owner": owner, "group": owner, "mode": "0644"},
        })
        for _attempt in (1, 2):
            res = ccm("ensure", "api", "pipe", stdin=request, cwd="/var/tmp")
            _ok(res, "ensure api pipe")
            response = json.loads(res.stdout)
            assert response["protocol"] == "io.choria.ccm.v1.resource.ensure.response"
            assert "error" not in response, response
            assert not response["state"].get("failed"), response
        assert (root / target.lstrip("/")).read_text() == "piped\n"
        assert response["state"].get("changed") is False, "second pipe run must be stable"

    timing = in_root(root, ["/usr/bin/python3", "/opt/ccm/timing.py", pyz, "15"],
                     userspec=userspec, env=extra_env, noexec_tmp=noexec)
    _ok(timing, "timing")
    first_ms, warm_ms = timing.stdout.split()
    RESULTS.append({
        "root": suite, "python": py.stdout.strip(), "who": who,
        "first_ms": first_ms, "warm_ms": warm_ms, "pyz_bytes": str(host_pyz.stat().st_size),
    })


def test_guard_in_root(tmp_path: Path) -> None:
    """bullseye's 3.9 with a file built without 3.9 extensions: the one-line refusal."""
    path = Path(roots.ensure_root("bullseye"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, str(REPO / "build_zipapp.py"), "--pythons", "3.11,3.13", "--dist", str(dist),
                    "--no-smoke"], check=True, stdout=subprocess.DEVNULL)
    opt = path / "opt" / "ccm-guard"
    opt.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dist / f"ccm-{os.uname().machine}.pyz", opt / "ccm.pyz")
    try:
        res = in_root(path, ["/usr/bin/python3", "/opt/ccm-guard/ccm.pyz", "--version"])
    finally:
        shutil.rmtree(opt, ignore_errors=True)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert "running CPython 3.9." in res.stderr and "supports CPython 3.11, 3.13" in res.stderr
    RESULTS.append({"root": "bullseye", "guard": res.stderr.strip()})


def test_aarch64_pyz_under_qemu(tmp_path: Path, host_pyz: Path) -> None:
    """The aarch64 file on bookworm/arm64's CPython 3.11 through qemu-user (no binfmt).

    Shows that the cross-stripped aarch64 extensions load and that the host's x86_64 file
    refuses that interpreter with the guard's line.
    """
    qemu = shutil.which("qemu-aarch64-static")
    if qemu is None or os.uname().machine != "x86_64":
        pytest.skip("needs qemu-aarch64-static (Debian: qemu-user-static) on x86_64")
    root = Path(roots.ensure_foreign_root("bookworm", "arm64"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, str(REPO / "build_zipapp.py"), "--arch", "aarch64",
                    "--dist", str(dist)], check=True, stdout=subprocess.DEVNULL)
    arm_pyz = dist / "ccm-aarch64.pyz"
    python = [qemu, "-L", str(root), str(root / "usr" / "bin" / "python3")]
    env = {"PATH": PATH, "LANG": "C.UTF-8", "SHIV_ROOT": str(tmp_path / "shiv")}

    from ccm import __version__

    res = subprocess.run(python + [str(arm_pyz), "--version"], env=env, capture_output=True,
                         text=True, timeout=300)
    _ok(res, "aarch64 --version")
    assert res.stdout.split()[0] == __version__
    check = ("import os, sys, yaml, rpds, psutil\n"
             "assert yaml.__with_libyaml__ and rpds.rpds.__file__.endswith('-aarch64-linux-gnu.so')\n"
             "print(os.uname().machine, '%d.%d' % sys.version_info[:2], psutil.cpu_count())\n")
    res = subprocess.run(python + [str(arm_pyz), "-"], env=dict(env, SHIV_INTERPRETER="1"),
                         input=check, capture_output=True, text=True, timeout=300)
    _ok(res, "aarch64 extensions")
    assert res.stdout.startswith("aarch64 3.11 ")
    res = subprocess.run(python + [str(arm_pyz), "facts"], env=env, capture_output=True,
                         text=True, timeout=300)
    _ok(res, "aarch64 facts")
    assert json.loads(res.stdout).get("host")
    res = subprocess.run(python + [str(host_pyz), "--version"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2 and "machine aarch64" in res.stderr, res.stderr
    RESULTS.append({"root": "bookworm-arm64 (qemu-user)", "python": "3.11",
                    "aarch64_pyz_bytes": str(arm_pyz.stat().st_size),
                    "x86_64_pyz_guard": res.stderr.strip()})
