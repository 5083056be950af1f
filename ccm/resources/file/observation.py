"""What the file provider observed at a path, in the terms the file logic decides from.

``FileObservation`` is the ``ResourceState`` that ``PosixFileProvider.status`` reports:
besides the common fields and the ``metadata`` (made from the observation by
``file_metadata``, in the documented key order), typed fields for what was seen, which
``FileLogic`` decides from with no I/O. They are not serialised, compared or shown. The
file type's fast twin, whose metadata is made only when read, is
``ccm.resources.file.steady.SteadyObservation``.
"""
from __future__ import annotations

from ccm.digest import sha256_hex
from ccm.gocompat.rfc3339 import rfc3339
from ccm.model.events import ResourceState
from ccm.resources.ownership import format_mode, known_mode_text
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from typing import Any, Dict, Optional

PROVIDER = "posix"   # the provider named in the metadata


class FileObservation(ResourceState):
    """One ``status`` of a path.

    ``ensure``: ``present`` (a regular file, or a fifo, socket or device: no checksum),
    ``directory`` or ``absent``. ``stat``: its ``os.stat_result`` (of the staged file during
    a write batch), None when absent. ``owner``/``group``: the names of ``st_uid``/``st_gid``
    (the number as text where there is none), ``""`` when absent.

    ``checksum``: the sha256 of a regular file's bytes; None for anything else and for a
    file whose bytes were compared with the desired ones and are them (``same``: not
    hashed). ``desired_data``/``desired_sum``: the desired bytes and their sha256, as far as
    ``status`` was given them (None and ``""``: the content is not managed). ``uid``/``gid``:
    the ids the desired owner and group name on this host (None: not asked, or no such user
    or group). None of them changes once the state is made.
    """

    stat: Optional[os.stat_result]
    owner: str
    group: str
    checksum: Optional[str]
    same: bool
    desired_data: Optional[bytes]
    desired_sum: str
    uid: Optional[int]
    gid: Optional[int]

    # ResourceState's values of the fields a fresh observation leaves at their defaults
    # (class attributes, not stored: one state per file resource)
    type = "file"
    changed = refreshed = stable = noop = False
    noop_message = ""
    metadata_when_read = False   # SteadyObservation: ``extra`` is made on first read

    def __init__(self, name: str, ensure: str, timestamp_ns: int, stat: Optional[os.stat_result], owner: str,
                 group: str, checksum: Optional[str], same: bool, desired_data: Optional[bytes], desired_sum: str,
                 uid: Optional[int], gid: Optional[int]) -> None:
        self.name = name
        self.ensure = ensure
        self.timestamp_ns = timestamp_ns
        self.internal = {}
        self.stat = stat
        self.owner = owner
        self.group = group
        self.checksum = checksum
        self.same = same
        self.desired_data = desired_data
        self.desired_sum = desired_sum
        self.uid = uid
        self.gid = gid
        if not self.metadata_when_read:
            self.extra = file_metadata(self)

    @property
    def managed(self) -> bool:
        """The content is managed (``status`` was given the desired bytes or their digest)."""
        return self.desired_data is not None or self.desired_sum != ""

    def desired_checksum(self) -> str:
        """The sha256 the content must have (``""``: not managed)."""
        if self.desired_sum or self.desired_data is None:
            return self.desired_sum
        return sha256_hex(self.desired_data)

    def file_checksum(self) -> Optional[str]:
        """The sha256 of the file's bytes (None: not a regular file)."""
        return self.desired_checksum() if self.same else self.checksum

    def holds_desired(self) -> bool:
        """The file holds the desired content (True when its content is not managed)."""
        if self.same or not self.managed:
            return True
        return self.checksum is not None and self.checksum == self.desired_checksum()

    def mode_text(self) -> str:
        """The permission bits as the metadata shows them (``""`` when absent)."""
        if self.stat is None:
            return ""
        mode = self.stat.st_mode
        return known_mode_text(mode) or format_mode(mode)


def file_metadata(observed: FileObservation) -> Dict[str, Any]:
    """A state's ``extra`` from its observation, in the documented key order: name,
    checksum, owner, group, mode, provider, mtime, size, extended (absent: name, provider,
    extended, owner, group, mode, mtime)."""
    st, name = observed.stat, observed.name
    if st is None:
        return {"metadata": {"name": name, "provider": PROVIDER, "extended": {}, "owner": "", "group": "", "mode": "",
                             "mtime": rfc3339(0)}}
    checksum = observed.file_checksum()
    meta: Dict[str, Any]
    if checksum is None:
        meta = {"name": name, "owner": observed.owner, "group": observed.group, "mode": observed.mode_text(),
                "provider": PROVIDER, "mtime": rfc3339(st.st_mtime_ns)}
    else:
        meta = {"name": name, "checksum": checksum, "owner": observed.owner, "group": observed.group,
                "mode": observed.mode_text(), "provider": PROVIDER, "mtime": rfc3339(st.st_mtime_ns)}
    size = st.st_size
    if size:
        meta["size"] = size
    meta["extended"] = {}
    return {"metadata": meta}
