"""The built ccm.pyz as hosts run it: every CPython, the guard, extraction roots, damage.

Each test gets its own extraction root unless it is about the default choice of root.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict

import pytest

from .conftest import REPO, Pyz, base_python, clean_env, pyenv_python, run

SUPPORTED_HERE = ["3.9", "3.10", "3.11", "3.12", "3.13"]
IS_ROOT = os.geteuid() == 0
NOBODY = 65534
EXT_CHECK = (
    "import sys, yaml, rpds, psutil, jsonschema\n"
    "assert yaml.__with_libyaml__, 'PyYAML without libyaml'\n"
    "assert rpds.rpds.__file__.endswith('.so'), rpds.rpds.__file__\n"
    "assert jsonschema.Draft202012Validator({'type': 'integer'}).is_valid(3)\n"
    "assert psutil.cpu_count() >= 1\n"
    "print('ext-ok %d.%d' % sys.version_info[:2])\n"
)


def as_user(argv, uid=NOBODY):
    """argv run as an unprivileged uid (we are root) or as ourselves."""
    if not IS_ROOT:
        return argv
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] + argv


def user_python() -> str:
    """An interpreter an unprivileged user can run (pyenv's live under /root, 0700)."""
    if not IS_ROOT:
        return base_python()
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(cand):
            res = subprocess.run(as_user([cand, "-c", "import sys; print(sys.version_info[1])"]),
                                 capture_output=True, text=True)
            if res.returncode == 0 and 9 <= int(res.stdout) <= 13:
                return cand
    pytest.skip("no system CPython 3.9-3.13 an unprivileged user can run")


def target_of(pyz: Pyz, root: Path) -> Path:
    return root / f"ccm_{pyz.build_id}"


# --------------------------------------------------------------------------- content

def test_version_matches_source(pyz: Pyz, tmp_path: Path) -> None:
    res = run([base_python(), str(pyz.path), "--version"], clean_env(SHIV_ROOT=str(tmp_path)))
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[0] == pyz.version
    assert res.stderr == ""


def _payload(zf: zipfile.ZipFile) -> zipfile.ZipFile:
    import io

    return zipfile.ZipFile(io.BytesIO(zf.read("site-packages.zip")))


def test_archive_layout(pyz: Pyz) -> None:
    with zipfile.ZipFile(pyz.path) as zf:
        names = zf.namelist()
        assert {"_ccm_boot.py", "_ccm_stub.py", "_ccm_bundle.py"} <= set(names)
        assert zf.read("__main__.py").decode().count("_ccm_stub") == 2
        # the site-packages entries are nested in one stored member: Python reads the outer
        # zip's whole directory on every run, an extraction the inner one
        assert not [n for n in names if n.startswith("site-packages/")] and len(names) < 20
        assert zf.getinfo("site-packages.zip").compress_type == zipfile.ZIP_STORED
        payload = _payload(zf)
        inner = payload.namelist()
        assert inner and all(n.startswith("site-packages/") for n in inner)
        arch = os.uname().machine
        for py in pyz.pythons:
            abi = py.replace(".", "")
            for ext in ("yaml/_yaml", "rpds/rpds"):
                assert f"site-packages/{ext}.cpython-{abi}-{arch}-linux-gnu.so" in inner
        assert "site-packages/psutil/_psutil_linux.abi3.so" in inner
        assert payload.getinfo("site-packages/ccm/__main__.py").external_attr >> 16 == 0o100644
        names = names + inner
        # precompiled boot code: only for supported CPythons, at least the one that built it
        codes = sorted(n for n in names if n.startswith("_ccm_stub.") and n.endswith(".code"))
        tags = {"cpython-" + py.replace(".", "") for py in pyz.pythons}
        assert codes and all(n[len("_ccm_stub."):-len(".code")] in tags for n in codes), codes
        assert f"_ccm_stub.{sys.implementation.cache_tag}.code" in names
        assert not [n for n in names if "/tests/" in n and not n.startswith("site-packages/ccm/")]
        assert not [n for n in names if n.endswith((".pyc", "RECORD"))]
        dates = {i.date_time for i in zf.infolist() + payload.infolist()}
        assert len(dates) == 1, dates
        leak = str(REPO).encode()
        for archive in (zf, payload):
            for info in archive.infolist():
                assert leak not in archive.read(info), f"build path in {info.filename}"
    with open(pyz.path, "rb") as fh:
        assert fh.readline() == b"#!/usr/bin/env python3\n"
    if os.uname().machine == "x86_64":
        assert pyz.path.stat().st_size < 8 * 1024 * 1024


def _with_stub_code(pyz: Pyz, target: Path, blob: bytes) -> Path:
    """A copy of the pyz whose precompiled stub code for this interpreter is ``blob``."""
    entry = f"_ccm_stub.{sys.implementation.cache_tag}.code"
    with open(pyz.path, "rb") as fh:
        shebang = fh.readline()
    with zipfile.ZipFile(pyz.path) as src, open(target, "wb") as out:
        out.write(shebang)
        with zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                dst.writestr(info, blob if info.filename == entry else src.read(info))
    return target


def test_precompiled_stub_code_is_run_and_its_magic_checked(pyz: Pyz, tmp_path: Path) -> None:
    """The stub's precompiled code for the running interpreter is what runs (no compile);
    code with another interpreter's magic is never run: the source is compiled instead."""
    import importlib.util
    import marshal

    marker = compile("def main():\n    print('precompiled stub ran')\n", "_ccm_stub.py", "exec")
    env = clean_env(SHIV_ROOT=str(tmp_path / "root"))
    ours = _with_stub_code(pyz, tmp_path / "ours.pyz", importlib.util.MAGIC_NUMBER + marshal.dumps(marker))
    res = run([base_python(), str(ours), "--version"], env)
    assert (res.returncode, res.stdout, res.stderr) == (0, "precompiled stub ran\n", "")
    foreign = _with_stub_code(pyz, tmp_path / "foreign.pyz", b"\x00\x00\r\n" + marshal.dumps(marker))
    res = run([base_python(), str(foreign), "--version"], env)
    assert (res.returncode, res.stdout.split()[:1], res.stderr) == (0, [pyz.version], "")


# --------------------------------------------------------------------------- import bundle

BUNDLE_HEADER = b"ccm-imports 1\n"


def _bundle_path(pyz: Pyz, root: Path, command: str = "apply") -> Path:
    return (target_of(pyz, root) / "site-packages" / "ccm" / "__pycache__"
            / f"imports-{command}.{sys.implementation.cache_tag}.bundle")


def _read_bundle(path: Path) -> Dict[str, tuple]:
    import importlib.util
    import marshal

    data = path.read_bytes()
    head = BUNDLE_HEADER + importlib.util.MAGIC_NUMBER
    assert data.startswith(head)
    codes: Dict[str, tuple] = marshal.loads(data[len(head):])
    return codes


def _manifest(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("ccm:\n  resources:\n" + body)
    return path


def _quiet(text: str) -> str:   # a run's output without its times
    import re

    return re.sub(r"runtime=\S+|Run Time: \S+", "", text)


def test_the_import_bundle_serves_a_command_once_a_warm_run_wrote_it(pyz: Pyz, tmp_path: Path) -> None:
    """The first run from an unpacked tree writes the command's bundle (the run that
    unpacks it goes through shiv's bootstrap: none); later runs take its modules from it
    (same output) and write nothing; a run that imports a module it lacks adds it."""
    root = tmp_path / "root"
    env = clean_env(SHIV_ROOT=str(root), CCM_CACHE_DIR=str(tmp_path / "cache"), CCM_LOCK_DIR=str(tmp_path / "locks"))
    target = tmp_path / "f.conf"
    files = _manifest(tmp_path, "files.yaml", f"    - file:\n        - {target}:\n            ensure: present\n            content: x\n"
                      f"            owner: \"{os.getuid()}\"\n            group: \"{os.getgid()}\"\n"
                      f"            mode: \"0644\"\n")
    argv = [base_python(), str(pyz.path), "apply", str(files)]
    unpacking = run(argv, env)
    assert unpacking.returncode == 0, unpacking.stderr
    bundle = _bundle_path(pyz, root)
    assert not bundle.exists()
    first = run(argv, env)
    assert first.returncode == 0, first.stderr
    codes = _read_bundle(bundle)
    assert {"ccm", "ccm.__main__", "ccm.cli.main", "ccm.apply.engine", "ccm.resources.file.logic"} <= set(codes)
    rel, package, code = codes["ccm.resources"]
    assert (rel, package, code.co_filename) == ("ccm/resources/__init__.py", True,
                                                str(target_of(pyz, root) / "site-packages" / rel))
    assert not [n for n in codes if not (n == "ccm" or n.startswith("ccm."))]
    before = bundle.stat()
    steady = [run(argv, env) for _ in range(2)]
    assert [r.returncode for r in steady] == [0, 0] and _quiet(steady[0].stdout) == _quiet(steady[1].stdout)
    assert "stable" in steady[0].stdout and steady[0].stderr == ""
    after = bundle.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)   # nothing new: not written
    execs = _manifest(tmp_path, "exec.yaml", "    - exec:\n        - /bin/true:\n            command: /bin/true\n")
    res = run([base_python(), str(pyz.path), "apply", str(execs)], env)
    assert res.returncode == 0, res.stderr
    grown = _read_bundle(bundle)
    assert set(codes) < set(grown) and "ccm.resources.exec.logic" in grown
    assert not [n for n in os.listdir(bundle.parent) if n.endswith(".tmp")]


def test_bundled_code_is_what_runs_and_a_foreign_or_damaged_bundle_is_ignored(pyz: Pyz, tmp_path: Path) -> None:
    import importlib.util
    import marshal

    root = tmp_path / "root"
    env = clean_env(SHIV_ROOT=str(root), CCM_CACHE_DIR=str(tmp_path / "cache"), CCM_LOCK_DIR=str(tmp_path / "locks"))
    manifest = _manifest(tmp_path, "m.yaml", "    - exec:\n        - /bin/true:\n            command: /bin/true\n")
    argv = [base_python(), str(pyz.path), "apply", str(manifest)]
    normal = [run(argv, env) for _ in range(2)][-1]   # unpacked, then the bundle written
    assert normal.returncode == 0, normal.stderr
    bundle = _bundle_path(pyz, root)
    codes = _read_bundle(bundle)
    rel, package, _code = codes["ccm.cli.main"]
    marker = compile("def main(argv=None):\n    print('bundled code ran')\n    return 0\n", rel, "exec")
    codes["ccm.cli.main"] = (rel, package, marker)
    payload = marshal.dumps(codes)
    bundle.write_bytes(BUNDLE_HEADER + importlib.util.MAGIC_NUMBER + payload)
    res = run(argv, env)
    assert (res.returncode, res.stdout, res.stderr) == (0, "bundled code ran\n", "")
    res = run(argv, dict(env, CCM_NO_IMPORT_BUNDLE="1"))
    assert res.returncode == 0 and "bundled code ran" not in res.stdout and "Manifest Run Summary" in res.stdout
    for damaged in (BUNDLE_HEADER + b"\x00\x00\r\n" + payload,   # another interpreter's magic
                    BUNDLE_HEADER + importlib.util.MAGIC_NUMBER + payload[:len(payload) // 2],   # cut short
                    b"\x00" * 64):
        bundle.write_bytes(damaged)
        res = run(argv, env)
        assert res.returncode == 0 and "bundled code ran" not in res.stdout, res.stderr
        assert _quiet(res.stdout) == _quiet(normal.stdout) and res.stderr == ""
        assert "ccm.cli.main" in _read_bundle(bundle)   # written again, whole


# --------------------------------------------------------------------------- every CPython

@pytest.mark.parametrize("minor", SUPPORTED_HERE)
def test_runs_on_each_cpython(pyz: Pyz, minor: str, tmp_path_factory) -> None:
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no CPython {minor} on this machine")
    # one root shared by all minors: they share one extraction (same build id)
    root = tmp_path_factory.getbasetemp() / "shared-root"
    env = clean_env(SHIV_ROOT=str(root))
    res = run([python, str(pyz.path), "--version"], env)
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    # extensions for this ABI really load (stdin script via shiv's interpreter mode)
    res = run([python, str(pyz.path), "-"], dict(env, SHIV_INTERPRETER="1"), stdin=EXT_CHECK)
    assert res.returncode == 0 and f"ext-ok {minor}" in res.stdout, res.stderr
    if (REPO / "ccm" / "cli" / "facts_cmd.py").exists():
        res = run([python, str(pyz.path), "facts"], env)
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.strip(), "facts printed nothing"


# --------------------------------------------------------------------------- guard

@pytest.mark.parametrize("version", ["3.8", "3.7", "3.6", "2.7"])
def test_guard_on_unsupported_python(pyz: Pyz, version: str, tmp_path: Path) -> None:
    python = pyenv_python(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    res = run([python, str(pyz.path), "--version"], clean_env(SHIV_ROOT=str(tmp_path)))
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert f" {version}." in lines[0] and ", ".join(pyz.pythons) in lines[0]
    assert not any(tmp_path.iterdir()), "nothing may be unpacked before the guard"


# --------------------------------------------------------------------------- extraction root

def test_home_unset_uses_passwd_home(pyz: Pyz) -> None:
    """cron: no HOME; shiv's ~/.shiv comes from the passwd entry."""
    import pwd

    home = Path(pwd.getpwuid(os.geteuid()).pw_dir)
    target = target_of(pyz, home / ".shiv")
    existed = target.exists()
    try:
        res = run([base_python(), str(pyz.path), "--version"], clean_env(HOME=None))
        assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
        if os.access(home, os.W_OK):
            assert (target / ".ccm-extracted").exists()
    finally:
        if not existed:
            shutil.rmtree(target, ignore_errors=True)
            for extra in (home / ".shiv").glob(f".ccm_{pyz.build_id}*"):
                extra.unlink()


def _user_setup(pyz: Pyz, base: Path, uid: int = NOBODY):
    """A copy of the pyz the user can read and a private TMPDIR for the fallback."""
    exe = base / "ccm.pyz"
    shutil.copyfile(pyz.path, exe)
    os.chmod(exe, 0o755)
    tmpdir = base / "tmp"
    tmpdir.mkdir()
    os.chmod(tmpdir, 0o1777)
    return exe, tmpdir


def test_unwritable_home_falls_back(pyz: Pyz, shared_tmp: Path) -> None:
    exe, tmpdir = _user_setup(pyz, shared_tmp)
    home = shared_tmp / "home"
    home.mkdir()
    if IS_ROOT:
        os.chown(home, NOBODY, NOBODY)
    os.chmod(home, 0o555)
    uid = NOBODY if IS_ROOT else os.geteuid()
    env = clean_env(HOME=str(home), TMPDIR=str(tmpdir))
    res = run(as_user([user_python(), str(exe), "--version"]), env)
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    assert not (home / ".shiv").exists()
    chosen = tmpdir / f"ccm-{uid}"
    assert (target_of(pyz, chosen) / ".ccm-extracted").exists()
    st = chosen.stat()
    assert st.st_uid == uid and stat.S_IMODE(st.st_mode) == 0o700


def test_user_without_home_dir(pyz: Pyz, shared_tmp: Path) -> None:
    """HOME points at a directory that does not exist: nothing is created there."""
    exe, tmpdir = _user_setup(pyz, shared_tmp)
    missing = shared_tmp / "no-such-home"
    env = clean_env(HOME=str(missing), TMPDIR=str(tmpdir))
    res = run(as_user([user_python(), str(exe), "--version"]), env)
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    assert not missing.exists()
    uid = NOBODY if IS_ROOT else os.geteuid()
    assert (target_of(pyz, tmpdir / f"ccm-{uid}") / ".ccm-extracted").exists()


def test_foreign_dir_in_tmp_is_not_used(pyz: Pyz, shared_tmp: Path) -> None:
    """A pre-made, others-writable /tmp/ccm-<uid> (planted) is skipped."""
    if not IS_ROOT:
        pytest.skip("needs root to plant a directory for another uid")
    exe, tmpdir = _user_setup(pyz, shared_tmp)
    planted = tmpdir / f"ccm-{NOBODY}"
    planted.mkdir()
    os.chmod(planted, 0o777)
    tmp2 = shared_tmp / "tmp2"
    tmp2.mkdir()
    os.chmod(tmp2, 0o1777)
    env = clean_env(HOME="/nonexistent", TMPDIR=str(tmpdir), XDG_RUNTIME_DIR=str(tmp2))
    res = run(as_user([user_python(), str(exe), "--version"]), env)
    assert res.returncode == 0, res.stderr
    assert not any(planted.iterdir())
    assert (target_of(pyz, tmp2 / f"ccm-{NOBODY}") / ".ccm-extracted").exists()


def test_noexec_home_is_skipped(pyz: Pyz, shared_tmp: Path) -> None:
    """~/.shiv on a noexec mount cannot load extensions: the next candidate is used."""
    if not IS_ROOT or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private noexec mount")
    home = shared_tmp / "home"
    tmpdir = shared_tmp / "tmp"
    home.mkdir()
    tmpdir.mkdir()
    script = (f"mount -t tmpfs -o noexec,mode=0755 tmpfs {home} && "
              f"exec {base_python()} {pyz.path} --version")
    env = clean_env(HOME=str(home), TMPDIR=str(tmpdir))
    res = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], env)
    if "mount" in res.stderr and res.returncode != 0 and "ccm" not in res.stderr:
        pytest.skip(f"cannot mount here: {res.stderr.strip()}")
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    assert (target_of(pyz, tmpdir / "ccm-0") / ".ccm-extracted").exists()


def test_full_home_falls_back(pyz: Pyz, shared_tmp: Path) -> None:
    """~/.shiv passes the checks but the disk is full: the next candidate takes the tree."""
    if not IS_ROOT or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private tmpfs")
    home = shared_tmp / "home"
    tmpdir = shared_tmp / "tmp"
    home.mkdir()
    tmpdir.mkdir()
    script = (f"mount -t tmpfs -o size=256k,mode=0755 tmpfs {home} && "
              f"exec {base_python()} {pyz.path} --version")
    env = clean_env(HOME=str(home), TMPDIR=str(tmpdir))
    res = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], env)
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    assert (target_of(pyz, tmpdir / "ccm-0") / ".ccm-extracted").exists()


def test_explicit_root_is_honoured(pyz: Pyz, tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    res = run([base_python(), str(pyz.path), "--version"], clean_env(SHIV_ROOT=str(root)))
    assert res.returncode == 0, res.stderr
    assert (target_of(pyz, root) / "site-packages" / "ccm" / "__init__.py").exists()


def test_explicit_unusable_root_is_one_clear_line(pyz: Pyz) -> None:
    res = run([base_python(), str(pyz.path), "--version"],
              clean_env(SHIV_ROOT="/proc/ccm-cannot-exist"))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "SHIV_ROOT=/proc/ccm-cannot-exist" in res.stderr


# --------------------------------------------------------------------------- damage

def test_partial_deletion_is_reextracted(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    argv = [base_python(), str(pyz.path), "--version"]
    assert run(argv, env).returncode == 0
    site = target_of(pyz, tmp_path) / "site-packages"
    # what a tmp cleaner does: old files go, directories stay
    victims = [site / "ccm" / "cli" / "main.py", site / "jsonschema" / "_format.py"]
    victims += sorted(site.glob("rpds/*.so"))[:1]
    for victim in victims:
        victim.unlink()
    res = run(argv, env)
    assert (res.returncode, res.stdout.split()[0], res.stderr) == (0, pyz.version, "")
    for victim in victims:
        assert victim.exists(), victim
    assert not list(tmp_path.glob(".*stale*")), "the damaged tree is cleaned up"


def test_missing_marker_is_reextracted(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    argv = [base_python(), str(pyz.path), "--version"]
    assert run(argv, env).returncode == 0
    target = target_of(pyz, tmp_path)
    (target / ".ccm-extracted").unlink()
    shutil.rmtree(target / "site-packages" / "yaml")
    assert run(argv, env).returncode == 0
    assert (target / "site-packages" / "yaml" / "__init__.py").exists()


def test_warm_run_does_not_reextract(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    argv = [base_python(), str(pyz.path), "--version"]
    assert run(argv, env).returncode == 0
    sentinel = target_of(pyz, tmp_path) / "sentinel"  # gone if the tree is replaced
    sentinel.write_text("x")
    assert run(argv, env).returncode == 0  # writes .pyc: must not look like damage
    assert run(argv, env).returncode == 0
    assert sentinel.exists()


def test_force_extract_once(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    argv = [base_python(), str(pyz.path), "--version"]
    assert run(argv, env).returncode == 0
    sentinel = target_of(pyz, tmp_path) / "sentinel"
    sentinel.write_text("x")
    assert run(argv, dict(env, SHIV_FORCE_EXTRACT="1")).returncode == 0
    assert not sentinel.exists()
    sentinel.write_text("x")
    assert run(argv, env).returncode == 0
    assert sentinel.exists()


def _versions_at_once(pyz: Pyz, env: Dict[str, str], count: int) -> None:
    procs = [subprocess.Popen([base_python(), str(pyz.path), "--version"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(count)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert (proc.returncode, out.split()[:1], err) == (0, [pyz.version], "")


def test_concurrent_first_runs(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    _versions_at_once(pyz, env, 4)


def test_warm_run_skips_shivs_bootstrap(pyz: Pyz, tmp_path: Path) -> None:
    """A warm start is the stub alone: neither _ccm_boot nor shiv's _bootstrap is imported."""
    env = clean_env(SHIV_ROOT=str(tmp_path))
    argv = [base_python(), "-X", "importtime", str(pyz.path), "--version"]
    first = run(argv, env)
    assert first.returncode == 0 and "| _bootstrap\n" in first.stderr  # unpacked by shiv's code
    warm = run(argv, env)
    assert (warm.returncode, warm.stdout.split()[:1]) == (0, [pyz.version])
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.splitlines()}
    # the stub is executed by the pyz's __main__.py (compiled once, not imported): the entry
    # module is the first import of ours, straight from the warm tree
    assert "ccm.__main__" in imported and "_ccm_stub" not in imported
    # (typing is not listed: 3.9's runpy imports it before any code of ours runs)
    assert not imported & {"_bootstrap", "_ccm_boot", "_ccm_bundle", "zipfile", "pathlib", "hashlib"}, imported
    # any SHIV_ variable but SHIV_ROOT is shiv's business: the full path runs
    res = run([base_python(), str(pyz.path), "-"], dict(env, SHIV_INTERPRETER="1"),
              stdin="from ccm.buildinfo import build_id; print(build_id())\n")
    assert (res.returncode, res.stdout.strip()) == (0, pyz.build_id), res.stderr


def _old_build(root: Path, letter: str, mtime_ns: int) -> Path:
    from pyzboot import boot

    tree = root / ("ccm_" + letter * 64)
    (tree / "site-packages" / "pkg").mkdir(parents=True)
    (tree / "site-packages" / "pkg" / "__init__.py").write_text("")
    boot.write_marker(str(tree))
    os.utime(tree / boot.MARKER, ns=(mtime_ns, mtime_ns))
    return tree


def test_concurrent_first_runs_prune_old_builds(pyz: Pyz, tmp_path: Path) -> None:
    """A new build's first runs keep it and the newest older build, whoever starts first."""
    old = [_old_build(tmp_path, c, (i + 1) * 10**18) for i, c in enumerate("abc")]
    env = clean_env(SHIV_ROOT=str(tmp_path))
    _versions_at_once(pyz, env, 4)
    assert [t.exists() for t in old] == [False, False, True]
    assert target_of(pyz, tmp_path).is_dir()
    assert not [n for n in os.listdir(tmp_path) if ".stale-" in n or n.endswith(".tmp")]
    res = run([base_python(), str(pyz.path), "--version"], env)  # the warm path prunes nothing
    assert res.returncode == 0 and old[2].exists()


# --------------------------------------------------------------------------- reproducible

def _tree_digest() -> str:
    h = hashlib.sha256()
    for path in sorted((REPO / "ccm").rglob("*.py")) + sorted((REPO / "pyzboot").rglob("*.py")) + [REPO / "requirements.txt"]:
        h.update(str(path).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_reproducible(tmp_path: Path) -> None:
    """Two builds (other umask, other cwd, other dist dir) give the same bytes.

    The tree is shared with people editing ccm/ right now: if the sources change between
    the two builds, build again.
    """
    def build(i: int, umask: int) -> str:
        dist = tmp_path / f"dist{i}"
        res = subprocess.run(
            [sys.executable, str(REPO / "build_zipapp.py"), "--dist", str(dist), "--no-smoke"],
            capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
            preexec_fn=lambda: os.umask(umask),
        )
        assert res.returncode == 0, res.stdout + res.stderr
        return hashlib.sha256((dist / f"ccm-{os.uname().machine}.pyz").read_bytes()).hexdigest()

    for attempt in range(3):
        before = _tree_digest()
        first, second = build(2 * attempt, 0o022), build(2 * attempt + 1, 0o077)
        if _tree_digest() == before:
            break
    assert first == second
