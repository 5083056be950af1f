"""Safe extraction of .tar, .tar.gz/.tgz and .zip archives with the standard library.

What: ``extract(archive, dest)`` unpacks an archive into ``dest`` without any external
tool (minimal hosts lack ``unzip``), for the archive resource and remote manifest
bundles.

Guarantees: every member is checked **before** anything is written, so a malicious
archive fails with ``UnsafeArchive`` and writes nothing at all. Refused: absolute
names, names escaping ``dest`` (``..``), symlinks or hardlinks whose target resolves
outside ``dest`` (resolution follows the archive's own links and links already present
under ``dest``), members written through such a link, device files, fifos and other
special files. Files are written to a temp file in their directory and renamed into
place, so an existing symlink at a member's path is replaced, never followed. Modes
keep the permission bits only (no setuid/setgid/sticky). While writing, every parent
directory is re-checked with ``realpath`` as a second line of defence.

Bombs: ``Limits`` bound the total extracted bytes, the entry count and the expansion
ratio (extracted bytes / archive bytes, once past ``ratio_floor``). Declared sizes are
checked before anything is written and actual bytes are counted while streaming, so a
lying header stops the extraction as soon as the budget is spent.

All or nothing: members are extracted into a private temp directory inside ``dest``
(``.ccm-extract-<hex>``) and moved into place only when every member was written; a
failure (an overlong name, a full disk, a limit) leaves ``dest`` as it was. Conflicts
that would stop the move (a file replacing a non-empty directory) are checked before
the first move. Leftover temp directories of a killed run are removed by the next
extraction into the same ``dest`` (ours, older than this process).

Not: an owner-preserving extractor (files belong to the caller, or to ``uid``/``gid``).
"""
from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Optional, Sequence, Set, Tuple

KIND_TAR = "tar"
KIND_TGZ = "tar.gz"
KIND_ZIP = "zip"

FILE, DIR, SYMLINK, HARDLINK = "file", "dir", "symlink", "hardlink"
_MAX_LINK_HOPS = 40
_CHUNK = 1 << 20
_TEMP_PREFIX = ".ccm-extract-"


@dataclass
class Limits:
    """Bounds on one extraction; the defaults fit real software bundles."""

    max_bytes: int = 8 << 30        # total extracted bytes
    max_entries: int = 200_000      # members
    max_ratio: int = 200            # extracted bytes per archive byte ...
    ratio_floor: int = 64 << 20     # ... enforced once this much was extracted


DEFAULT_LIMITS = Limits()


class _Budget:
    def __init__(self, limits: Limits, archive_size: int):
        self.limits = limits
        self.archive_size = max(archive_size, 1)
        self.total = 0

    def spend(self, n: int) -> None:
        self.total += n
        lim = self.limits
        if self.total > lim.max_bytes:
            raise UnsafeArchive(f"archive expands to more than {lim.max_bytes} bytes (limit)")
        if self.total > lim.ratio_floor and self.total > lim.max_ratio * self.archive_size:
            raise UnsafeArchive(f"archive expands more than {lim.max_ratio} times its size of "
                                f"{self.archive_size} bytes (a decompression bomb?)")


class UnsafeArchive(CCMError):
    """The archive holds a member that would be unsafe to extract; nothing was written."""


class ArchiveError(CCMError):
    """The archive could not be read or written (corrupt, wrong format, I/O error)."""


def archive_kind(name: str) -> Optional[str]:
    """``tar.gz`` for .tar.gz/.tgz, ``tar``, ``zip`` (case-insensitive), else None."""
    lower = name.lower()
    if lower.endswith(".tar.gz") or lower.endswith(".tgz"):
        return KIND_TGZ
    if lower.endswith(".tar"):
        return KIND_TAR
    if lower.endswith(".zip"):
        return KIND_ZIP
    return None


@dataclass
class Member:
    name: str            # normalised relative path, "/"-separated, no "." or ".." parts
    kind: str            # FILE, DIR, SYMLINK, HARDLINK
    mode: int            # permission bits only
    target: str = ""     # link target (symlink: as written; hardlink: normalised member name)
    ref: object = None   # TarInfo or ZipInfo


# --- reading the member list -------------------------------------------------------------

def _clean_name(raw: str) -> str:
    """Normalise a member name or raise ``UnsafeArchive`` when it is absolute or escapes."""
    if not raw or "\x00" in raw:
        raise UnsafeArchive(f"invalid member name {raw!r}")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":" and raw[0].isalpha()):
        raise UnsafeArchive(f"member {raw!r} has an absolute path")
    parts = []
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise UnsafeArchive(f"member {raw!r} escapes the destination ('..')")
        parts.append(part)
    return "/".join(parts)


def _tar_infos(tf: tarfile.TarFile, max_entries: int):
    count = 0
    while True:
        info = tf.next()
        if info is None:
            return
        count += 1
        if count > max_entries:
            raise UnsafeArchive(f"archive has more than {max_entries} entries (limit)")
        yield info


def _tar_members(tf: tarfile.TarFile, max_entries: int = DEFAULT_LIMITS.max_entries) -> List[Member]:
    out = []
    for info in _tar_infos(tf, max_entries):
        name = _clean_name(info.name)
        if not name:
            if info.isdir():
                continue  # "./" itself
            raise UnsafeArchive(f"invalid member name {info.name!r}")
        mode = info.mode & 0o777
        if info.isreg():
            out.append(Member(name, FILE, mode, ref=info))
        elif info.isdir():
            out.append(Member(name, DIR, mode, ref=info))
        elif info.issym():
            out.append(Member(name, SYMLINK, mode, target=info.linkname, ref=info))
        elif info.islnk():
            try:
                target = _clean_name(info.linkname)
            except UnsafeArchive:
                raise UnsafeArchive(
                    f"hardlink {info.name!r} points outside the destination ({info.linkname})") from None
            out.append(Member(name, HARDLINK, mode, target=target, ref=info))
        elif info.ischr() or info.isblk():
            raise UnsafeArchive(f"member {info.name!r} is a device file")
        elif info.isfifo():
            raise UnsafeArchive(f"member {info.name!r} is a fifo")
        else:
            raise UnsafeArchive(f"member {info.name!r} has an unsupported type")
    return out


def _zip_members(zf: zipfile.ZipFile, max_entries: int = DEFAULT_LIMITS.max_entries) -> List[Member]:
    out = []
    if len(zf.infolist()) > max_entries:
        raise UnsafeArchive(f"archive has more than {max_entries} entries (limit)")
    for info in zf.infolist():
        name = _clean_name(info.filename)
        unix = (info.external_attr >> 16) & 0xFFFF
        ftype = stat.S_IFMT(unix) if unix else 0
        mode = unix & 0o777
        if info.is_dir() or ftype == stat.S_IFDIR:
            if name:
                out.append(Member(name, DIR, mode or 0o755, ref=info))
            continue
        if not name:
            raise UnsafeArchive(f"invalid member name {info.filename!r}")
        if ftype == stat.S_IFLNK:
            target = zf.read(info).decode("utf-8", "surrogateescape")
            out.append(Member(name, SYMLINK, 0o777, target=target, ref=info))
        elif ftype in (0, stat.S_IFREG):
            out.append(Member(name, FILE, mode or 0o644, ref=info))
        elif ftype in (stat.S_IFCHR, stat.S_IFBLK):
            raise UnsafeArchive(f"member {info.filename!r} is a device file")
        elif ftype == stat.S_IFIFO:
            raise UnsafeArchive(f"member {info.filename!r} is a fifo")
        else:
            raise UnsafeArchive(f"member {info.filename!r} has an unsupported type")
    return out


# --- repeated names: GNU tar's rule -------------------------------------------------------

def effective_members(members: Sequence[Member]) -> List[Member]:
    """The members as extracting them in order leaves them, by GNU tar's rule: a later
    entry replaces an earlier one of the same name (a directory again only updates the
    mode), and of another kind too (a file ``x``, then a directory ``x`` and ``x/y``: the
    directory). Refused (``UnsafeArchive``, nothing written): a non-directory replacing a
    directory the archive already put members in, and a member below a name the archive
    made a file or link. Every replacement happens inside the destination: the members
    are written to a staging directory there and moved into place afterwards.
    """
    kept: Dict[str, Member] = {}   # in extraction order: a replacement moves to the end
    parents: Set[str] = set()       # names that members lie below
    for m in members:
        name = m.name
        cut = name.find("/")
        while cut >= 0:
            above = kept.get(name[:cut])
            if above is not None and above.kind != DIR:
                raise UnsafeArchive(f"member {name!r} lies below {above.name!r}, which the archive makes a "
                                    f"{above.kind}, not a directory")
            parents.add(name[:cut])
            cut = name.find("/", cut + 1)
        prev = kept.get(name)
        if prev is not None:
            if prev.kind == DIR and m.kind == DIR:
                prev.mode, prev.ref = m.mode, m.ref
                continue
            if prev.kind == DIR and name in parents:
                raise UnsafeArchive(f"member {name!r} (a {m.kind}) would replace the directory {name!r}, "
                                    f"which holds earlier members")
            del kept[name]
        kept[name] = m
    return list(kept.values())


# --- validation --------------------------------------------------------------------------

class _Resolver:
    """Resolves paths inside the destination as the kernel would after extraction.

    Links come from the archive first (later members replace earlier ones, as when
    extracting) and otherwise from what already exists under ``dest``. A path resolves to
    a list of components relative to ``dest``; climbing above ``dest`` or an absolute link
    target leaves it (returns None).
    """

    def __init__(self, dest: str, members: Sequence[Member]):
        self.dest = dest
        self.kinds: Dict[str, Member] = {}
        for m in members:
            self.kinds[m.name] = m

    def _link_target(self, rel: str) -> Optional[str]:
        m = self.kinds.get(rel)
        if m is not None and m.kind != DIR:
            return m.target if m.kind == SYMLINK else None
        # Not in the archive, or a directory member (extraction keeps an existing link
        # there): what is on disk decides.
        path = os.path.join(self.dest, rel)
        if os.path.islink(path):
            return os.readlink(path)
        return None

    def resolve(self, parts: List[str], *, follow_last: bool = True) -> Optional[List[str]]:
        done: List[str] = []
        todo = list(parts)
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not done:
                    return None
                done.pop()
                continue
            candidate = "/".join(done + [part])
            target = self._link_target(candidate) if (todo or follow_last) else None
            if target is None:
                done.append(part)
                continue
            hops += 1
            if hops > _MAX_LINK_HOPS:
                raise UnsafeArchive(f"too many levels of symbolic links resolving {'/'.join(parts)!r}")
            if target.startswith("/"):
                return None
            todo = [p for p in target.split("/")] + todo
        return done


def validate_members(members: Sequence[Member], dest: str) -> None:
    """Raise ``UnsafeArchive`` unless every member stays inside ``dest``."""
    resolver = _Resolver(dest, members)
    seen_files = set()
    for m in members:
        parts = m.name.split("/")
        parent = resolver.resolve(parts[:-1])
        if parent is None:
            raise UnsafeArchive(f"member {m.name!r} would be written through a link outside the destination")
        if m.kind == SYMLINK:
            if not m.target:
                raise UnsafeArchive(f"symlink {m.name!r} has an empty target")
            if m.target.startswith("/"):
                raise UnsafeArchive(f"symlink {m.name!r} points outside the destination ({m.target})")
            if resolver.resolve(parent + m.target.split("/")) is None:
                raise UnsafeArchive(f"symlink {m.name!r} points outside the destination ({m.target})")
        elif m.kind == HARDLINK:
            if m.target not in seen_files:
                raise UnsafeArchive(f"hardlink {m.name!r} points outside the archive's files ({m.target})")
            if resolver.resolve(m.target.split("/")) is None:
                raise UnsafeArchive(f"hardlink {m.name!r} points outside the destination ({m.target})")
        if m.kind in (FILE, HARDLINK):
            seen_files.add(m.name)


# --- writing -----------------------------------------------------------------------------

def _inside(real_dest: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == real_dest or real.startswith(real_dest.rstrip("/") + "/")


def _ensure_dir(real_dest: str, path: str, mode: int) -> None:
    if os.path.islink(path) or os.path.isdir(path):
        if not _inside(real_dest, path):
            raise UnsafeArchive(f"{path} resolves outside the destination")
        return
    parent = os.path.dirname(path)
    if parent and parent != path and not os.path.isdir(parent):
        _ensure_dir(real_dest, parent, 0o755)
    if not _inside(real_dest, parent):
        raise UnsafeArchive(f"{path} resolves outside the destination")
    if os.path.lexists(path):
        os.unlink(path)
    os.mkdir(path, mode | 0o700)
    _chmod_dir(path, mode | 0o700)


def _chmod_dir(path: str, mode: int) -> None:
    """chmod through a descriptor opened without following a symlink swapped in."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _replace_with(tmp: str, path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.rmdir(path)
        except OSError as exc:
            raise ArchiveError(f"cannot replace directory {path} with a file: {exc.strerror}") from None
    os.rename(tmp, path)


def _write_file(real_dest: str, path: str, src, mode: int, budget: Optional[_Budget] = None) -> None:
    parent = os.path.dirname(path)
    _ensure_dir(real_dest, parent, 0o755)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=parent)
    try:
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = src.read(_CHUNK)
                if not chunk:
                    break
                if budget is not None:
                    budget.spend(len(chunk))
                out.write(chunk)
            os.fchmod(out.fileno(), mode)
        _replace_with(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _link(real_dest: str, path: str, make) -> None:
    parent = os.path.dirname(path)
    _ensure_dir(real_dest, parent, 0o755)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{os.urandom(6).hex()}")
    make(tmp)
    try:
        _replace_with(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _open(archive: str, kind: str):
    try:
        if kind == KIND_ZIP:
            return zipfile.ZipFile(archive)
        return tarfile.open(archive, "r:gz" if kind == KIND_TGZ else "r:")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ArchiveError(f"cannot read {kind} archive {archive}: {exc}") from None


def list_members(archive: str, kind: Optional[str] = None) -> List[Member]:
    kind = kind or archive_kind(archive)
    if kind is None:
        raise ArchiveError(f"unsupported archive type: {archive}")
    handle = _open(archive, kind)
    try:
        return _zip_members(handle) if kind == KIND_ZIP else _tar_members(handle)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise ArchiveError(f"cannot read {kind} archive {archive}: {exc}") from None
    finally:
        handle.close()


def extract(archive: str, dest: str, *, kind: Optional[str] = None, allow_links: bool = True,
            uid: Optional[int] = None, gid: Optional[int] = None,
            dir_mode: int = 0o755, limits: Optional[Limits] = None) -> List[str]:
    """Extract ``archive`` into ``dest`` (created with ``dir_mode`` if missing).

    ``kind`` defaults to the one given by the archive's name. ``allow_links=False``
    refuses symlinks and hardlinks (manifest bundles: regular files and directories
    only). ``uid``/``gid`` chown every extracted entry. Returns the extracted paths.
    Raises ``UnsafeArchive`` (nothing written) or ``ArchiveError``.
    """
    kind = kind or archive_kind(archive)
    if kind is None:
        raise ArchiveError(f"unsupported archive type: {archive}")
    limits = limits or DEFAULT_LIMITS
    handle = _open(archive, kind)
    try:
        try:
            members = (_zip_members(handle, limits.max_entries) if kind == KIND_ZIP
                       else _tar_members(handle, limits.max_entries))
        except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
            raise ArchiveError(f"cannot read {kind} archive {archive}: {exc}") from None
        members = effective_members(members)
        declared = sum(_declared_size(m) for m in members)
        if declared > limits.max_bytes:
            raise UnsafeArchive(f"archive declares {declared} bytes, more than the limit of {limits.max_bytes}")
        budget = _Budget(limits, os.path.getsize(archive))
        if not allow_links:
            for m in members:
                if m.kind in (SYMLINK, HARDLINK):
                    raise UnsafeArchive(f"member {m.name!r}: only regular files and directories are supported")
        dest = os.path.abspath(dest)
        validate_members(members, dest)
        try:
            os.makedirs(dest, mode=dir_mode, exist_ok=True)
            _sweep_stale(dest)
            staging = tempfile.mkdtemp(prefix=_TEMP_PREFIX, dir=dest)
            try:
                _write_members(handle, kind, members, staging, uid, gid, budget)
                _check_conflicts(members, dest)
                return _move_into_place(members, staging, dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
            raise ArchiveError(f"cannot read {kind} archive {archive}: {exc}") from None
        except OSError as exc:
            raise ArchiveError(f"cannot extract {archive} into {dest}: {exc.strerror or exc}") from None
    finally:
        handle.close()


def _declared_size(m: Member) -> int:
    if m.kind != FILE:
        return 0
    return int(getattr(m.ref, "size", None) or getattr(m.ref, "file_size", 0) or 0)


def _sweep_stale(dest: str) -> None:
    from ccm import fsafe

    try:
        fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        fsafe.sweep_stale(fd, prefix=_TEMP_PREFIX)
    finally:
        os.close(fd)


def _check_conflicts(members: Sequence[Member], dest: str) -> None:
    """Refuse, before moving anything, a member that would replace a non-empty directory."""
    for m in members:
        if m.kind == DIR:
            continue
        path = os.path.join(dest, *m.name.split("/"))
        if os.path.isdir(path) and not os.path.islink(path) and os.listdir(path):
            raise ArchiveError(f"cannot replace directory {path} with a file: directory not empty")


def _move_into_place(members: Sequence[Member], staging: str, dest: str) -> List[str]:
    real_dest = os.path.realpath(dest)
    written: List[str] = []
    dir_modes: List[Tuple[str, int, int, int]] = []
    for m in members:
        src = os.path.join(staging, *m.name.split("/"))
        path = os.path.join(dest, *m.name.split("/"))
        if m.kind == DIR:
            st = os.lstat(src)
            _ensure_dir(real_dest, path, 0o700)
            dir_modes.append((path, m.mode, st.st_uid, st.st_gid))
        elif os.path.lexists(src):
            _ensure_dir(real_dest, os.path.dirname(path), 0o755)
            if not _inside(real_dest, os.path.dirname(path)):
                raise UnsafeArchive(f"{path} resolves outside the destination")
            _replace_with(src, path)
        written.append(path)
    for path, mode, uid, gid in reversed(dir_modes):
        if not os.path.islink(path):
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                os.fchown(fd, uid, gid)
                os.fchmod(fd, mode | 0o700)
            finally:
                os.close(fd)
    return written


def _write_members(handle, kind: str, members: Sequence[Member], dest: str,
                   uid: Optional[int], gid: Optional[int], budget: Optional[_Budget] = None) -> List[str]:
    real_dest = os.path.realpath(dest)
    written: List[str] = []
    dir_modes: List[Tuple[str, int]] = []
    for m in members:
        path = os.path.join(dest, *m.name.split("/"))
        if m.kind == DIR:
            _ensure_dir(real_dest, path, m.mode)
            dir_modes.append((path, m.mode))
        elif m.kind == FILE:
            src = handle.open(m.ref) if kind == KIND_ZIP else handle.extractfile(m.ref)
            try:
                _write_file(real_dest, path, src, m.mode, budget)
            finally:
                src.close()
        elif m.kind == SYMLINK:
            _link(real_dest, path, lambda tmp, t=m.target: os.symlink(t, tmp))
        elif m.kind == HARDLINK:
            source = os.path.join(dest, *m.target.split("/"))
            if not _inside(real_dest, source):
                raise UnsafeArchive(f"hardlink {m.name!r} points outside the destination")
            _link(real_dest, path, lambda tmp, s=source: os.link(s, tmp, follow_symlinks=False))
        if uid is not None or gid is not None:
            os.chown(path, -1 if uid is None else uid, -1 if gid is None else gid, follow_symlinks=False)
        written.append(path)
    # Directory modes last, so a read-only directory in the archive does not stop its
    # own members being written.
    # Owner keeps rwx so the caller can always clean up what it extracted.
    for path, mode in reversed(dir_modes):
        if not os.path.islink(path):
            _chmod_dir(path, mode | 0o700)
    return written


def is_within(base: str, path: str) -> bool:
    """True when ``path`` is ``base`` or below it, lexically (both made absolute)."""
    base = posixpath.normpath(os.path.abspath(base))
    path = posixpath.normpath(os.path.abspath(path))
    return path == base or path.startswith(base.rstrip("/") + "/")
