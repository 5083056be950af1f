# -*- coding: utf-8 -*-
"""Start-up guard and extraction root for ccm.pyz; runs before shiv's bootstrap.

What: ``build_zipapp.py`` copies this file to the top of the zip as ``_ccm_boot.py``
(with SUPPORTED, ARCH and BUILD_ID filled in), and shiv's ``__main__.py`` calls
``_ccm_boot.main()``, which

1. refuses, in one line and exit status 2, an interpreter the file carries no compiled
   extensions for (another CPython minor, not CPython, free-threaded, 32-bit, another
   machine, no glibc), instead of ``No module named 'rpds.rpds'`` or a PyYAML that quietly
   falls back to pure Python;
2. picks the directory shiv unpacks site-packages into: ``SHIV_ROOT`` when set (honoured
   as given, with a clear error if it cannot work), else the first usable of ``~/.shiv``
   (HOME, or the passwd entry when HOME is unset, as under cron), then a per-user
   ``ccm-<uid>`` directory in ``$XDG_RUNTIME_DIR``, ``$TMPDIR``, ``/var/tmp``, ``/tmp``,
   ``/dev/shm``. Usable: a directory owned by us, not writable by others, writable (or
   already holding this build), not on a ``noexec`` mount (extensions cannot be mapped
   from one);
3. verifies an existing extraction: the ctime of every unpacked directory is recorded
   when it is unpacked, and deleting any file (a tmp cleaner) changes its directory's
   ctime, so a damaged tree is detected with one stat per directory and re-extracted
   (ctime, not mtime: systemd-tmpfiles puts a cleaned directory's mtime back, and
   nothing can set a ctime back);
4. hands over to shiv's own bootstrap (which then finds the tree in place), with bytecode
   writing on: Python caches .pyc lazily in the tree's pre-created ``__pycache__`` dirs,
   so the second run of any command is warm (nothing is compiled at build time: .pyc
   are per CPython minor, and extracting six sets would slow every first run).

Not: part of the application; imports nothing from ``ccm``.

The syntax stays parseable by Python 2.7 and 3.6 (no f-strings, no annotations, no
``from __future__ import annotations``): the guard has to be able to print its message
on the interpreters it rejects.
"""
import os
import sys

# Filled in by build_zipapp.py in the copy that goes into the zip.
SUPPORTED = ()  # e.g. ((3, 9), (3, 10)): the CPython minors whose extensions are bundled
ARCH = ""  # "x86_64" or "aarch64"
BUILD_ID = ""  # shiv's build id (content hash of site-packages)

MIN_GLIBC = (2, 17)  # manylinux2014
EXIT_UNSUPPORTED = 2
MARKER = ".ccm-extracted"
MARKER_VERSION = "ccm-extract 1"
_MACHINES = {"x86_64": ("x86_64", "amd64"), "aarch64": ("aarch64", "arm64")}
_ST_NOEXEC = getattr(os, "ST_NOEXEC", 8)


class BootError(Exception):
    """A one-line reason the pyz cannot start here (printed as ``ccm: <reason>``)."""


# --------------------------------------------------------------------------- guard

def _versions(supported):
    return ", ".join("%d.%d" % v for v in supported)


def check_interpreter(supported=None, arch=None):
    """None when this interpreter can run the file, else the one-line message."""
    supported = SUPPORTED if supported is None else tuple(supported)
    arch = arch or ARCH or "x86_64"
    vi = sys.version_info
    impl = getattr(sys, "implementation", None)
    name = impl.name if impl is not None else "python"
    running = "%s %d.%d.%d" % ({"cpython": "CPython"}.get(name, name), vi[0], vi[1], vi[2])
    problem = None
    if name != "cpython" or (vi[0], vi[1]) not in supported:
        problem = ""
    elif "t" in getattr(sys, "abiflags", ""):
        problem = "free-threaded build"
    elif sys.maxsize <= 2 ** 32:
        problem = "32-bit build"
    elif not sys.platform.startswith("linux"):
        problem = "platform " + sys.platform
    else:
        machine = os.uname()[4]
        if machine not in _MACHINES.get(arch, (arch,)):
            problem = "machine " + machine
        else:
            try:
                libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
            except (ValueError, OSError, AttributeError):
                libc = ""
            parts = libc.split()
            try:
                glibc = tuple(int(x) for x in parts[1].split(".")[:2])
            except (IndexError, ValueError):
                glibc = None
            if not libc.startswith("glibc") or glibc is None:
                problem = "no glibc (musl?)"
            elif glibc < MIN_GLIBC:
                problem = libc
    if problem is None:
        return None
    detail = running + (", " + problem if problem else "") + " at " + (sys.executable or "?")
    return ("ccm: unsupported Python: running %s; this ccm.pyz supports CPython %s on %s "
            "Linux with glibc >= %d.%d" % (detail, _versions(supported) or "(none)", arch,
                                           MIN_GLIBC[0], MIN_GLIBC[1]))


# --------------------------------------------------------------------------- extraction

def extraction_ok(target):
    """True when ``target`` holds a complete extraction (marker present, dirs untouched)."""
    try:
        with open(os.path.join(target, MARKER)) as fh:
            lines = fh.read().splitlines()
    except (OSError, IOError):
        return False
    if not lines or lines[0] != MARKER_VERSION:
        return False
    try:
        for line in lines[1:]:
            ctime, rel = line.split("\t", 1)
            if os.stat(os.path.join(target, rel)).st_ctime_ns != int(ctime):
                return False
    except (OSError, ValueError):
        return False
    return len(lines) > 1


def write_marker(target):
    """Create ``__pycache__`` where Python will want one, then record every dir's ctime.

    Pre-creating ``__pycache__`` keeps Python's own bytecode writes from touching the
    recorded directories; ``__pycache__`` itself is not recorded (a cleaner deleting a
    .pyc is harmless: Python rewrites it).
    """
    site = os.path.join(target, "site-packages")
    dirs = []
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        if any(f.endswith(".py") for f in filenames):
            pyc = os.path.join(dirpath, "__pycache__")
            if not os.path.isdir(pyc):
                os.mkdir(pyc, 0o755)
        dirs.append(dirpath)
    lines = [MARKER_VERSION]
    for d in dirs:
        lines.append("%d\t%s" % (os.stat(d).st_ctime_ns, os.path.relpath(d, target)))
    tmp = os.path.join(target, MARKER + ".tmp")
    with open(tmp, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(target, MARKER))


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
    fd = os.open(os.path.join(parent, "." + name + ".ccm-lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not force and extraction_ok(target):
            return  # another process finished it while we waited
        if os.path.lexists(target):
            _discard(target)
        shutil.rmtree(target + ".tmp", ignore_errors=True)  # leftovers of a killed run
        try:
            with zipfile.ZipFile(archive_path) as archive:
                extract_site_packages(archive, Path(target))
            write_marker(target)
        except BaseException:
            shutil.rmtree(target + ".tmp", ignore_errors=True)  # disk full: free it again
            raise
        for entry in os.listdir(parent):  # trees a killed run did not finish deleting
            if entry.startswith("." + name + ".stale-"):
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- root choice

def _home(environ):
    home = environ.get("HOME")
    if home:
        return home
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_dir
    except (ImportError, KeyError):
        return None


def candidates(environ):
    """[(root, private)] in order of preference; ``private`` = a per-user dir in a shared one."""
    out = []
    home = _home(environ)
    if home and os.path.isabs(home):
        out.append((os.path.join(home, ".shiv"), False))
    uid = os.geteuid()
    for base in (environ.get("XDG_RUNTIME_DIR"), environ.get("TMPDIR"), "/var/tmp", "/tmp",
                 "/dev/shm"):
        if base and os.path.isabs(base):
            root = os.path.join(os.path.normpath(base), "ccm-%d" % uid)
            if root not in [r for r, _ in out]:
                out.append((root, True))
    return out


def _noexec(path):
    while True:
        try:
            return bool(os.statvfs(path).f_flag & _ST_NOEXEC)
        except OSError:
            parent = os.path.dirname(path)
            if parent == path:
                return False
            path = parent


def probe(root, target_name, private=True, explicit=False):
    """Make ``root`` usable for ``root/target_name`` or raise BootError with the reason."""
    import errno
    import stat

    try:
        st = os.lstat(root)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise BootError(exc.strerror)
        if _noexec(os.path.dirname(root)):
            raise BootError("mounted noexec")
        try:
            if explicit:
                os.makedirs(root, 0o700)
            else:
                os.mkdir(root, 0o700)  # never create a missing home or /tmp itself
            st = os.lstat(root)
        except OSError as exc2:
            raise BootError(exc2.strerror)
    if stat.S_ISLNK(st.st_mode):
        if private and not explicit:
            raise BootError("is a symlink")
        try:
            st = os.stat(root)
        except OSError as exc:
            raise BootError(exc.strerror)
    if not stat.S_ISDIR(st.st_mode):
        raise BootError("not a directory")
    if not explicit:
        if st.st_uid != os.geteuid():
            raise BootError("owned by uid %d" % st.st_uid)
        if st.st_mode & stat.S_IWOTH or (st.st_mode & stat.S_IWGRP and st.st_gid != os.getegid()):
            raise BootError("writable by others")
    if _noexec(root):
        raise BootError("mounted noexec")
    target = os.path.join(root, target_name)
    if not os.access(root, os.W_OK | os.X_OK) and not extraction_ok(target):
        raise BootError("not writable")
    return target


def _roots(environ):
    """[(root, private, explicit)]: SHIV_ROOT alone when set, else the candidates."""
    explicit = environ.get("SHIV_ROOT")
    if explicit:
        return [(os.path.abspath(os.path.expanduser(explicit)), False, True)]
    return [(root, private, False) for root, private in candidates(environ)]


def _explicit_error(environ, reason):
    return BootError("SHIV_ROOT=%s is not usable (%s); unset it or point it at a writable "
                     "directory on a filesystem without noexec" % (environ["SHIV_ROOT"], reason))


def _none_usable(tried):
    return BootError("no usable directory to unpack into: %s; set SHIV_ROOT to a writable "
                     "directory on a filesystem without noexec" % "; ".join(tried))


def choose_target(environ, target_name):
    """The extraction directory to use, or BootError naming every place tried and why."""
    tried = []
    for root, private, explicit in _roots(environ):
        try:
            return probe(root, target_name, private=private, explicit=explicit)
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
    for root, private, explicit in _roots(environ):
        try:
            target = probe(root, target_name, private=private, explicit=explicit)
            if force or not extraction_ok(target):
                extract(target, archive_path, force=force)
            return target
        except BootError as exc:
            reason = str(exc)
        except (OSError, IOError) as exc:
            reason = "cannot unpack: %s" % (getattr(exc, "strerror", None) or exc)
        if explicit:
            raise _explicit_error(environ, reason)
        tried.append("%s (%s)" % (root, reason))
    raise _none_usable(tried)


def _truthy(value):
    return str(value).lower() in ("1", "yes", "true", "t")


def main():
    message = check_interpreter()
    if message:
        sys.stderr.write(message + "\n")
        sys.exit(EXIT_UNSUPPORTED)
    environ = os.environ
    force = _truthy(environ.pop("SHIV_FORCE_EXTRACT", ""))  # handled here, not again by shiv
    try:
        target = prepare(environ, sys.argv[0], "ccm_" + BUILD_ID, force=force)
    except BootError as exc:
        sys.stderr.write("ccm: %s\n" % exc)
        sys.exit(EXIT_UNSUPPORTED)

    # Bytecode goes into the extraction's own __pycache__ dirs even under
    # PYTHONDONTWRITEBYTECODE / -B (set globally in many containers): otherwise every cron
    # run recompiles every module it imports (apply: about twice the warm time).
    sys.dont_write_bytecode = False

    import _bootstrap  # shiv's runtime, from this zip
    from pathlib import Path

    # shiv asks cache_path() where the tree lives; answer with the directory chosen above.
    _bootstrap.cache_path = lambda archive, root_dir, build_id: Path(target)
    _bootstrap.bootstrap()
