"""The import bundle's writer (pyzboot/bundle.py) run from the source tree: what it writes
reads back through the stub's reader, and it writes only where it may."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import ccm
from pyzboot import bundle, stub

SOURCE_ROOT = str(Path(ccm.__file__).resolve().parent.parent)   # our "site-packages"


def _state(tmp_path: Path, served=frozenset()):
    cache = tmp_path / "__pycache__"
    cache.mkdir(mode=0o755, exist_ok=True)
    return str(cache / "imports-apply.test.bundle"), SOURCE_ROOT, frozenset(served)


def _save(monkeypatch, state) -> bool:
    """What the stub does at exit: its unbundled modules handed to save."""
    monkeypatch.setattr(stub, "IMPORT_BUNDLE", state)
    return bundle.save(state[0], state[1], stub.unbundled_modules())


def test_a_saved_bundle_holds_every_imported_ccm_module_and_reads_back(tmp_path, monkeypatch):
    import ccm.apply.engine  # noqa: F401  # one more for sure

    state = _state(tmp_path)
    assert _save(monkeypatch, state)
    codes = stub.read_import_bundle(state[0])
    assert codes is not None
    loaded = {n for n, m in sys.modules.items() if (n == "ccm" or n.startswith("ccm."))
              and (getattr(m, "__file__", "") or "").startswith(SOURCE_ROOT + os.sep)}
    assert set(codes) == loaded and "ccm.apply.engine" in codes
    rel, package, code = codes["ccm.apply"]
    assert (rel, package) == ("ccm/apply/__init__.py", True) and code.co_filename.endswith(rel)
    assert codes["ccm.apply.engine"][:2] == ("ccm/apply/engine.py", False)
    namespace: dict = {"__name__": "probe"}
    exec(codes["ccm.model.value"][2], namespace)   # real module code
    assert "ValueObject" in namespace
    assert not _save(monkeypatch, _state(tmp_path, served=codes))   # nothing new: nothing written


def test_a_new_module_is_added_to_what_the_bundle_already_holds(tmp_path, monkeypatch):
    state = _state(tmp_path)
    path = Path(state[0])
    assert _save(monkeypatch, state)
    codes = stub.read_import_bundle(state[0])
    assert codes is not None
    kept = codes.pop("ccm.model.value")
    del codes["ccm.apply.engine"]
    import marshal
    from importlib.util import MAGIC_NUMBER

    path.write_bytes(stub.BUNDLE_HEADER + MAGIC_NUMBER + marshal.dumps(codes))
    served = frozenset(codes)
    assert _save(monkeypatch, (state[0], state[1], served))
    again = stub.read_import_bundle(state[0])
    assert again is not None and set(again) == set(codes) | {"ccm.model.value", "ccm.apply.engine"}
    assert again["ccm.model.value"][:2] == kept[:2]
    assert not [n for n in os.listdir(path.parent) if n.endswith(".tmp")]


def test_it_writes_only_into_a_directory_of_ours_nobody_else_may_write(tmp_path):
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o755)
    assert bundle._write(str(ours / "b"), b"data") and (ours / "b").read_bytes() == b"data"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    assert not bundle._write(str(link / "b"), b"data")   # reached through a symlink
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert not bundle._write(str(shared / "b"), b"data")
    assert os.listdir(elsewhere) == [] and os.listdir(shared) == []
    assert not bundle._write(str(tmp_path / "missing" / "b"), b"data")


def test_the_stub_reads_no_bundle_it_cannot_trust(tmp_path):
    from importlib.util import MAGIC_NUMBER

    path = tmp_path / "b.bundle"
    assert stub.read_import_bundle(str(path)) is None   # none there
    for data in (b"", stub.BUNDLE_HEADER + b"\x00\x00\r\n" + b"{}", stub.BUNDLE_HEADER + MAGIC_NUMBER + b"\xff",
                 stub.BUNDLE_HEADER + MAGIC_NUMBER + b"[\x00\x00\x00\x00"):   # damaged, a list not a dict
        path.write_bytes(data)
        assert stub.read_import_bundle(str(path)) is None
    target = tmp_path / "real.bundle"
    import marshal

    target.write_bytes(stub.BUNDLE_HEADER + MAGIC_NUMBER + marshal.dumps({}))
    assert stub.read_import_bundle(str(target)) == {}
    link = tmp_path / "link.bundle"
    link.symlink_to(target)
    assert stub.read_import_bundle(str(link)) is None   # never through a symlink
    assert stub.import_bundle_path("/sp", ["ccm.pyz", "apply", "x"]) == os.path.join(
        "/sp", "ccm", "__pycache__", f"imports-apply.{sys.implementation.cache_tag}.bundle")
    for argv in (["ccm.pyz"], ["ccm.pyz", "--version"], ["ccm.pyz", "../x"], ["ccm.pyz", "Apply"]):
        assert stub.import_bundle_path("/sp", argv) is None
