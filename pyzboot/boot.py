# -*- coding: utf-8 -*-
"""Start-up guard and extraction root for ccm.pyz; runs before shiv's bootstrap.

What: ``build_zipapp.py`` copies this file to the top of the zip as ``_ccm_boot.py``; the
boot stub (``pyzboot/stub.py``, ``_ccm_stub`` in the zip, which holds SUPPORTED, ARCH and
BUILD_ID) starts a warm build by itself and calls ``_ccm_boot.main()`` for everything
else, which

1. refuses, in one line and exit status 2, an interpreter the file carries no compiled
   extensions for (another CPython minor, not CPython, free-threaded, 32-bit, another
   machine, no glibc), instead of ``No module named 'rpds.rpds'`` or a PyYAML that quietly
   falls back to pure Python;
2. picks the directory shiv unpacks site-packages into: ``SHIV_ROOT`` when set (honoured
   as given, with a clear error if it cannot work), else the first usable of ``~/.shiv``
   (HOME, or the passwd entry when HOME is unset, as under cron), then a per-user
   ``ccm-<uid>`` directory in ``$XDG_RUNTIME_DIR``, ``$TMPDIR``, ``/var/tmp``, ``/tmp``,
   ``/dev/shm``. Usable: a directory that passes the trust rule (it and every directory
   above it, never through a symlink, owned by root or us and writable by nobody else; a
   sticky one such as /tmp only on the way to one of ours: ``_ccm_stub.chain_problem``),
   writable (or already holding this build), not on a ``noexec`` mount (extensions cannot
   be mapped from one). SHIV_ROOT must pass the same rule: root never imports from a tree
   whose path another user can change;
3. verifies an existing extraction: the ctime of every unpacked directory is recorded
   when it is unpacked, and deleting any file (a tmp cleaner) changes its directory's
   ctime, so a damaged tree is detected with one stat per directory and re-extracted
   (ctime, not mtime: systemd-tmpfiles puts a cleaned directory's mtime back, and
   nothing can set a ctime back);
4. prunes the trees of older builds after unpacking a new one (the current and the
   newest other stay; a tree some process runs from is never touched: see _ccm_stub);
5. hands over to shiv's own bootstrap (which then finds the tree in place), with bytecode
   writing on: Python caches .pyc lazily in the tree's pre-created ``__pycache__`` dirs,
   so the second run of any command is warm (nothing is compiled at build time: .pyc
   are per CPython minor, and extracting six sets would slow every first run).

Not: part of the application; imports nothing of ``ccm`` (shiv's bootstrap imports the
entry point, ``ccm.__main__:main``, by name).

The syntax stays parseable by Python 2.7 and 3.6 (no f-strings, no annotations, no
``from __future__ import annotations``): the guard has to be able to print its message
on the interpreters it rejects.
"""
import os
import stat
import sys

try:
    import _ccm_stub as stub  # type: ignore[import-not-found]  # in the zip
except ImportError:  # the source tree (tests)
    from pyzboot import stub

# the guard's test, the marker check and the root candidates live in the stub (the warm path)
interpreter_problem = stub.interpreter_problem
extraction_ok = stub.extraction_ok
candidates = stub.candidates
MARKER = stub.MARKER
MARKER_VERSION = stub.MARKER_VERSION
INUSE = stub.INUSE
EXIT_UNSUPPORTED = 2
_BUILD_DIR = "ccm_"


def check_interpreter(supported=None, arch=None):
    """None when this interpreter can run the file, else the one-line message."""
    supported = stub.SUPPORTED if supported is None else tuple(supported)
    problem = interpreter_problem(supported, arch)
    if problem is None:
        return None
    import platform  # the refusal only (2.7 and 3.6 have it; 2.7 has no sys.implementation)

    vi = sys.version_info
    running = "%s %d.%d.%d" % (platform.python_implementation(), vi[0], vi[1], vi[2])
    detail = running + (", " + problem if problem else "") + " at " + (sys.executable or "?")
    return ("ccm: unsupported Python: running %s; this ccm.pyz supports CPython %s on %s "
            "Linux with glibc >= %d.%d" % (detail, ", ".join("%d.%d" % v for v in supported)
                                           or "(none)", arch or stub.ARCH or "x86_64", stub.MIN_GLIBC[0],
                                           stub.MIN_GLIBC[1]))


class BootError(Exception):
    """A one-line reason the pyz cannot start here (printed as ``ccm: <reason>``)."""


# --------------------------------------------------------------------------- guard

# Where a supported CPython comes from, by /etc/os-release ID and major VERSION_ID:
# [(minor, command)], the first minor this file supports wins.
_DISTRO_PYTHONS = {
    ("rhel", "8"): [("3.11", "dnf install python3.11"), ("3.12", "dnf install python3.12"),
                    ("3.9", "dnf install python39")],
    ("rhel", "9"): [("3.9", "dnf install python3"), ("3.11", "dnf install python3.11"),
                    ("3.12", "dnf install python3.12")],
    ("ubuntu", "20"): [("3.9", "apt install python3.9")],
    ("ubuntu", "22"): [("3.10", "apt install python3")],
    ("ubuntu", "24"): [("3.12", "apt install python3")],
    ("debian", "11"): [("3.9", "apt install python3")],
    ("debian", "12"): [("3.11", "apt install python3")],
    ("debian", "13"): [("3.13", "apt install python3")],
    ("sles", "15"): [("3.11", "zypper install python311")],
    ("amzn", "2023"): [("3.9", "dnf install python3"), ("3.11", "dnf install python3.11")],
}
_RHEL_LIKE = ("rhel", "centos", "rocky", "almalinux", "ol")


def os_release(path="/etc/os-release"):
    """The KEY=value pairs of os-release (quotes removed), {} when unreadable."""
    out = {}  # type: dict
    try:
        with open(path) as fh:
            text = fh.read(65536)
    except (OSError, IOError):
        return out
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            out[key] = value.strip().strip("'\"")
    return out


def python_hint(release, supported=None):
    """``"; on <distro>, install one with: <command>"`` when the distro is known, else ""."""
    supported = stub.SUPPORTED if supported is None else tuple(supported)
    ids = [release.get("ID", "")] + release.get("ID_LIKE", "").split()
    major = release.get("VERSION_ID", "").split(".")[0]
    for distro in ids:
        key = ("rhel" if distro in _RHEL_LIKE else distro, major)
        for minor, command in _DISTRO_PYTHONS.get(key, []):
            if tuple(int(x) for x in minor.split(".")) in supported:
                name = release.get("PRETTY_NAME") or ("%s %s" % (release.get("ID", ""), major))
                return "; on %s install one with: %s (then run: python%s ccm.pyz)" % (
                    name, command, minor)
    return ""


def refusal(message, supported=None, release_path="/etc/os-release", running=None):
    """The guard's message, plus the distro package to install when the version is the issue."""
    import platform

    running = tuple(running or sys.version_info[:2])
    supported = stub.SUPPORTED if supported is None else tuple(supported)
    if running in supported and platform.python_implementation() == "CPython":
        return message  # a supported minor with another problem: no package helps
    return message + python_hint(os_release(release_path), supported)


# --------------------------------------------------------------------------- extraction

def write_marker(target):
    """Create ``__pycache__`` where Python will want one, then record every dir's ctime.

    Pre-creating ``__pycache__`` keeps Python's own bytecode writes from touching the
    recorded directories; ``__pycache__`` itself is not recorded (a cleaner deleting a
    .pyc is harmless: Python rewrites it).
    """
    site = os.path.join(target, "site-packages")
    _private(target)
    dirs = []
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        if any(f.endswith(".py") for f in filenames):
            pyc = os.path.join(dirpath, "__pycache__")
            if not os.path.isdir(pyc):
                os.mkdir(pyc, 0o755)
        _private(dirpath)
        dirs.append(dirpath)
    fd = os.open(os.path.join(target, INUSE), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    os.close(fd)  # the in-use lock file (see _ccm_stub.hold)
    lines = [MARKER_VERSION]
    for d in dirs:
        lines.append("%d\t%s" % (os.stat(d).st_ctime_ns, os.path.relpath(d, target)))
    tmp = os.path.join(target, MARKER + ".tmp")
    with open(tmp, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(target, MARKER))


def _private(path):
    """Take group and other write away from a directory we just unpacked (the extractor
    honours the umask; the trust rule wants neither)."""
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    if mode & stub.SHARED:
        os.chmod(path, mode & ~stub.SHARED)


def _discard(path):
    """Move a damaged tree out of the way (atomic), then delete it."""
    import shutil

    parent, name = os.path.split(path)
    stale = os.path.join(parent, ".%s.stale-%d" % (name, os.getpid()))
    try:
        os.rename(path, stale)
    except OSError:
        return  # another process got there first
    shutil.rmtree(stale, ignore_errors=True)


def extract(target, archive_path, force=False):
    """Unpack site-packages into ``target`` with shiv's extractor, under a lock, plus marker."""
    import fcntl
    import shutil
    import zipfile
    from pathlib import Path

    from _bootstrap import extract_site_packages  # type: ignore[import-not-found]  # shiv's, from this zip

    parent, name = os.path.split(target)
    fd = os.open(os.path.join(parent, "." + name + ".ccm-lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not force and extraction_ok(target):
            return  # another process finished it while we waited
        if os.path.lexists(target):
            _discard(target)
        shutil.rmtree(target + ".tmp", ignore_errors=True)  # leftovers of a killed run
        try:
            with zipfile.ZipFile(archive_path) as archive:
                extract_site_packages(payload(archive), Path(target))
            write_marker(target)
        except BaseException:
            shutil.rmtree(target + ".tmp", ignore_errors=True)  # disk full: free it again
            raise
        for entry in os.listdir(parent):  # trees a killed run did not finish deleting
            if entry.startswith("." + name + ".stale-"):
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
        extracted.append(target)
    finally:
        os.close(fd)


extracted = []  # type: list  # trees this process unpacked
PAYLOAD = "site-packages.zip"  # build_zipapp.py: the site-packages entries, nested in one member


def payload(archive):
    """The zip holding the ``site-packages/`` entries: the nested member (read whole: a
    zip inside a zip member cannot seek cheaply), or the archive itself (shiv's layout)."""
    import io
    import zipfile

    try:
        info = archive.getinfo(PAYLOAD)
    except KeyError:
        return archive
    return zipfile.ZipFile(io.BytesIO(archive.read(info)))


def _lock_nb(path, create):
    """An fd holding an exclusive flock on ``path``, or None (missing, or held by others)."""
    import fcntl

    flags = os.O_RDWR | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def prune(root, current):
    """Delete the trees of builds older than the newest other one, if nobody runs from them.

    Kept: ``current`` and the most recently unpacked other build (a host rolling back
    needs it). A tree is removed only while this process holds both its exclusive in-use
    lock (running processes hold it shared, taken before they check the tree) and its
    unpack lock; two processes pruning at once skip each other's trees. Trees unpacked
    before in-use locks existed have no lock file and are pruned only when older still.
    """
    import re

    try:
        names = os.listdir(root)
    except OSError:
        return
    others = []
    for name in names:
        if name == current or not re.match(r"^%s[0-9a-f]{64}$" % _BUILD_DIR, name):
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            when = os.stat(os.path.join(path, MARKER)).st_mtime_ns
        except OSError:
            when = 0  # unfinished or damaged: oldest
        others.append((when, name))
    others.sort(reverse=True)
    for _when, name in others[1:]:
        path = os.path.join(root, name)
        inuse = os.path.join(path, INUSE)
        held = _lock_nb(inuse, create=False)
        if held is None and os.path.lexists(inuse):
            continue  # some process runs from it
        unpack = _lock_nb(os.path.join(root, "." + name + ".ccm-lock"), create=True)
        try:
            if unpack is not None:
                _discard(path)
        finally:
            for fd in (held, unpack):
                if fd is not None:
                    os.close(fd)


# --------------------------------------------------------------------------- root choice

_noexec = stub.noexec
_roots = stub.roots


def probe(root, target_name, explicit=False):
    """Make ``root`` usable for ``root/target_name`` or raise BootError with the reason.

    ``root`` must pass the trust rule (``_ccm_stub.chain_problem``); a missing root is made
    in a parent that passes it (SHIV_ROOT: every missing directory; a default: the last one
    only, never a missing home or /tmp itself).
    """
    problem = stub.chain_problem(root, create=root.count("/") if explicit else 1)
    if problem:
        raise BootError(problem)
    if _noexec(root):
        raise BootError("mounted noexec")
    target = os.path.join(root, target_name)
    if not os.access(root, os.W_OK | os.X_OK) and not extraction_ok(target):
        raise BootError("not writable")
    return target


def _explicit_error(environ, reason):
    return BootError("SHIV_ROOT=%s is not usable (%s); unset it or point it at a writable "
                     "directory only root and you can change, on a filesystem without noexec"
                     % (environ["SHIV_ROOT"], reason))


def _none_usable(tried):
    return BootError("no usable directory to unpack into: %s; set SHIV_ROOT to a writable "
                     "directory only root and you can change, on a filesystem without noexec"
                     % "; ".join(tried))


def choose_target(environ, target_name):
    """The extraction directory to use, or BootError naming every place tried and why."""
    tried = []
    for root, explicit in _roots(environ):
        try:
            return probe(root, target_name, explicit=explicit)
        except BootError as exc:
            if explicit:
                raise _explicit_error(environ, exc)
            tried.append("%s (%s)" % (root, exc))
    raise _none_usable(tried)


def prepare(environ, archive_path, target_name, force=False):
    """Like choose_target, and make sure a complete extraction is there: unpack it if not.

    A root that passes the checks but cannot take the tree (disk full, quota) is skipped
    like one that fails them; SHIV_ROOT, when set, is the only root tried.
    """
    tried = []
    for root, explicit in _roots(environ):
        try:
            target = probe(root, target_name, explicit=explicit)
            if force or not extraction_ok(target):
                extract(target, archive_path, force=force)
            return target
        except BootError as exc:
            reason = str(exc)
        except (OSError, IOError) as exc:
            reason = "cannot unpack: %s" % (exc.strerror or exc)
        if explicit:
            raise _explicit_error(environ, reason)
        tried.append("%s (%s)" % (root, reason))
    raise _none_usable(tried)


def _truthy(value):
    return str(value).lower() in ("1", "yes", "true", "t")


def hold_tree(target):
    """Take ``target``'s shared in-use lock (creating the lock file of an older tree)."""
    if stub.hold(target) is not None:
        return True
    try:
        os.close(os.open(os.path.join(target, INUSE), os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW,
                         0o644))
    except OSError:
        return False  # a read-only root: nothing can prune it either
    return stub.hold(target) is not None


def main():
    message = check_interpreter()
    if message:
        sys.stderr.write(refusal(message) + "\n")
        sys.exit(EXIT_UNSUPPORTED)
    environ = os.environ
    force = _truthy(environ.pop("SHIV_FORCE_EXTRACT", ""))  # handled here, not again by shiv
    name = _BUILD_DIR + stub.BUILD_ID
    try:
        for _attempt in range(3):  # a pruner may take the tree between the check and the lock
            target = prepare(environ, sys.argv[0], name, force=force)
            force = False
            if hold_tree(target) and extraction_ok(target):
                break
    except BootError as exc:
        sys.stderr.write("ccm: %s\n" % exc)
        sys.exit(EXIT_UNSUPPORTED)
    if extracted:
        prune(os.path.dirname(target), name)

    # Bytecode goes into the extraction's own __pycache__ dirs even under
    # PYTHONDONTWRITEBYTECODE / -B (set globally in many containers): otherwise every cron
    # run recompiles every module it imports (apply: about twice the warm time).
    sys.dont_write_bytecode = False

    import _bootstrap  # shiv's runtime, from this zip
    from pathlib import Path

    # shiv asks cache_path() where the tree lives; answer with the directory chosen above.
    _bootstrap.cache_path = lambda archive, root_dir, build_id: Path(target)
    _bootstrap.bootstrap()
