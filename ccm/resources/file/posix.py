"""posix provider for the file type: the only code that changes files on disk.

Guarantees: content is written to a temp file in the target's directory, fsynced and
renamed over the target (atomic replace: readers see the old or the new file, never a
partial one; a symlink at the target is replaced, never followed); ownership before mode
(chown clears setuid bits); attributes are never set through a symlink.

Writes go through the run's write sink (``use_write_sink``, handed in by the apply flow;
``fsafe.DIRECT`` outside a run): ``store`` stages its temp file there. The direct sink
renames it when the write ends; a first run's batching sink (``ccm.apply.batch``) holds it
and commits it, durable and renamed, before anything can observe the outcome; until then
``status`` of a staged path describes the staged file (what the rename will publish: same
inode, owner, mode, mtime and content), so the flow's verification step sees the new state.

Observing: ``status`` reports a ``FileObservation`` (``ccm.resources.file.observation``)
of the class ``ccm.resources.file.steady.state_class()`` gives; the file logic's reads of
other files (a ``source`` and its digest, both sides of a noop diff) are here too
(``read_source``, ``read_bounded``), so the logic does no I/O.
"""
from __future__ import annotations

import errno
import os
import stat

from ccm import fsafe
from ccm.clock import now_ns
from ccm.model.errors import ProviderError, ResourceError
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.resource import Properties
from ccm.resources.file import steady
from ccm.resources.file.observation import FileObservation
from ccm.resources.ownership import (CHUNK, gid_for, group_name, known_gid, known_group_name, known_uid,
                                     known_user_name, resolve_ids, sha256_unless_equal, uid_for, user_name)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Tuple

    from ccm.model.provider import WriteSink


_new_object = object.__new__
_observation_init = FileObservation.__init__
_O_READ = os.O_RDONLY | os.O_CLOEXEC   # what open(path, "rb") does, unbuffered
_ONE_READ = 1 << 16   # files below this are compared with their desired bytes in one read
_IFMT, _IFDIR, _IFREG = 0o170000, stat.S_IFDIR, stat.S_IFREG   # stat.S_IFMT(mode) is mode & _IFMT
SOURCE_COMPARED = 1 << 16   # a source up to this size is also handed to status, to compare the file with
DIFF_READ_LIMIT = 1 << 20   # files larger than this get no line counts or diff in noop


class PosixFileProvider:
    name = "posix"

    def __init__(self, runner: Any = None, log: Any = None):
        self.log = log
        self._state_class = steady.state_class()   # the plain twin or the steady one, chosen once per provider
        self.use_write_sink(fsafe.DIRECT)

    def use_write_sink(self, sink: WriteSink) -> None:   # ccm.model.provider.StagingWrites
        self._sink = sink
        self._staged = sink.staged   # bound once: every status asks

    def status(self, path: str, content: Optional[bytes] = None, checksum: str = "", owner: Optional[str] = None,
               group: Optional[str] = None) -> FileObservation:
        """The file at ``path`` as it is. ``content`` and ``checksum``: the desired bytes
        and their sha256, as far as they are known (a file equal to the bytes is compared,
        not hashed); ``owner``/``group``: the desired ones, looked up here so the logic
        compares ids (``FileObservation``)."""
        staged = self._staged(path)   # None: nothing held (every file of a steady run)
        try:
            st = staged.stat if staged is not None and staged.stat is not None else os.stat(path)
        except FileNotFoundError:
            return self._state_class(path, "absent", now_ns(), None, "", "", None, False, content, checksum, None,
                                     None)
        except OSError as exc:
            raise ProviderError(f"cannot stat {path}: {exc.strerror or exc}") from None
        kind = st.st_mode & _IFMT
        ensure = "present"   # a fifo, socket or device too: no checksum, content differs
        found: Optional[str] = None   # the checksum of a regular file
        same = False
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
                        if not same:
                            found = sha256_unless_equal(path, size, None)
                    else:
                        found = sha256_unless_equal(path, size, content)
                        same = found is None   # the file holds exactly ``content``
                except OSError as exc:
                    raise ProviderError(f"cannot read {path}: {exc.strerror or exc}") from None
        elif kind == _IFDIR:
            ensure = "directory"
        uid, gid = st.st_uid, st.st_gid
        # the ids the desired owner and group name (uid_for/gid_for, their remembered answers first)
        wanted_uid = wanted_gid = None
        if owner:
            wanted_uid = known_uid(owner)
            if wanted_uid is None:
                wanted_uid = uid_for(owner)
        if group:
            wanted_gid = known_gid(group)
            if wanted_gid is None:
                wanted_gid = gid_for(group)
        # self._state_class(...), without type.__call__: its call into __init__ costs a steady
        # file about 500 instructions more than these two calls
        state: FileObservation = _new_object(self._state_class)
        _observation_init(state, path, ensure, now_ns(), st, known_user_name(uid) or user_name(uid),
                          known_group_name(gid) or group_name(gid), found, same, content, checksum, wanted_uid,
                          wanted_gid)
        return state

    def source_path(self, source: str, working_dir: Optional[str]) -> str:
        """Where ``source`` is: relative to ``working_dir`` (default: the current directory)."""
        if not os.path.isabs(source):
            source = os.path.join(working_dir or os.getcwd(), source)
        return os.path.normpath(source)

    def read_source(self, source: str, working_dir: Optional[str]) -> Tuple[Optional[bytes], str]:
        """The ``source`` file's bytes (None from ``SOURCE_COMPARED`` bytes on: not kept) and
        their sha256, read by plain reads (no buffered file object: a steady run reads every
        source); a source that cannot be read is a ``ResourceError``."""
        from ccm.digest import sha256
        from ccm.readfile import ReadError, open_regular

        path = self.source_path(source, working_dir)
        try:
            fd = open_regular(path, "source")
            try:
                size = os.fstat(fd).st_size
                h = sha256(size_hint=size)
                data: Optional[bytes] = os.read(fd, size + 1) if size < SOURCE_COMPARED else None
                if data is not None:
                    h.update(data)
                    if len(data) > size:   # it grew since the fstat: not compared
                        data = None
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    h.update(chunk)
                    data = None
            finally:
                os.close(fd)
        except ReadError as exc:
            raise ResourceError(str(exc)) from None
        except OSError as exc:
            raise ResourceError(f"cannot read source {path}: {exc.strerror or exc}") from None
        return data, str(h.hexdigest())

    def read_bounded(self, path: str, limit: int = DIFF_READ_LIMIT) -> Optional[bytes]:
        """A regular file's bytes (never through a symlink), or None when absent, larger
        than ``limit`` or not a regular file (what a noop diff shows)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            chunks = []
            left = limit + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 16))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            return data if len(data) <= limit else None
        finally:
            os.close(fd)

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
            with self._sink.stage(path, mode=mode, uid=uid, gid=gid) as out:
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


class PosixFactory(ProviderFactory):
    type_name = "file"
    name = "posix"
    manageable_is_constant = True   # is_manageable: always (True, 1)
    provider_per_run = True   # the provider keeps only the run log and the write sink it is handed
    stages_writes = True

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(True, 1)

    def new(self, runner: Any, log: Any) -> PosixFileProvider:
        return PosixFileProvider(runner, log)
