"""CLI plugins: App Builder definitions mounted as ``ccm NAME`` (upstream's CLI extensions).

What: ``discover()`` finds ``NAME-plugin.yaml`` files below ``/etc/choria/ccm/plugins/``
and ``$XDG_CONFIG_HOME/choria/ccm/plugins/`` (walked recursively; a user file overrides a
system file of the same name); ``load(name, path)`` reads and validates one
(``ccm.cli.plugins.definition``); ``run(name, argv)`` parses the command line against it
and runs the chosen command (``ccm.cli.plugins.runner``).

Guarantees: every plugin is mountable (upstream mounts only the first, a ``return``
inside its loop); a file is only read when its command runs, or when ``ccm --help``,
``--help-long`` or ``ccm cheat`` list the plugins, and a bad one gives one line naming the
file; no directory is created (upstream makes both, as root too). As root, a file is
read only when it, its directory and every directory above are owned by root and not
writable by group or others (a sticky directory such as ``/tmp`` may be, above), and
only as a regular file, not through a symbolic link: otherwise it is skipped with one
warning naming it. Plugin files are bounded (``MAX_FILE_BYTES``; depth and aliases by
``ccm.yamlio``), and so is the walk (``MAX_WALK_DEPTH``, ``MAX_ENTRIES``). For other users
a plugin file may be a symbolic link.
Not: the built-in commands' path: ``ccm.cli.main`` imports this only for a command word
that is not built in, and for the help texts when a plugin directory exists.
"""
from __future__ import annotations

import errno
import os
import stat
import sys

from ccm.cli.plugins.definition import Definition, PluginError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

SYSTEM_DIR = "/etc/choria/ccm/plugins"
SUFFIX = "-plugin.yaml"
MAX_FILE_BYTES = 1 << 20
MAX_WALK_DEPTH = 8
MAX_ENTRIES = 10000
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def user_dir(environ: Mapping[str, str]) -> str:
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "choria", "ccm", "plugins")


def plugin_dirs(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """System directory first, then the user's (later wins on a name clash)."""
    return [SYSTEM_DIR, user_dir(os.environ if environ is None else environ)]


def _as_root() -> bool:
    return os.geteuid() == 0


def _distrust(st: os.stat_result, *, above: bool = False) -> str:
    """Why root must not read through this inode ("" when it may)."""
    if st.st_uid != 0:
        return f"owned by uid {st.st_uid}, not root"
    sticky_dir = above and stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX
    if st.st_mode & 0o022 and not sticky_dir:
        return "writable by group or others"
    return ""


def _open_dir(path: str) -> int:
    """A descriptor on directory ``path``; as root every component is checked on the way
    (descriptors, no check-then-open gap), and a symlink is followed only when root owns it."""
    if not _as_root():
        return os.open(path, _DIR)
    path = os.path.abspath(path)
    fd = os.open("/", _DIR | os.O_NOFOLLOW)
    todo = [p for p in path.split("/") if p]
    hops = 0
    try:
        while True:
            reason = _distrust(os.fstat(fd), above=bool(todo))
            if reason:
                raise PluginError(f"{path}: a directory on the way is {reason}")
            if not todo:
                return fd
            part = todo.pop(0)
            try:
                nxt = os.open(part, _DIR | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise
                hops += 1
                if st.st_uid != 0 or hops > 20:
                    raise PluginError(f"{path}: symbolic link {part!r} is not root's") from None
                target = os.readlink(part, dir_fd=fd)
                if target.startswith("/"):
                    os.close(fd)
                    fd = os.open("/", _DIR | os.O_NOFOLLOW)
                todo = [p for p in target.split("/") if p] + todo
                continue
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise


def _plugin_name(filename: str) -> str:
    """``deploy-plugin.yaml`` -> ``deploy``; "" for any other name (upstream's unanchored
    ``^(.+)-plugin.yaml`` also took ``deploy-plugin.yaml.orig`` and ``xx-pluginXyaml``)."""
    if not filename.endswith(SUFFIX) or len(filename) == len(SUFFIX):
        return ""
    return filename[: -len(SUFFIX)]


def _walk(dfd: int, where: str, depth: int, found: Dict[str, str], warnings: List[str], seen: List[int]) -> None:
    try:
        names = sorted(os.listdir(dfd))
    except OSError as exc:
        warnings.append(f"plugin directory {where}: {exc.strerror or exc}")
        return
    for entry in names:
        seen[0] += 1
        if seen[0] > MAX_ENTRIES:
            warnings.append(f"plugin directory {where}: more than {MAX_ENTRIES} entries, the rest not read")
            return
        path = os.path.join(where, entry)
        try:
            st = os.stat(entry, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if depth >= MAX_WALK_DEPTH:
                continue
            try:
                sub = os.open(entry, _DIR | os.O_NOFOLLOW, dir_fd=dfd)
            except OSError:
                continue
            try:
                reason = _distrust(os.fstat(sub)) if _as_root() else ""
                if reason:
                    warnings.append(f"plugin directory {path} skipped: {reason}")
                else:
                    _walk(sub, path, depth + 1, found, warnings, seen)
            finally:
                os.close(sub)
            continue
        name = _plugin_name(entry)
        if name:
            found[name] = path


def discover(environ: Optional[Mapping[str, str]] = None) -> Tuple[Dict[str, str], List[str]]:
    """-> (plugin name -> file, warnings). Missing directories are simply not there."""
    found: Dict[str, str] = {}
    warnings: List[str] = []
    for directory in plugin_dirs(environ):
        if not os.path.isdir(directory):
            continue
        try:
            dfd = _open_dir(directory)
        except PluginError as exc:
            warnings.append(f"plugin directory {exc} (skipped)")
            continue
        except OSError as exc:
            warnings.append(f"plugin directory {directory}: {exc.strerror or exc}")
            continue
        try:
            _walk(dfd, directory, 0, found, warnings, [0])
        finally:
            os.close(dfd)
    return found, warnings


def read_trusted(path: str, what: str = "plugin") -> bytes:
    """The bytes of ``path`` under the root rules above (PluginError otherwise), bounded."""
    try:
        dfd = _open_dir(os.path.dirname(path) or ".")
    except OSError as exc:
        raise PluginError(f"{what} {path}: {exc.strerror or exc}") from None
    except PluginError as exc:
        raise PluginError(f"{what} {path} skipped: {exc}") from None
    try:
        try:
            # root does not follow a symlink (its target escapes the checks); others may
            fd = os.open(os.path.basename(path), _FILE if _as_root() else _FILE & ~os.O_NOFOLLOW, dir_fd=dfd)
        except OSError as exc:
            reason = "it is a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
            raise PluginError(f"{what} {path}: cannot read: {reason}") from None
    finally:
        os.close(dfd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PluginError(f"{what} {path}: not a regular file")
        reason = _distrust(st) if _as_root() else ""
        if reason:
            raise PluginError(f"{what} {path} skipped: it is {reason}")
        os.set_blocking(fd, True)
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise PluginError(f"{what} {path}: larger than {MAX_FILE_BYTES} bytes")
    return data


def load_yaml(path: str, what: str = "plugin") -> Any:
    from ccm import yamlio
    from ccm.model.errors import CCMError

    data = read_trusted(path, what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PluginError(f"{what} {path}: not UTF-8 text (byte offset {exc.start})") from None
    try:
        return yamlio.load(text, source=path)
    except CCMError as exc:
        raise PluginError(f"{what} {exc}") from None


def load(name: str, path: str) -> Definition:
    from ccm.cli.plugins.definition import parse

    return parse(load_yaml(path), name, path)


def builtin_names() -> frozenset:
    from ccm.cli.main import ALIASES, COMMANDS

    return frozenset(COMMANDS) | frozenset(ALIASES) | {"help"}


def mountable(environ: Optional[Mapping[str, str]] = None) -> Tuple[Dict[str, str], List[str]]:
    """``discover()`` without the names of built-in commands (a warning each: a plugin
    cannot shadow ``apply``)."""
    found, warnings = discover(environ)
    builtin = builtin_names()
    for name in sorted(set(found) & builtin):
        warnings.append(f"plugin {found.pop(name)} skipped: {name!r} is a built-in command")
    return found, warnings


def loaded(environ: Optional[Mapping[str, str]] = None) -> Tuple[List[Definition], List[str]]:
    """Every mountable plugin, loaded; a bad file is a warning (the help texts list the rest)."""
    found, warnings = mountable(environ)
    out: List[Definition] = []
    for name in sorted(found):
        try:
            out.append(load(name, found[name]))
        except PluginError as exc:
            warnings.append(str(exc))
    return out, warnings


def warn(lines: List[str]) -> None:
    for line in lines:
        sys.stderr.write(f"ccm: warning: {line}\n")


def run(name: str, path: str, argv: List[str]) -> int:
    """Run plugin ``name`` (its file ``path``, from ``mountable()``) with ``argv``."""
    definition = load(name, path)
    from ccm.cli.plugins.runner import run_definition

    return run_definition(definition, argv)
