"""The stub's warm start: sys.path as shiv orders it, the build id, and when it steps aside."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from pyzboot import stub

from .test_tree import _build_tree


def test_stub_puts_site_packages_where_shiv_does(tmp_path: Path, monkeypatch) -> None:
    """_ccm_stub's warm start orders sys.path like shiv's bootstrap (same index rule)."""
    from shiv.bootstrap import get_first_sitedir_index

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
