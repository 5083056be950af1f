"""What an archive holds, checked before anything is written: ``Limits``, ``Member`` (one
entry read from a tar or zip), ``effective_members`` and ``validate_members`` (names, links
and special files refused, links resolved inside the destination).

See ``ccm.safe_extract`` for the guarantees; callers import from there.
"""
from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from dataclasses import dataclass

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Sequence, Set

KIND_TAR = "tar"
KIND_TGZ = "tar.gz"
KIND_ZIP = "zip"

FILE, DIR, SYMLINK, HARDLINK = "file", "dir", "symlink", "hardlink"
_MAX_LINK_HOPS = 40


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
    size: int = 0        # a file's declared size (its header's, checked against the limits first)


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


def _tar_infos(tf: tarfile.TarFile, max_entries: int) -> Iterator[tarfile.TarInfo]:
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
            out.append(Member(name, FILE, mode, ref=info, size=info.size or 0))
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
            out.append(Member(name, FILE, mode or 0o644, ref=info, size=info.file_size or 0))
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
