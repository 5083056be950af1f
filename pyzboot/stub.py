# -*- coding: utf-8 -*-
"""The first code ccm.pyz runs: start a warm, unpacked build in as few steps as possible.

What: ``build_zipapp.py`` copies this file to ``_ccm_stub.py`` in the zip (SUPPORTED,
ARCH, BUILD_ID filled in), also precompiled for the interpreters the build host has; any
other compiles it from source on every run, so it holds the warm path only: a supported
interpreter, the first extraction root passing the trust rule (below) and holding a
complete tree of this build (held with a shared lock on ``<tree>/.ccm-inuse`` against
pruning), no ``SHIV_*`` variable but ``SHIV_ROOT`` (then the command's modules come from
its import bundle, when one was written, and the bundle is written again at exit when the
run imported a module it lacked: ``_ccm_bundle``). Everything else is ``_ccm_boot``
(pyzboot/boot.py, whose docstring says more).

Hands over to the application once: ``ccm.__main__.main()``, imported by name
(ENTRY_MODULE); imports nothing else of ``ccm``, and ``ccm`` imports nothing of this.

Parseable by Python 2.7 and 3.6 (no f-strings, no annotations): the guard must be able to
refuse. Code that runs before the guard has passed touches nothing those lack.
"""
import os
import stat
import sys

# Filled in by build_zipapp.py in the copy that goes into the zip.
SUPPORTED = ()  # e.g. ((3, 9), (3, 10)): the CPython minors whose extensions are bundled
ARCH = ""  # "x86_64" or "aarch64"
BUILD_ID = ""  # shiv's build id (content hash of site-packages)

MIN_GLIBC = (2, 17)  # manylinux2014
MARKER = ".ccm-extracted"
MARKER_VERSION = "ccm-extract 1"
INUSE = ".ccm-inuse"
ENTRY_MODULE = "ccm.__main__"  # shiv's entry point ccm.__main__:main
_MACHINES = {"x86_64": ("x86_64", "amd64"), "aarch64": ("aarch64", "arm64")}
ST_NOEXEC = 8  # os.ST_NOEXEC on Linux (named here: Python 2.7 has no os.ST_NOEXEC, and the guard must run there)


def build_id():
    """This build's id ("" when not running from a pyz)."""
    return BUILD_ID


def interpreter_problem(supported=None, arch=None):
    """None when this interpreter can run the file, else what is wrong ("" for the
    version or implementation; ``_ccm_boot.check_interpreter`` makes the message)."""
    supported = SUPPORTED if supported is None else tuple(supported)
    vi = sys.version_info
    # SUPPORTED holds CPython 3.9+ minors only: an older Python (2.7 has no
    # sys.implementation) is refused before the implementation is asked
    if (vi[0], vi[1]) not in supported or sys.implementation.name != "cpython":
        return ""
    if "t" in sys.abiflags:
        return "free-threaded build"
    if sys.maxsize <= 2 ** 32:
        return "32-bit build"
    if not sys.platform.startswith("linux"):
        return "platform " + sys.platform
    arch = arch or ARCH or "x86_64"
    if os.uname()[4] not in _MACHINES.get(arch, (arch,)):
        return "machine " + os.uname()[4]
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        libc = ""
    try:
        glibc = tuple(int(x) for x in libc.split()[1].split(".")[:2])
    except (IndexError, ValueError):
        glibc = None
    if not libc.startswith("glibc") or glibc is None:
        return "no glibc (musl?)"
    if glibc < MIN_GLIBC:
        return libc
    return None


def extraction_ok(target):
    """True when ``target`` holds a complete extraction: marker present, every directory of
    it untouched (its recorded ctime) and, like ``target``, passing the trust rule."""
    try:
        with open(os.path.join(target, MARKER)) as fh:
            lines = fh.read().splitlines()
    except (OSError, IOError):
        return False
    if len(lines) < 2 or lines[0] != MARKER_VERSION:
        return False
    uid = os.geteuid()
    try:
        if dir_problem(os.lstat(target), uid) is not None:
            return False
        for line in lines[1:]:
            ctime, rel = line.split("\t", 1)
            st = os.lstat(os.path.join(target, rel))
            if st.st_ctime_ns != int(ctime) or st.st_mode & SHARED or (st.st_uid != uid and st.st_uid != 0):
                return False
    except (OSError, ValueError):
        return False
    return True


def home(environ):
    value = environ.get("HOME")
    if value:
        return value
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_dir
    except (ImportError, KeyError):
        return None


SYSTEM_TMP = ("/var/tmp", "/tmp", "/dev/shm")


def candidates(environ):
    """The default extraction roots, absolute and normalised, in order of preference."""
    out = []
    home_dir = home(environ)
    if home_dir and os.path.isabs(home_dir):
        out.append(os.path.normpath(os.path.join(home_dir, ".shiv")))
    uid = os.geteuid()
    for base in (environ.get("XDG_RUNTIME_DIR"), environ.get("TMPDIR")) + SYSTEM_TMP:
        if base and os.path.isabs(base):
            root = os.path.join(os.path.normpath(base), "ccm-%d" % uid)
            if root not in out:
                out.append(root)
    return out


def roots(environ):
    """[(root, explicit)]: SHIV_ROOT alone when set, else the candidates."""
    explicit = environ.get("SHIV_ROOT")
    if explicit:
        return [(os.path.abspath(os.path.expanduser(explicit)), True)]
    return [(root, False) for root in candidates(environ)]


# --- the trust rule: nobody but root and us can change what an extraction root's path names ---
# What: every directory from / down to the root, each lstat'ed (so never through a symlink),
# owned by root or the euid and writable by neither group nor others (with an ACL, the group
# bits are its mask), as OpenSSH asks of ~/.ssh. A sticky directory others may write (/tmp)
# passes when the next component is one of these (in a sticky directory only its owner can
# rename an entry). Checked top-down, each directory after its parent, so no other user can
# move a checked directory away afterwards: the path names the checked tree for good, and
# importing by path is safe. Costs one lstat per component.
SHARED = 0o022


def dir_problem(st, uid, after_shared=False, last=True):
    """Why a directory whose lstat is ``st`` cannot be (on the way to) an extraction root, or None."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "is a symlink"
    if not stat.S_ISDIR(mode):
        return "is not a directory"
    if st.st_uid != uid and st.st_uid != 0:
        return "is owned by uid %d" % st.st_uid
    if mode & SHARED and (last or after_shared or not mode & stat.S_ISVTX):
        return "is writable by others"
    return None


def chain_problem(path, create=0):
    """None when ``path`` (absolute, normalised) and every directory above it pass the trust
    rule, else why not ("<directory> <reason>"). The last ``create`` components are made when
    missing (0700 the last, 0755 the others), each only after its parent passed."""
    uid = os.geteuid()
    names = [n for n in path.split("/") if n]
    last = len(names)
    after_shared = False
    current = "/"
    for i in range(last + 1):
        if i:
            current = os.path.join(current, names[i - 1])
        try:
            st = os.lstat(current)
        except OSError as exc:
            if exc.errno != 2 or i <= last - create:  # ENOENT
                return "%s: %s" % (current, exc.strerror)
            problem = _create(current, i == last)
            if problem:
                return problem
            st = os.lstat(current)
        problem = dir_problem(st, uid, after_shared, i == last)
        if problem:
            return "%s %s" % (current, problem)
        after_shared = bool(st.st_mode & SHARED)
    return None


def _create(path, last):
    """Make the missing directory ``path`` (another process may make it first: the caller
    checks what is there); why not, or None."""
    if last and noexec(os.path.dirname(path)):
        return "%s: mounted noexec" % path
    try:
        os.mkdir(path, 0o700 if last else 0o755)
    except OSError as exc:
        if exc.errno != 17:  # EEXIST
            return "cannot create %s: %s" % (path, exc.strerror)
    return None


def noexec(path):
    while True:
        try:
            return bool(os.statvfs(path).f_flag & ST_NOEXEC)
        except OSError:
            parent = os.path.dirname(path)
            if parent == path:
                return False
            path = parent


def hold(target):
    """Take the shared in-use lock of ``target`` for the life of the process (fd or None)."""
    import fcntl

    try:
        fd = os.open(os.path.join(target, INUSE), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return None
    _held.append(fd)
    return fd


_held = []  # type: list  # fds of in-use locks, kept open (close-on-exec) until exit


def _fast_target(environ):
    """The tree to run from when the first root is usable and holds this build, else None."""
    if not BUILD_ID or [k for k in environ if k.startswith("SHIV_") and k != "SHIV_ROOT"]:
        return None
    found = roots(environ)
    if not found:
        return None
    root = found[0][0]
    if chain_problem(root) is not None or noexec(root):
        return None
    target = os.path.join(root, "ccm_" + BUILD_ID)
    fd = hold(target)  # before the check: a pruner renames a tree only while nobody holds it
    if fd is None:
        return None
    if not extraction_ok(target):
        _held.remove(fd)
        os.close(fd)
        return None
    return target


def add_site_packages(site_packages):
    """Put ``site_packages`` on sys.path where shiv's bootstrap puts it (before the system's)."""
    import site

    length = len(sys.path)
    index = None
    for i, part in enumerate(sys.path):
        if os.path.splitext(os.path.basename(part.rstrip("/")))[0] in ("site-packages", "dist-packages"):
            index = i
            break
    index = index or length
    site.addsitedir(site_packages)  # the blessed way: .pth files are honoured
    sys.path = sys.path[:index] + sys.path[length:] + sys.path[index:length]


# --- the import bundle: the ccm modules a command imported last time, in one file -------
# What: ``<tree>/site-packages/ccm/__pycache__/imports-<command>.<cache tag>.bundle`` holds
# ``{module: (path under site-packages, is package, code)}``; the warm path serves those
# modules from it (one read, one unmarshal) instead of one path search, stat and .pyc read
# each (about 170,000 instructions a module on CPython 3.11, 49 modules for a steady
# ``apply``). At exit, a run that imported a ccm module the bundle lacks writes it again
# (``save_import_bundle``, an atexit callback; the writer is ``_ccm_bundle``). The tree is
# content-addressed (its name is the build id), so a bundle's code is that of the tree's
# sources for as long as the tree exists; its header holds the interpreter's bytecode
# magic, checked as Python checks a .pyc's. Anything unexpected (no file, another magic,
# a damaged file) means the normal import. CCM_NO_IMPORT_BUNDLE (any value) turns it off.
BUNDLE_HEADER = b"ccm-imports 1\n"
BUNDLE_LIMIT = 16 * 1024 * 1024
IMPORT_BUNDLE = None  # (path, site-packages, names served) once the warm path looked for one


def import_bundle_path(site_packages, argv):
    """The bundle for this command line (None: no bundle for it)."""
    command = argv[1] if len(argv) > 1 else ""
    tag = sys.implementation.cache_tag  # None when this interpreter caches no bytecode
    if not tag or not command.isalpha() or not command.islower() or len(command) > 16:
        return None
    return os.path.join(site_packages, "ccm", "__pycache__", "imports-%s.%s.bundle" % (command, tag))


def read_import_bundle(path):
    """``{module: (relative path, is package, code)}`` from ``path``; None when unusable."""
    from importlib.util import MAGIC_NUMBER  # imported already (runpy)
    import marshal

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(BUNDLE_LIMIT + 1)
    except (OSError, IOError):
        return None
    head = BUNDLE_HEADER + MAGIC_NUMBER
    if len(data) > BUNDLE_LIMIT or not data.startswith(head):
        return None
    try:
        codes = marshal.loads(memoryview(data)[len(head):])
    except (ValueError, EOFError, TypeError):
        return None
    return codes if type(codes) is dict else None


def use_import_bundle(site_packages, argv):
    """Serve this command's modules from its bundle, and write the bundle again at exit."""
    global IMPORT_BUNDLE
    path = import_bundle_path(site_packages, argv)
    if path is None:
        return
    codes = read_import_bundle(path)
    IMPORT_BUNDLE = (path, site_packages, frozenset(codes or ()))
    if codes:
        sys.meta_path.insert(0, _BundleFinder(codes, site_packages))
    import atexit

    atexit.register(save_import_bundle)


def unbundled_modules():
    """The ccm modules this process imported that its import bundle did not serve ([]
    when the warm path looked for no bundle)."""
    if IMPORT_BUNDLE is None:
        return []
    served = IMPORT_BUNDLE[2]
    return [n for n in list(sys.modules) if (n == "ccm" or n.startswith("ccm.")) and n not in served]


def save_import_bundle():
    """At exit: write the bundle again when this run imported a ccm module it lacks (the
    writer comes from the zip only then). A cache: never the reason a run fails."""
    names = unbundled_modules()
    if not names or IMPORT_BUNDLE is None:
        return  # every module came from the bundle: the common case, no import
    try:
        import _ccm_bundle  # type: ignore[import-not-found]  # in the zip (pyzboot/bundle.py)

        _ccm_bundle.save(IMPORT_BUNDLE[0], IMPORT_BUNDLE[1], names)
    except Exception:
        pass


class _BundleFinder(object):
    """A meta-path finder for the bundled modules: specs as the path finder makes them
    (origin, package path, a SourceFileLoader for data and resources), code from the bundle."""

    def __init__(self, codes, site_packages):
        self.codes = codes
        self.root = site_packages

    def find_spec(self, name, path=None, target=None):
        hit = self.codes.pop(name, None)  # each module once: a re-import reads its file
        if type(hit) is not tuple or len(hit) != 3:
            return None
        rel, package, code = hit
        from importlib.machinery import ModuleSpec

        origin = os.path.join(self.root, rel)
        spec = ModuleSpec(name, _BundledLoader(name, origin, code), origin=origin, is_package=bool(package))
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        return spec


_loader_class = []  # type: list  # the bundle's loader class, made on first use (it needs Python 3's importlib)


def _BundledLoader(fullname, path, code):
    if not _loader_class:
        from importlib.machinery import SourceFileLoader

        class BundledLoader(SourceFileLoader):
            def __init__(self, fullname, path, code):
                SourceFileLoader.__init__(self, fullname, path)
                self._code = code

            def get_code(self, fullname):
                code, self._code = self._code, None
                if code is None or fullname != self.name:
                    return SourceFileLoader.get_code(self, fullname)
                import _imp

                _imp._fix_co_filename(code, self.path)  # type: ignore[attr-defined]  # as a .pyc's code gets
                return code

        _loader_class.append(BundledLoader)
    return _loader_class[0](fullname, path, code)


def main():
    target = None
    if interpreter_problem() is None:
        target = _fast_target(os.environ)
    if target is None:
        import _ccm_boot  # type: ignore[import-not-found]  # in the zip: refusal, root choice, unpacking, shiv

        return _ccm_boot.main()
    # Bytecode goes into the tree's own __pycache__ dirs even under PYTHONDONTWRITEBYTECODE
    # (see _ccm_boot.main).
    sys.dont_write_bytecode = False
    site_packages = os.path.join(target, "site-packages")
    add_site_packages(site_packages)
    if not os.environ.get("CCM_NO_IMPORT_BUNDLE"):
        use_import_bundle(site_packages, sys.argv)
    sys.exit(__import__(ENTRY_MODULE, None, None, ["main"]).main())
