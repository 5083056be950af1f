"""Writing a checked archive: ``extract`` (all or nothing, through a private staging
directory in ``dest``), ``list_members`` and ``is_within``.

See ``ccm.safe_extract`` for the guarantees; callers import from there.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
import tempfile
import zipfile

from ccm.safe_extract.members import (DEFAULT_LIMITS, DIR, FILE, HARDLINK, KIND_TGZ, KIND_ZIP, SYMLINK, ArchiveError,
                                      Limits, Member, UnsafeArchive, _Budget, _tar_members, _zip_members, archive_kind,
                                      effective_members, validate_members)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, Callable, List, Optional, Sequence, Tuple

_CHUNK = 1 << 20
_TEMP_PREFIX = ".ccm-extract-"


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


def _write_file(real_dest: str, path: str, src: IO[bytes], mode: int, budget: Optional[_Budget] = None) -> None:
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


def _link(real_dest: str, path: str, make: Callable[..., None]) -> None:
    parent = os.path.dirname(path)
    _ensure_dir(real_dest, parent, 0o755)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{os.urandom(6).hex()}")
    make(tmp)
    try:
        _replace_with(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _open(archive: str, kind: str) -> Any:   # a ZipFile or a TarFile, by ``kind``
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
    return m.size


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


def _write_members(handle: Any, kind: str, members: Sequence[Member], dest: str,
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
