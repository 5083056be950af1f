"""posix provider for the file type: the only code that changes files on disk.

Guarantees: content is written to a temp file in the target's directory, fsynced and
renamed over the target (atomic replace: readers see the old or the new file, never a
partial one; a symlink at the target is replaced, never followed); ownership before mode (chown clears setuid bits); attributes are never set
through a symlink.

Batched (``use_write_batch``, handed in by the apply flow during a run): ``store`` only
stages the temp file in the run's ``fsafe.DurableBatch`` and the engine makes the batch
durable and renames it before anything can observe the outcome; until then ``status``
of a staged path describes the staged file (what the rename will publish: same inode,
owner, mode, mtime and content), so the flow's verification step sees the new state.
"""
from __future__ import annotations

import errno
import os
import stat

from ccm import fsafe
from ccm.digest import sha256_hex
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState, rfc3339
from ccm.model.provider import Manageable
from ccm.model.resource import Properties
from ccm.resources.file import SAME
from ccm.resources.ownership import (CHUNK, atomic_replace, format_mode, group_name, known_group_name, known_mode_text,
                                     known_user_name, resolve_ids, sha256_unless_equal, user_name)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ContextManager, Dict, Mapping, Optional

_O_READ = os.O_RDONLY | os.O_CLOEXEC   # what open(path, "rb") does, unbuffered
_ONE_READ = 1 << 16   # files below this are compared with their desired bytes in one read
_IFMT, _IFDIR, _IFREG = 0o170000, stat.S_IFDIR, stat.S_IFREG   # stat.S_IFMT(mode) is mode & _IFMT


def _metadata(state: ResourceState) -> Dict[str, Any]:
    """The ``extra`` of a state ``status`` made, from its raw facts, in the documented key
    order: name, checksum, owner, group, mode, provider, mtime, size, extended."""
    st, found, desired, owner, group = state.raw
    mode = st.st_mode
    mode_text = known_mode_text(mode) or format_mode(mode)
    if found is None:
        meta = {"name": state.name, "owner": owner, "group": group, "mode": mode_text,
                "provider": PosixFileProvider.name, "mtime": rfc3339(st.st_mtime_ns)}
    else:
        meta = {"name": state.name, "checksum": sha256_hex(desired) if found is SAME else found, "owner": owner,
                "group": group, "mode": mode_text, "provider": PosixFileProvider.name, "mtime": rfc3339(st.st_mtime_ns)}
    size = st.st_size
    if size:
        meta["size"] = size
    meta["extended"] = {}
    return {"metadata": meta}


_observed = ResourceState.observed   # bound once (a classmethod read makes a bound method each time)


class PosixFileProvider:
    name = "posix"

    def __init__(self, runner: Any = None, log: Any = None):
        self.log = log
        self._batch: Optional[fsafe.DurableBatch] = None

    def use_write_batch(self, batch: Optional[fsafe.DurableBatch]) -> None:
        self._batch = batch

    def status(self, path: str, content: Optional[bytes] = None, checksum: str = "") -> ResourceState:
        """The file at ``path`` as it is; ``content`` and ``checksum``: the desired bytes
        and their sha256, when known (a file equal to the bytes is compared, not hashed),
        or the desired sha256 alone. The state keeps its raw facts (``observed``) and makes
        its metadata when first read."""
        batch = self._batch
        staged = batch.staged(path) if batch is not None and batch.writes else None   # none: a steady run
        try:
            st = staged.stat if staged is not None and staged.stat is not None else os.stat(path)
        except FileNotFoundError:
            meta: Dict[str, Any] = {"name": path, "provider": self.name, "extended": {}, "owner": "",
                                    "group": "", "mode": "", "mtime": rfc3339(0)}
            return ResourceState(type="file", name=path, ensure="absent", extra={"metadata": meta})
        except OSError as exc:
            raise ProviderError(f"cannot stat {path}: {exc.strerror or exc}") from None
        kind = st.st_mode & _IFMT
        ensure = "present"   # a fifo, socket or device too: no checksum, content differs
        found: Any = None   # the checksum of a regular file
        if kind == _IFREG:
            if staged is not None:
                found = staged.checksum
            else:
                size = st.st_size
                try:
                    if content is not None and size == len(content) and size < _ONE_READ:
                        # the common case, inline (every file of a steady run): one read, one comparison
                        fd = os.open(path, _O_READ)
                        try:
                            same = os.read(fd, size + 1) == content   # as long as content: EOF at the stat size
                        finally:
                            os.close(fd)
                        found = (checksum or SAME) if same else sha256_unless_equal(path, size, None)
                    else:
                        found = sha256_unless_equal(path, size, content)
                        if found is None:   # the file holds exactly ``content``
                            found = checksum or SAME
                except OSError as exc:
                    raise ProviderError(f"cannot read {path}: {exc.strerror or exc}") from None
        elif kind == _IFDIR:
            ensure = "directory"
        uid, gid = st.st_uid, st.st_gid
        raw = (st, found, checksum or content,   # desired: the digest when given (no bytes kept), else the bytes
               known_user_name(uid) or user_name(uid), known_group_name(gid) or group_name(gid))
        return _observed("file", path, ensure, raw, _metadata)

    def create_directory(self, path: str, mode: int, owner: str, group: str) -> None:
        uid, gid = resolve_ids(owner, group)
        try:
            fsafe.ensure_directory(path, mode, uid, gid)
        except OSError as exc:
            raise ProviderError(f"cannot create directory {path}: {exc.strerror or exc}") from None

    def store(self, path: str, *, content: Optional[bytes], source: Optional[str], owner: str,
              group: str, mode: int) -> None:
        uid, gid = resolve_ids(owner, group)
        parent = os.path.dirname(path) or "/"
        if not os.path.isdir(parent):
            raise ProviderError(f'"{parent}" is not a directory')
        try:
            writing: ContextManager[Any] = (atomic_replace(path, mode=mode, uid=uid, gid=gid) if self._batch is None
                       else self._batch.stage(path, mode=mode, uid=uid, gid=gid))
            with writing as out:
                if source is not None:
                    import shutil

                    from ccm.readfile import ReadError, open_regular

                    try:
                        with os.fdopen(open_regular(source, "source"), "rb") as src:
                            shutil.copyfileobj(src, out, CHUNK)
                    except ReadError as exc:
                        raise ProviderError(str(exc)) from None
                    except OSError as exc:
                        raise ProviderError(f"cannot read source {source}: {exc.strerror or exc}") from None
                else:
                    out.write(content or b"")
        except OSError as exc:
            raise ProviderError(f"cannot write {path}: {exc.strerror or exc}") from None

    def set_attributes(self, path: str, owner: str, group: str, mode: int) -> None:
        uid, gid = resolve_ids(owner, group)
        try:
            fsafe.set_attributes(path, uid, gid, mode)
        except OSError as exc:
            raise ProviderError(f"cannot set attributes of {path}: {exc.strerror or exc}") from None

    def remove(self, path: str, *, force: bool = False) -> None:
        try:
            fsafe.remove(path, force=force)
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise ProviderError(
                    f"cannot remove {path}: directory is not empty, set 'force: true' to remove "
                    f"non-empty directories: {exc.strerror}") from None
            raise ProviderError(f"cannot remove {path}: {exc.strerror or exc}") from None


class PosixFactory:
    type_name = "file"
    name = "posix"
    manageable_is_constant = True   # is_manageable: always (True, 1)
    provider_per_run = True   # the provider keeps only the run log and the write batch it is handed

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(True, 1)

    def new(self, runner: Any, log: Any) -> PosixFileProvider:
        return PosixFileProvider(runner, log)
