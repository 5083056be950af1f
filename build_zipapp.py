#!/usr/bin/env python3
"""Build ``dist/ccm-<arch>.pyz``: one file that runs on every supported CPython.

What: downloads the manylinux wheels pinned in requirements.txt for each CPython in
``--pythons`` and the ``--arch`` (pure wheels are shared), merges them into one
site-packages (extension file names carry the ABI tag, so ``rpds.cpython-39-...so`` and
``rpds.cpython-313-...so`` sit side by side; psutil is abi3), strips the extensions, adds
the ``ccm`` package from this tree and bundles it with shiv. The boot code, ``pyzboot/``
(not part of ``ccm``), goes to the top of the zip: ``stub.py`` as ``_ccm_stub.py``, the
entry module, which starts a warm tree by itself and hands everything else to ``boot.py``
(``_ccm_boot.py``: guard message, extraction root, unpacking, then shiv's bootstrap), and
``bundle.py`` as ``_ccm_bundle.py`` (the import bundle's writer); see those modules. For the
host's architecture ``dist/ccm.pyz`` is a copy.

Guarantees: the same inputs (wheels, source tree, SOURCE_DATE_EPOCH, this script, the
build Python's zlib and binutils' strip) give the same bytes: one timestamp for every
entry, sorted entries, normalised modes, no build paths. Wheels are cached in
``build/wheels`` with a stamp per (arch, CPython), so a rerun with unchanged pins needs no
network. The build fails when a pinned wheel is missing for one of the CPythons, when pip
resolves a dependency that requirements.txt does not pin, or when the x86_64 file is over
its size budget.

Not: a general packager; it knows the layout of these wheels only as far as stated here.

Usage: .venv/bin/python build_zipapp.py [--arch x86_64|aarch64] [--pythons 3.9,...]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

REPO = Path(__file__).resolve().parent
REQUIREMENTS = REPO / "requirements.txt"
DEFAULT_PYTHONS = "3.9,3.10,3.11,3.12,3.13,3.14"
MANYLINUX = {"x86_64": "manylinux2014_x86_64", "aarch64": "manylinux2014_aarch64"}
ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}
MAX_GLIBC_MINOR = 17  # manylinux2014 = glibc 2.17: RHEL 7 and every host we target
SIZE_BUDGET = {"x86_64": 8 * 1024 * 1024}
ENTRY_POINT = "ccm.__main__:main"
BOOT_PACKAGE = REPO / "pyzboot"
STUB_MODULE = "_ccm_stub"  # the entry module in the zip, made from pyzboot/stub.py
# the other top-level modules in the zip: {name in the zip: source in pyzboot/}
BOOT_MODULES = {"_ccm_boot": "boot.py", "_ccm_bundle": "bundle.py"}
# The site-packages entries, nested in one stored member: Python reads a zipapp's whole
# central directory, entry by entry in Python code, on every run (~6 us an entry, 370
# entries: 2 ms), and only an extraction reads site-packages (``_ccm_boot.extract``).
PAYLOAD = "site-packages.zip"
SHEBANG = "/usr/bin/env python3"
# Dropped from third-party packages: never imported at run time.
DROP_PACKAGE_DIRS = {"tests", "benchmarks"}
DROP_SUFFIXES = (".pyi", ".c", ".h", ".pyx", ".pxd")
KEEP_DIST_INFO = re.compile(
    r"^(METADATA|top_level\.txt|entry_points\.txt|licenses/.+|(LICEN[CS]E|COPYING|NOTICE|AUTHORS)[^/]*)$"
)
SKIP_SOURCE = re.compile(r"(^|/)(__pycache__|\.[^/]*)(/|$)|\.(pyc|pyo|swp|orig|rej)$|~$")


def log(msg: str) -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------- requirements

def read_pins(path: Path = REQUIREMENTS) -> Dict[str, str]:
    """{normalised name: version} from ``name==version`` lines."""
    pins: Dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)", line)
        if not m:
            raise SystemExit(f"build_zipapp: requirements.txt: not an exact pin: {raw!r}")
        pins[normalise(m.group(1))] = m.group(2)
    return pins


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_wheel_name(filename: str) -> Tuple[str, str, Set[Tuple[str, str, str]]]:
    """(normalised dist, version, {(python, abi, platform)}) from a wheel file name."""
    parts = filename[:-4].split("-")
    if len(parts) == 6:
        del parts[2]  # build tag
    if len(parts) != 5:
        raise ValueError(f"not a wheel name: {filename}")
    dist, version, pys, abis, plats = parts
    tags = {(p, a, pl) for p in pys.split(".") for a in abis.split(".") for pl in plats.split(".")}
    return normalise(dist), version, tags


def supported_tags(py: str, arch: str) -> Set[Tuple[str, str, str]]:
    """The wheel tags CPython ``py`` on manylinux2014/``arch`` accepts (like pip's list)."""
    major, minor = (int(x) for x in py.split("."))
    cp = f"cp{major}{minor}"
    plats = [f"manylinux_2_{m}_{arch}" for m in range(MAX_GLIBC_MINOR, 4, -1)]
    plats += [f"manylinux{x}_{arch}" for x in ("2014", "2010", "1")]
    tags = {(cp, cp, p) for p in plats}
    tags |= {(f"cp{major}{m}", "abi3", p) for m in range(2, minor + 1) for p in plats}
    tags |= {(cp, "none", p) for p in plats}
    for m in range(minor, -1, -1):
        tags |= {(f"py{major}{m}", "none", "any"), (f"cp{major}{m}", "none", "any")}
    tags |= {(f"py{major}", "none", "any"), ("py2.py3", "none", "any")}
    return tags


# --------------------------------------------------------------------------- download

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_wheels(py: str, arch: str, pins: Dict[str, str], cache: Path) -> List[Path]:
    """The pinned wheels for one CPython/arch, from the cache or ``pip download``."""
    abi = "cp" + py.replace(".", "")
    req_hash = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = cache / f"{arch}-{abi}.json"
    if stamp.exists():
        data = json.loads(stamp.read_text())
        wheels = [cache / name for name in data.get("wheels", [])]
        if data.get("requirements") == req_hash and all(
            w.exists() and _sha256(w) == data["sha256"][w.name] for w in wheels
        ):
            return wheels
    log(f"  pip download: CPython {py} {arch}")
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        cmd = [
            sys.executable, "-m", "pip", "download", "--isolated", "--disable-pip-version-check",
            "-q", "--only-binary=:all:", "--platform", MANYLINUX[arch], "--python-version", py,
            "--implementation", "cp", "--abi", abi, "-r", str(REQUIREMENTS), "-d", tmp,
        ]
        subprocess.run(cmd, check=True)
        got = sorted(Path(tmp).glob("*.whl"))
        accepted = supported_tags(py, arch)
        seen: Dict[str, Path] = {}
        for whl in got:
            dist, version, tags = parse_wheel_name(whl.name)
            if dist not in pins:
                raise SystemExit(
                    f"build_zipapp: CPython {py} needs {dist} {version}, which requirements.txt "
                    "does not pin; pin it (and say why in vendor_notes.md)"
                )
            if version != pins[dist]:
                raise SystemExit(f"build_zipapp: pip chose {whl.name}, pin is {dist}=={pins[dist]}")
            if not tags & accepted:
                raise SystemExit(f"build_zipapp: {whl.name} does not fit CPython {py} {arch}")
            seen[dist] = whl
        missing = sorted(set(pins) - set(seen))
        if missing:
            raise SystemExit(f"build_zipapp: no wheels for CPython {py} {arch}: {missing}")
        wheels = []
        for whl in got:
            dest = cache / whl.name
            if not dest.exists() or _sha256(dest) != _sha256(whl):
                part = dest.with_name(f".{dest.name}.{os.getpid()}.part")
                shutil.copyfile(whl, part)
                os.replace(part, dest)  # atomic: parallel builds (pytest -n) share the cache
            wheels.append(dest)
    part = stamp.with_name(f".{stamp.name}.{os.getpid()}.part")
    part.write_text(json.dumps({
        "requirements": req_hash,
        "wheels": [w.name for w in wheels],
        "sha256": {w.name: _sha256(w) for w in wheels},
    }, indent=1, sort_keys=True) + "\n")
    os.replace(part, stamp)
    return wheels


# --------------------------------------------------------------------------- staging

def _wheel_target(name: str) -> Optional[str]:
    """Where a wheel member goes in site-packages, or None to drop it."""
    parts = name.split("/")
    if parts[0].endswith(".data"):
        if len(parts) > 2 and parts[1] in ("purelib", "platlib"):
            parts = parts[2:]
        else:
            return None  # scripts, headers, data: nothing we run
    if parts[0].endswith(".dist-info"):
        return name if KEEP_DIST_INFO.match("/".join(parts[1:])) else None
    if len(parts) > 2 and parts[1] in DROP_PACKAGE_DIRS:
        return None
    if name.endswith(DROP_SUFFIXES):
        return None
    return "/".join(parts)


def stage_wheels(wheels: Iterable[Path], site: Path) -> Dict[str, List[str]]:
    """Unpack and merge; returns {wheel name: [files written]}. Conflicts must be identical."""
    owner: Dict[str, Tuple[str, str]] = {}
    written: Dict[str, List[str]] = {}
    for whl in sorted(set(wheels), key=lambda p: p.name):
        written[whl.name] = []
        with zipfile.ZipFile(whl) as zf:
            for info in sorted(zf.infolist(), key=lambda i: i.filename):
                if info.is_dir():
                    continue
                rel = _wheel_target(info.filename)
                if rel is None:
                    continue
                data = zf.read(info)
                digest = hashlib.sha256(data).hexdigest()
                if rel in owner:
                    if owner[rel][1] != digest and ".dist-info/" not in rel:
                        raise SystemExit(f"build_zipapp: {rel} differs in {owner[rel][0]} and {whl.name}")
                    continue  # same file from another ABI's wheel of the same release
                owner[rel] = (whl.name, digest)
                dest = site / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
                written[whl.name].append(rel)
    return written


def strip_extensions(site: Path, arch: str) -> None:
    """``strip --strip-unneeded`` every extension (debug symbols are most of their size).

    For another architecture binutils' ``<arch>-linux-gnu-strip`` is needed (Debian:
    binutils-aarch64-linux-gnu); without it the extensions stay unstripped (a warning).
    """
    names = ["strip", f"{arch}-linux-gnu-strip"]
    if arch != host_arch():
        names.reverse()
    tools = [t for t in names if shutil.which(t)]
    failed: List[str] = []
    for so in sorted(site.rglob("*.so")):
        for tool in tools:
            res = subprocess.run([tool, "--strip-unneeded", str(so)], capture_output=True)
            if res.returncode == 0:
                break
        else:
            failed.append(so.name)
    if failed:
        log(f"  warning: {len(failed)} extensions left unstripped (no strip for {arch}; "
            f"install binutils-{arch.replace('_', '-')}-linux-gnu)")


def read_version() -> str:
    text = (REPO / "ccm" / "__init__.py").read_text()
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if not m:
        raise SystemExit("build_zipapp: no __version__ in ccm/__init__.py")
    return m.group(1)


def stage_ccm(site: Path, version: str) -> None:
    """The ccm package from this tree (sources, package data, schemas/), plus metadata."""
    src = REPO / "ccm"
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(REPO).as_posix()
        if path.is_dir() or SKIP_SOURCE.search(rel):
            continue
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    # The JSON schemas live at the top of the tree; in the zip they are ccm package data,
    # the first place ccm/apply/schema.py looks (pyproject's package-data says the same).
    schemas = REPO / "schemas"
    if schemas.is_dir():
        for path in sorted(schemas.glob("*.json")):
            dest = site / "ccm" / "schemas" / path.name
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
    info = site / f"ccm-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ccm\nVersion: {version}\n")
    (info / "top_level.txt").write_text("ccm\n")


def normalise_tree(root: Path, epoch: int) -> None:
    """Modes independent of umask, one mtime for everything."""
    for path in sorted(root.rglob("*"), reverse=True):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        os.utime(path, (epoch, epoch))


def check_extensions(site: Path, pythons: List[str], arch: str) -> Dict[str, List[str]]:
    """Every versioned extension must exist for every CPython: {module: [abis]}."""
    found: Dict[str, Set[str]] = {}
    for so in site.rglob("*.so"):
        m = re.fullmatch(r"(.+)\.cpython-(\d+)-" + arch + r"-linux-gnu\.so", so.as_posix())
        if m:
            found.setdefault(Path(m.group(1)).relative_to(site).as_posix(), set()).add(m.group(2))
        elif not so.name.endswith(".abi3.so"):
            raise SystemExit(f"build_zipapp: unexpected extension {so.relative_to(site)}")
    want = {py.replace(".", "") for py in pythons}
    for mod, abis in sorted(found.items()):
        if abis != want:
            raise SystemExit(f"build_zipapp: {mod}: extensions for {sorted(abis)}, need {sorted(want)}")
    if not found:
        raise SystemExit("build_zipapp: no versioned extensions found (wrong arch?)")
    return {mod: sorted(abis) for mod, abis in found.items()}


# --------------------------------------------------------------------------- archive

def boot_source(pythons: List[str], arch: str, build_id: str) -> bytes:
    """The stub with this build's SUPPORTED, ARCH and BUILD_ID filled in."""
    text = (BOOT_PACKAGE / "stub.py").read_text()
    supported = "(" + "".join(f"({py.replace('.', ', ')}), " for py in pythons) + ")"
    for name, value in (("SUPPORTED", supported), ("ARCH", repr(arch)), ("BUILD_ID", repr(build_id))):
        text, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, count=1, flags=re.M)
        if n != 1:
            raise SystemExit(f"build_zipapp: pyzboot/stub.py has no {name} line")
    return text.encode("utf-8")


# The zip's __main__.py (shiv's template, formatted with module= and fn=). Python compiles a
# module imported from a zip twice (zipimporter.find_spec asks get_filename, which compiles
# it, then exec_module compiles it again: CPython 3.9-3.13), so the stub is run from here:
# from the code precompiled for this interpreter when the zip holds it (``precompiled``;
# compiling the stub costs ~7.5 M instructions, ~2 ms, on every run), else compiled once
# from the zip's bytes; outside a zip (no ``archive``) it is imported as usual.
# Parseable by Python 2.7, like the stub: the guard has to be able to refuse.
# (zipimport: already loaded, it is what runs this file.)
MAIN_PY = """\
# -*- coding: utf-8 -*-
# ccm.pyz: {module}.{fn}(), precompiled or its source compiled once (build_zipapp.py, MAIN_PY)
import sys
import zipimport
name = "{module}"
if isinstance(__loader__, zipimport.zipimporter):
    m = sys.modules[name] = type(sys)(name)
    m.__file__ = __loader__.archive + "/" + name + ".py"
    code = None
    tag = sys.implementation.cache_tag if sys.version_info >= (3, 3) else None  # 2.7: the guard's refusal
    if tag:
        try:
            data = __loader__.get_data(__loader__.archive + "/" + name + "." + tag + ".code")
            from importlib.util import MAGIC_NUMBER
            if data[:len(MAGIC_NUMBER)] == MAGIC_NUMBER:
                import marshal
                code = marshal.loads(data[len(MAGIC_NUMBER):])
        except Exception:
            code = None
    if code is None:
        code = compile(__loader__.get_data(m.__file__), m.__file__, "exec", 0, True)
    exec(code, m.__dict__)
else:
    m = __import__(name)
m.{fn}()
"""

# Run by each interpreter ``precompiled`` finds: the stub's source on stdin; out: the cache
# tag, a newline, the interpreter's bytecode magic and the marshalled code.
_PRECOMPILE = (
    "import importlib.util, marshal, sys\n"
    "code = compile(sys.stdin.buffer.read(), sys.argv[1], 'exec', 0, True)\n"
    "sys.stdout.buffer.write(sys.implementation.cache_tag.encode() + b'\\n'"
    " + importlib.util.MAGIC_NUMBER + marshal.dumps(code))\n"
)


def precompiled(source: bytes, filename: str, pythons: List[str]) -> Dict[str, bytes]:
    """``{cache tag: magic + marshalled code}`` of ``source`` for each CPython of
    ``pythons`` this host has (this interpreter, or ``pythonX.Y`` on PATH). A run on
    another interpreter compiles the source, as before; a run never trusts code whose
    magic is not its own. Same source and interpreters, same bytes."""
    out: Dict[str, bytes] = {}
    for py in pythons:
        want = "cpython-" + py.replace(".", "")
        candidates = [sys.executable] if f"{sys.version_info[0]}.{sys.version_info[1]}" == py else []
        found = shutil.which(f"python{py}")
        if found:
            candidates.append(found)
        for exe in candidates:
            try:
                res = subprocess.run([exe, "-I", "-c", _PRECOMPILE, filename], input=source,
                                     capture_output=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                continue
            tag, _, blob = res.stdout.partition(b"\n")
            if res.returncode == 0 and tag.decode("ascii", "replace") == want and blob:
                out[want] = blob
                break
    return out


def build_archive(site: Path, target: Path, epoch: int, pythons: List[str], arch: str) -> str:
    """shiv's archive writer, then our boot module added at the top. Returns the build id."""
    import inspect

    from shiv import __version__ as shiv_version
    from shiv import bootstrap as shiv_bootstrap
    from shiv import builder
    from shiv.bootstrap.environment import Environment
    from shiv.constants import BUILD_AT_TIMESTAMP_FORMAT

    # _ccm_boot answers shiv's cache_path() with the directory it chose (tested with the
    # shiv pinned in requirements-dev.txt); refuse a shiv whose bootstrap no longer asks.
    # _ccm_stub starts a warm tree itself, putting site-packages on sys.path as shiv does.
    source = inspect.getsource(shiv_bootstrap.bootstrap)
    for step in ("cache_path(archive, env.root, env.build_id)", "site.addsitedir(site_packages)",
                 "sys.path = sys.path[:index] + sys.path[length:] + sys.path[index:length]",
                 "run(import_string(env.entry_point))"):
        if step not in source:
            raise SystemExit(f"build_zipapp: shiv {shiv_version}'s bootstrap changed; check _ccm_boot")
    built_at = time.strftime(BUILD_AT_TIMESTAMP_FORMAT, time.gmtime(epoch))
    env = Environment(
        built_at=built_at,
        shiv_version=shiv_version,
        entry_point=ENTRY_POINT,
        compile_pyc=False,  # see vendor_notes.md: Python writes .pyc lazily in the extraction
        reproducible=True,
    )
    if "{module}.{fn}()" not in getattr(builder, "MAIN_TEMPLATE", ""):
        raise SystemExit(f"build_zipapp: shiv {shiv_version}'s __main__.py template changed; check MAIN_PY")
    saved = builder.MAIN_TEMPLATE
    builder.MAIN_TEMPLATE = MAIN_PY
    try:
        builder.create_archive([site], target=target, interpreter=SHEBANG,
                               main=f"{STUB_MODULE}:main", env=env, compressed=True)
    finally:
        builder.MAIN_TEMPLATE = saved
    build_id = env.build_id
    assert build_id
    nest_site_packages(target, epoch)
    stub = boot_source(pythons, arch, build_id)
    codes = precompiled(stub, f"{STUB_MODULE}.py", pythons)
    log(f"boot code precompiled for {', '.join(sorted(codes)) or 'no interpreter found here'}")
    entries = [(f"{STUB_MODULE}.py", stub)]
    entries += [(f"{name}.py", (BOOT_PACKAGE / source).read_bytes()) for name, source in sorted(BOOT_MODULES.items())]
    entries += [(f"{STUB_MODULE}.{tag}.code", blob) for tag, blob in sorted(codes.items())]
    with zipfile.ZipFile(target, "a") as zf:
        for entry, data in entries:
            info = zipfile.ZipInfo(entry, date_time=time.gmtime(epoch)[:6])
            info.compress_type = zipfile.ZIP_STORED  # read on every run: no inflating
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
    return build_id


def nest_site_packages(target: Path, epoch: int) -> None:
    """Rewrite shiv's archive at ``target`` with its ``site-packages/`` entries moved,
    unchanged (names, modes, compression, order), into one stored member ``PAYLOAD``;
    the shebang and every other entry stay as they are."""
    import io

    with open(target, "rb") as fh:
        shebang = fh.readline()
    if not shebang.startswith(b"#!"):
        raise SystemExit("build_zipapp: shiv's archive has no shebang line")
    payload, kept = io.BytesIO(), []
    with zipfile.ZipFile(target) as src, zipfile.ZipFile(payload, "w") as inner:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("site-packages/"):
                inner.writestr(_copy_info(info, info.filename), data)
            else:
                kept.append((info, data))
    tmp = target.with_name(target.name + ".nest")
    with open(tmp, "wb") as out:
        out.write(shebang)
        with zipfile.ZipFile(out, "w") as zf:
            for info, data in kept:
                zf.writestr(_copy_info(info, info.filename), data)
            member = zipfile.ZipInfo(PAYLOAD, date_time=time.gmtime(epoch)[:6])
            member.compress_type = zipfile.ZIP_STORED   # its entries are compressed already
            member.external_attr = 0o100644 << 16
            zf.writestr(member, payload.getvalue())
    os.replace(tmp, target)


def _copy_info(info: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    out = zipfile.ZipInfo(name, date_time=info.date_time)
    out.compress_type, out.external_attr, out.create_system = info.compress_type, info.external_attr, info.create_system
    return out


def host_arch() -> str:
    machine = os.uname().machine
    return ARCH_ALIASES.get(machine, machine)


def smoke(pyz: Path, version: str, work: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="smoke-", dir=work))
    try:
        env = dict(os.environ, SHIV_ROOT=str(root))
        out = subprocess.run([sys.executable, str(pyz), "--version"], env=env,
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0 or out.stdout.split()[:1] != [version]:  # "VERSION (build ...)"
            raise SystemExit(f"build_zipapp: smoke test failed: rc={out.returncode} "
                             f"stdout={out.stdout!r} stderr={out.stderr!r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", type=lambda a: ARCH_ALIASES.get(a, a), choices=sorted(MANYLINUX),
                    default=None, help="target machine (default: this host's, else x86_64)")
    ap.add_argument("--pythons", default=DEFAULT_PYTHONS,
                    help=f"CPython minors to carry extensions for (default {DEFAULT_PYTHONS})")
    ap.add_argument("--dist", default=str(REPO / "dist"), help="output directory")
    ap.add_argument("--work", default=str(REPO / "build"), help="cache and staging directory")
    ap.add_argument("--no-smoke", action="store_true", help="do not run the result")
    args = ap.parse_args(argv)

    arch = args.arch or (host_arch() if host_arch() in MANYLINUX else "x86_64")
    pythons = [p.strip() for p in args.pythons.split(",") if p.strip()]
    for py in pythons:
        if not re.fullmatch(r"3\.\d+", py) or int(py.split(".")[1]) < 9:
            raise SystemExit(f"build_zipapp: unsupported --pythons entry {py!r} (3.9 or later)")
    pythons.sort(key=lambda p: int(p.split(".")[1]))
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315554400"))  # shiv's default
    work, dist = Path(args.work), Path(args.dist)
    cache = work / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    dist.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    pins = read_pins()
    log(f"ccm pyz: {arch}, CPython {', '.join(pythons)}")
    wheels: List[Path] = []
    for py in pythons:
        wheels += fetch_wheels(py, arch, pins, cache)

    # per process: another build may be running in the same tree
    stage = Path(tempfile.mkdtemp(prefix=f"stage-{arch}-", dir=work))
    try:
        return _build(stage, arch, pythons, wheels, epoch, dist, work, args.no_smoke, started)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _build(stage: Path, arch: str, pythons: List[str], wheels: List[Path], epoch: int,
           dist: Path, work: Path, no_smoke: bool, started: float) -> int:
    site = stage / "site-packages"
    site.mkdir(parents=True)
    stage_wheels(wheels, site)
    strip_extensions(site, arch)
    check_extensions(site, pythons, arch)
    version = read_version()
    stage_ccm(site, version)
    normalise_tree(site, epoch)

    final = dist / f"ccm-{arch}.pyz"
    tmp = dist / f".ccm-{arch}.pyz.{os.getpid()}.tmp"
    build_id = build_archive(site, tmp, epoch, pythons, arch)
    os.chmod(tmp, 0o755)
    if arch == host_arch() and not no_smoke:
        try:
            smoke(tmp, version, work)
        except BaseException:
            tmp.unlink()
            raise
    os.replace(tmp, final)
    if arch == host_arch():
        link = dist / "ccm.pyz"
        tmp_link = dist / f".ccm.pyz.{os.getpid()}.tmp"
        shutil.copyfile(final, tmp_link)
        os.chmod(tmp_link, 0o755)
        os.replace(tmp_link, link)

    size = final.stat().st_size
    digest = _sha256(final)
    log(f"built {final}")
    log(f"  version {version}, build id {build_id[:16]}, sha256 {digest}")
    log(f"  size {size} bytes ({size / 1048576:.2f} MiB) in {time.monotonic() - started:.1f}s")
    budget = SIZE_BUDGET.get(arch)
    if budget and size > budget:
        log(f"build_zipapp: {final.name} is {size} bytes, over its {budget}-byte budget")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
