"""Pure parts of the build script and the boot module, without building anything."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ccm import _bootstrap as boot

from .conftest import REPO

sys.path.insert(0, str(REPO))
import build_zipapp as bz  # noqa: E402

HOST = {"amd64": "x86_64", "arm64": "aarch64"}.get(os.uname().machine, os.uname().machine)
HERE = sys.version_info[:2]


# --------------------------------------------------------------------------- guard

def test_guard_accepts_this_interpreter() -> None:
    assert boot.check_interpreter(supported=[HERE], arch=HOST) is None


def test_guard_names_running_and_supported_versions() -> None:
    msg = boot.check_interpreter(supported=[(3, 8), (3, 99)], arch=HOST)
    assert msg is not None and "\n" not in msg
    assert "running CPython %d.%d.%d" % sys.version_info[:3] in msg
    assert "supports CPython 3.8, 3.99 on %s" % HOST in msg


def test_guard_other_machine() -> None:
    other = "aarch64" if HOST == "x86_64" else "x86_64"
    msg = boot.check_interpreter(supported=[HERE], arch=other)
    assert msg is not None and "machine " + os.uname().machine in msg


# --------------------------------------------------------------------------- root choice

def _env(**kw: str) -> dict:
    return {k: v for k, v in kw.items() if v is not None}


def test_home_shiv_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    target = boot.choose_target(_env(HOME=str(home), TMPDIR=str(tmp_path)), "ccm_x")
    assert target == str(home / ".shiv" / "ccm_x")
    assert (home / ".shiv").is_dir()


def test_missing_home_not_created(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir(mode=0o700)
    target = boot.choose_target(_env(HOME=str(tmp_path / "nohome"), TMPDIR=str(tmp)), "ccm_x")
    assert target == str(tmp / ("ccm-%d" % os.geteuid()) / "ccm_x")
    assert not (tmp_path / "nohome").exists()


def test_others_writable_dir_refused(tmp_path: Path) -> None:
    root = tmp_path / ("ccm-%d" % os.geteuid())
    root.mkdir()
    os.chmod(root, 0o777)
    with pytest.raises(boot.BootError, match="writable by others"):
        boot.probe(str(root), "ccm_x")


def test_symlinked_private_dir_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(boot.BootError, match="symlink"):
        boot.probe(str(link), "ccm_x")


def test_explicit_root_created(tmp_path: Path) -> None:
    target = boot.choose_target(_env(SHIV_ROOT=str(tmp_path / "a" / "b")), "ccm_x")
    assert target == str(tmp_path / "a" / "b" / "ccm_x")


def test_explicit_root_error_is_one_line() -> None:
    with pytest.raises(boot.BootError) as err:
        boot.choose_target(_env(SHIV_ROOT="/proc/nope/deeper"), "ccm_x")
    assert "SHIV_ROOT=/proc/nope/deeper" in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------- marker

def _tree(root: Path) -> Path:
    site = root / "site-packages"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "data.json").write_text("{}")
    (site / "mod.py").write_text("")
    return site


def test_marker_detects_deleted_file(tmp_path: Path) -> None:
    site = _tree(tmp_path)
    assert not boot.extraction_ok(str(tmp_path))
    boot.write_marker(str(tmp_path))
    assert (site / "pkg" / "__pycache__").is_dir() and (site / "__pycache__").is_dir()
    assert not (site / "pkg" / "sub" / "__pycache__").exists()
    assert boot.extraction_ok(str(tmp_path))
    (site / "pkg" / "__pycache__" / "x.cpython-39.pyc").write_bytes(b"")  # Python's own write
    assert boot.extraction_ok(str(tmp_path))
    os.utime(site / "pkg" / "sub", ns=(1, 1))
    assert not boot.extraction_ok(str(tmp_path))
    boot.write_marker(str(tmp_path))
    (site / "pkg" / "sub" / "data.json").unlink()
    assert not boot.extraction_ok(str(tmp_path))


def test_marker_survives_cleaner_restoring_mtime(tmp_path: Path) -> None:
    """systemd-tmpfiles puts a directory's atime/mtime back after deleting in it."""
    site = _tree(tmp_path)
    boot.write_marker(str(tmp_path))
    st = (site / "pkg").stat()
    (site / "pkg" / "__init__.py").unlink()
    os.utime(site / "pkg", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (site / "pkg").stat().st_mtime_ns == st.st_mtime_ns
    assert not boot.extraction_ok(str(tmp_path))


def test_marker_detects_deleted_directory(tmp_path: Path) -> None:
    site = _tree(tmp_path)
    boot.write_marker(str(tmp_path))
    import shutil

    shutil.rmtree(site / "pkg")
    assert not boot.extraction_ok(str(tmp_path))


def _build_tree(root: Path, name: str, mtime_ns: int) -> Path:
    target = root / name
    _tree(target)
    boot.write_marker(str(target))
    os.utime(target / boot.MARKER, ns=(mtime_ns, mtime_ns))
    return target


def test_prune_keeps_current_and_newest_other(tmp_path: Path) -> None:
    ids = ["ccm_" + c * 64 for c in "abcd"]
    trees = [_build_tree(tmp_path, name, (i + 1) * 10**18) for i, name in enumerate(ids)]
    foreign = tmp_path / "ccm_other"  # not a build dir name: never touched
    foreign.mkdir()
    boot.prune(str(tmp_path), ids[0])  # the oldest is current (a rollback)
    assert [t.exists() for t in trees] == [True, False, False, True]
    assert foreign.is_dir()
    assert not [n for n in os.listdir(tmp_path) if ".stale-" in n]


def test_prune_skips_a_tree_in_use(tmp_path: Path) -> None:
    import subprocess
    import textwrap

    ids = ["ccm_" + c * 64 for c in "abc"]
    trees = [_build_tree(tmp_path, name, (i + 1) * 10**18) for i, name in enumerate(ids)]
    # another process runs from the oldest tree: it holds the shared in-use lock
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from ccm import _bootstub as stub
        assert stub.hold({str(trees[0])!r}) is not None
        print("held", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        boot.prune(str(tmp_path), ids[2])
        assert [t.exists() for t in trees] == [True, True, True]
    finally:
        holder.communicate("")
    boot.prune(str(tmp_path), ids[2])
    assert [t.exists() for t in trees] == [False, True, True]


def test_refusal_names_the_distro_package(tmp_path: Path) -> None:
    rel = tmp_path / "os-release"
    supported = [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14)]
    msg = boot.check_interpreter(supported=[(3, 99)], arch=HOST)
    rel.write_text('NAME="Red Hat Enterprise Linux"\nID="rhel"\nVERSION_ID="8.9"\n'
                   'PRETTY_NAME="Red Hat Enterprise Linux 8.9 (Ootpa)"\n')
    out = boot.refusal(msg, supported=supported, release_path=str(rel), running=(3, 11))
    assert out == msg  # running a supported minor (another problem): nothing to install
    out = boot.refusal(msg, supported=supported, release_path=str(rel), running=(3, 6))
    assert out.startswith(msg) and "\n" not in out
    assert out.endswith("; on Red Hat Enterprise Linux 8.9 (Ootpa) install one with: "
                        "dnf install python3.11 (then run: python3.11 ccm.pyz)")
    rel.write_text("ID=rocky\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=8.10\n")
    assert "dnf install python3.11" in boot.refusal(msg, supported, str(rel), (3, 6))
    rel.write_text('ID=ubuntu\nVERSION_ID="20.04"\nPRETTY_NAME="Ubuntu 20.04.6 LTS"\n')
    assert boot.refusal(msg, supported, str(rel), (3, 6)).endswith(
        "on Ubuntu 20.04.6 LTS install one with: apt install python3.9 (then run: python3.9 ccm.pyz)")
    rel.write_text("ID=ubuntu\nVERSION_ID=18.04\n")  # nothing supported packaged: no hint
    assert boot.refusal(msg, supported, str(rel), (3, 6)) == msg
    assert boot.refusal(msg, supported, str(tmp_path / "missing"), (3, 6)) == msg


# --------------------------------------------------------------------------- build helpers

def test_parse_wheel_name() -> None:
    dist, version, tags = bz.parse_wheel_name(
        "rpds_py-0.27.1-cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert (dist, version) == ("rpds-py", "0.27.1")
    assert ("cp39", "cp39", "manylinux2014_x86_64") in tags


@pytest.mark.parametrize("name,py,ok", [
    ("pyyaml-6.0.3-cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "3.9", True),
    ("pyyaml-6.0.3-cp310-cp310-manylinux2014_x86_64.whl", "3.9", False),
    ("psutil-7.2.2-cp36-abi3-manylinux2010_x86_64.manylinux_2_12_x86_64.whl", "3.13", True),
    ("x-1-cp39-cp39-manylinux_2_28_x86_64.whl", "3.9", False),  # glibc 2.28: too new
    ("x-1-cp39-cp39-musllinux_1_2_x86_64.whl", "3.9", False),
    ("attrs-26.1.0-py3-none-any.whl", "3.14", True),
])
def test_supported_tags(name: str, py: str, ok: bool) -> None:
    assert bool(bz.parse_wheel_name(name)[2] & bz.supported_tags(py, "x86_64")) is ok


@pytest.mark.parametrize("member,expected", [
    ("psutil/tests/test_linux.py", None),
    ("jsonschema/benchmarks/x.py", None),
    ("jsonschema/_format.py", "jsonschema/_format.py"),
    ("rpds/__init__.pyi", None),
    ("attrs-26.1.0.dist-info/RECORD", None),
    ("attrs-26.1.0.dist-info/licenses/LICENSE", "attrs-26.1.0.dist-info/licenses/LICENSE"),
    ("psutil-7.2.2.dist-info/LICENSE", "psutil-7.2.2.dist-info/LICENSE"),
    ("foo-1.data/purelib/foo.py", "foo.py"),
    ("foo-1.data/scripts/foo", None),
])
def test_wheel_member_filter(member: str, expected: str) -> None:
    assert bz._wheel_target(member) == expected


def test_pins_must_be_exact(tmp_path: Path) -> None:
    req = tmp_path / "r.txt"
    req.write_text("# c\nPyYAML==6.0.3\nrpds_py == 0.27.1  # why\n")
    assert bz.read_pins(req) == {"pyyaml": "6.0.3", "rpds-py": "0.27.1"}
    req.write_text("jsonschema>=4\n")
    with pytest.raises(SystemExit):
        bz.read_pins(req)


def test_requirements_are_all_pinned() -> None:
    assert set(bz.read_pins()) >= {"pyyaml", "jsonschema", "rpds-py", "psutil", "referencing"}


# --------------------------------------------------------------------------- boot stub

def test_stub_puts_site_packages_where_shiv_does(tmp_path: Path, monkeypatch) -> None:
    """_ccm_stub's warm start orders sys.path like shiv's bootstrap (same index rule)."""
    from shiv.bootstrap import get_first_sitedir_index

    from ccm import _bootstub as stub

    site = tmp_path / "site-packages"
    site.mkdir()
    for path in (["/x/app.pyz", "/usr/lib/python3.11", "/usr/lib/python3/dist-packages", "/y"],
                 ["/x/app.pyz", "/usr/lib/python3.11"],
                 ["/usr/local/lib/python3.11/site-packages/", "/z"]):
        monkeypatch.setattr(sys, "path", list(path))
        index = get_first_sitedir_index() or len(path)
        want = path[:index] + [str(site)] + path[index:]
        stub.add_site_packages(str(site))
        assert sys.path == want


def test_stub_build_id_and_fast_path_refusals(tmp_path: Path, monkeypatch) -> None:
    from ccm import _bootstub as stub
    from ccm import buildinfo

    assert stub.build_id() == "" and buildinfo.build_id() == ""
    monkeypatch.setattr(stub, "BUILD_ID", "f" * 64)
    monkeypatch.setitem(sys.modules, "_ccm_stub", stub)
    assert buildinfo.build_id() == "f" * 64
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    target = _build_tree(root, "ccm_" + "f" * 64, 10**18)
    env = {"SHIV_ROOT": str(root)}
    assert stub._fast_target(env) == str(target)
    assert stub._held, "the in-use lock is held for the process"
    assert stub._fast_target(dict(env, SHIV_FORCE_EXTRACT="1")) is None  # shiv's business
    (target / "site-packages" / "mod.py").unlink()  # damaged: the full boot re-extracts
    assert stub._fast_target(env) is None
    shiv_dir = tmp_path / "home" / ".shiv"  # the default root: ownership and modes checked
    shiv_dir.mkdir(parents=True)
    _build_tree(shiv_dir, "ccm_" + "f" * 64, 10**18)
    home_env = {"HOME": str(tmp_path / "home")}
    assert stub._fast_target(home_env) == str(shiv_dir / ("ccm_" + "f" * 64))
    os.chmod(shiv_dir, 0o777)
    assert stub._fast_target(home_env) is None  # writable by others: the full boot says why
