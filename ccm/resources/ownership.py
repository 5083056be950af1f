"""Owner, group, mode, checksum and atomic-write helpers shared by the file, archive and
scaffold types.

``atomic_replace`` is the one way these providers write a file: a temp file in the
target's directory, fsynced, chowned, chmodded, then renamed over the target, so readers
see the old or the new content and never a partial one; the temp file never survives.
"""
from __future__ import annotations

import grp
import os
import pwd
from _thread import allocate_lock   # threading.Lock, without importing threading
from contextlib import contextmanager

from ccm.digest import sha256
from ccm.model.errors import ProviderError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, Callable, Dict, Iterator, Optional, Tuple, Union

CHUNK = 1 << 20


_parsed_modes: Dict[Tuple[type, Any], int] = {}   # valid modes seen (a run has a handful)


def parse_mode(mode: Union[str, int], *, field: str = "mode") -> int:
    """``"644"``, ``"0644"``, ``"0o644"`` and 644-as-YAML-int all mean 0o644."""
    key = (type(mode), mode)   # the type too: True == 1 but is no mode
    try:
        return _parsed_modes[key]
    except (KeyError, TypeError):
        pass
    value = _parse_mode(mode, field)
    if len(_parsed_modes) < 256:
        try:
            _parsed_modes[key] = value
        except TypeError:   # unhashable: not remembered
            pass
    return value


def _parse_mode(mode: Union[str, int], field: str) -> int:
    if isinstance(mode, bool):
        raise ValidationError(f"mode {mode!r} is not a valid octal number", field=field)
    text = str(mode).strip()
    if text[:2] in ("0o", "0O"):
        text = text[2:]
    if not text or any(c not in "01234567" for c in text):
        raise ValidationError(f'mode "{mode}" is not a valid octal number', field=field)
    value = int(text, 8)
    if value > 0o777:
        raise ValidationError(f'mode "{mode}" exceeds maximum value 0777', field=field)
    return value


_mode_texts: Dict[int, str] = {}   # format_mode's answers (st_mode values: at most 2**16)


def format_mode(mode: int) -> str:
    text = _mode_texts.get(mode)
    if text is None:
        text = f"{mode & 0o777:04o}"
        if 0 <= mode < 1 << 16:
            _mode_texts[mode] = text
    return text


def directory_mode(mode: int) -> int:
    """Add the execute bit to each of user/group/other that has read or write."""
    for shift in (6, 3, 0):
        if mode & (0o6 << shift):
            mode |= 0o1 << shift
    return mode


class _IdCache:
    """Successful passwd/group lookups, remembered for one run (thousands of file resources
    share a handful of owners). Misses are not: an earlier resource may create the user.
    ``same_user``/``same_group``: whether an observed and a desired owner (group) name the
    same id, remembered only when both resolved (so only from remembered lookups).

    The manager clears it when a top-level run starts (``clear_id_cache``), so a
    long-running agent sees users and groups changed between runs; a lock keeps
    concurrent workers safe, and ``generation`` (counted up by each clear) keeps an
    answer found before a clear from being stored after it.
    """

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self.generation = 0
        self.uid: Dict[str, int] = {}
        self.gid: Dict[str, int] = {}
        self.user: Dict[int, str] = {}
        self.group: Dict[int, str] = {}
        self.same_user: Dict[Tuple[str, str], bool] = {}
        self.same_group: Dict[Tuple[str, str], bool] = {}
        self._maps: Dict[str, Dict[Any, Any]] = {"uid": self.uid, "gid": self.gid, "user": self.user,
                                                 "group": self.group}

    def lookup(self, cache: Dict[Any, Any], key: Any, find: Callable[[Any], Any]) -> Any:
        cached = cache.get(key)   # one dict read is atomic: no lock (every resource asks)
        if cached is not None:
            return cached
        generation = self.generation
        try:
            value = find(key)
        except KeyError:
            return None
        with self._lock:
            if generation == self.generation:
                cache[key] = value
        return value

    def remember(self, cache: Dict[Any, bool], key: Tuple[Any, ...], value: bool, generation: int) -> None:
        """Store ``value`` unless the cache was cleared since ``generation`` (what the
        answer was found in) was read."""
        with self._lock:
            if generation == self.generation and len(cache) < 4096:   # a run names a handful of pairs
                cache[key] = value

    def clear(self) -> None:
        with self._lock:
            self.generation += 1
            for m in self._maps.values():
                m.clear()
            self.same_user.clear()
            self.same_group.clear()


_ids = _IdCache()
_users, _groups, _same_user, _same_group = _ids.user, _ids.group, _ids.same_user, _ids.same_group
# remembered answers only (None when not yet looked up): a caller on a hot path tries these
# before user_name/group_name/format_mode and saves a call
known_user_name: Callable[[int], Optional[str]] = _users.get
known_uid: Callable[[str], Optional[int]] = _ids.uid.get   # uid_for's remembered answers
known_gid: Callable[[str], Optional[int]] = _ids.gid.get
known_group_name: Callable[[int], Optional[str]] = _groups.get
known_mode_text: Callable[[int], Optional[str]] = _mode_texts.get
known_mode: Callable[[Tuple[type, Any]], Optional[int]] = _parsed_modes.get   # parse_mode's, keyed (type, mode)


def clear_id_cache() -> None:
    """Forget remembered owner/group lookups (start of a run)."""
    _ids.clear()


def _uid_of(name: str) -> int:
    return pwd.getpwnam(name).pw_uid


def _gid_of(name: str) -> int:
    return grp.getgrnam(name).gr_gid


def _user_of(uid: int) -> str:
    return pwd.getpwuid(uid).pw_name


def _group_of(gid: int) -> str:
    return grp.getgrgid(gid).gr_name


def uid_for(owner: str) -> Optional[int]:
    """The uid ``owner`` names (a number is itself), None when there is no such user;
    remembered for the run (``known_uid``)."""
    if (owner.isascii() and owner.isdigit()):
        return _ids.uid.setdefault(owner, int(owner))
    uid: Optional[int] = _ids.lookup(_ids.uid, owner, _uid_of)
    return uid


def gid_for(group: str) -> Optional[int]:
    if (group.isascii() and group.isdigit()):
        return _ids.gid.setdefault(group, int(group))
    gid: Optional[int] = _ids.lookup(_ids.gid, group, _gid_of)
    return gid


def user_name(uid: int) -> str:
    name = _users.get(uid)
    if name is not None:
        return name
    name = _ids.lookup(_users, uid, _user_of)
    return str(uid) if name is None else str(name)


def group_name(gid: int) -> str:
    name = _groups.get(gid)
    if name is not None:
        return name
    name = _ids.lookup(_groups, gid, _group_of)
    return str(gid) if name is None else str(name)


def owner_matches(observed: str, desired: str) -> bool:
    if observed == desired:
        return True
    return _same_id(observed, desired, _same_user, uid_for)


def group_matches(observed: str, desired: str) -> bool:
    if observed == desired:
        return True
    return _same_id(observed, desired, _same_group, gid_for)


def _same_id(observed: str, desired: str, memo: Dict[Tuple[str, str], bool],
             id_for: Callable[[str], Optional[int]]) -> bool:
    """Do two names (or numbers) of users, or of groups, name one id? Remembered in ``memo``."""
    key = (observed, desired)
    same = memo.get(key)
    if same is not None:
        return same
    generation = _ids.generation
    a, b = id_for(observed) if observed else None, id_for(desired) if desired else None
    if a is None or b is None:
        return False
    _ids.remember(memo, key, a == b, generation)
    return a == b


def resolve_ids(owner: str, group: str) -> Tuple[int, int]:
    """Numeric ids for a desired owner and group; a missing one is a run-time failure."""
    uid = uid_for(owner)
    if uid is None:
        raise ProviderError(f'could not lookup user "{owner}": no such user')
    gid = gid_for(group)
    if gid is None:
        raise ProviderError(f'could not lookup group "{group}": no such group')
    return uid, gid


def sha256_file(path: str, *, size: Optional[int] = None, expect: Optional[bytes] = None,
                expect_sha256: str = "") -> str:
    """The sha256 hex digest of the file at ``path``.

    ``size``: its size from a ``stat`` just made (saves an ``fstat``). ``expect`` and
    ``expect_sha256``: bytes the file is expected to hold and their digest (a file
    resource's desired content); while the file's bytes equal them nothing is hashed,
    and a file equal to them returns ``expect_sha256`` as it is.
    """
    found = sha256_unless_equal(path, size, expect if expect_sha256 else None)
    return expect_sha256 if found is None else found


def sha256_unless_equal(path: str, size: Optional[int], expect: Optional[bytes]) -> Optional[str]:
    """None when the file at ``path`` holds exactly ``expect``, else the sha256 hex digest
    of its bytes (``expect`` None: always the digest). ``size``: its size from a ``stat``
    just made (saves an ``fstat``). While the bytes equal ``expect`` nothing is hashed
    (one ``read`` for a file of up to 64 KiB that matches its ``size``)."""
    fd = os.open(path, _O_READ)   # what open(path, "rb") does, unbuffered
    try:
        if size is None:
            size = os.fstat(fd).st_size
        if expect is not None and size == len(expect):
            h = _hash_unless_equal(fd, size, expect)
            if h is None:
                return None
        else:
            h = sha256(size_hint=size)
        while True:
            chunk = os.read(fd, _READ)
            if not chunk:
                break
            h.update(chunk)
    finally:
        os.close(fd)
    return str(h.hexdigest())


_READ = 1 << 16   # below malloc's mmap threshold, unlike CHUNK
_O_READ = os.O_RDONLY | os.O_CLOEXEC


def _hash_unless_equal(fd: int, size: int, expect: bytes) -> Any:
    """None when what ``fd`` holds from here is ``expect``, else a hash of what was read
    so far (to be fed the rest): a large file is compared chunk by chunk, never hashed
    while it matches."""
    view = memoryview(expect)
    done = 0
    while True:
        want = min(size - done + 1, _READ)
        chunk = os.read(fd, want)
        if not chunk:
            return None if done == size else sha256(view[:done], size_hint=size)
        if view[done:done + len(chunk)] != chunk:
            h = sha256(size_hint=size)
            h.update(view[:done])
            h.update(chunk)
            return h
        done += len(chunk)
        if done == size and len(chunk) < want:   # a short read at the stat size: EOF
            return None


@contextmanager
def atomic_replace(path: str, *, mode: int, uid: Optional[int] = None, gid: Optional[int] = None,
                   prefix: Optional[str] = None) -> Iterator[IO[bytes]]:
    """Yield a binary file whose content replaces ``path`` atomically when the block ends.

    An exception in the block (or an OSError while finishing) leaves ``path`` untouched.
    The work is ``ccm.fsafe.atomic_replace`` (descriptor-relative, no symlink followed);
    ``prefix`` is kept for callers and ignored (temp names are ``fsafe.temp_name``).
    """
    from ccm import fsafe

    with fsafe.atomic_replace(path, mode=mode, uid=uid, gid=gid) as out:
        yield out


def remove_file(path: str) -> None:
    """Unlink ``path`` (a symlink itself, never its target); gone already is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ProviderError(f"cannot remove {path}: {exc.strerror or exc}") from None
