"""The file type's fast path on a steady run: a state whose metadata is made when read.

What: ``PosixFileProvider.status`` makes each state with ``state_maker()``. By default that
is ``observed``, which makes a ``SteadyObservation`` without an ``__init__`` call (a
keyword-free constructor of twelve fields costs a steady file more than its decision): the
``FileObservation`` whose ``extra`` (the metadata: names, mode text, RFC 3339 mtime and the
checksum, which for a file holding the desired bytes means hashing them) is made on first
read. The file logic decides from the observed fields, so a steady ``ccm apply`` that
keeps no status builds no metadata.

``CCM_FILE_STEADY=0`` (read when this module is imported) or ``ENABLED = False`` turns it
off: every state is a plain ``FileObservation`` made by its ``__init__``, its metadata at
once.
``tests/resources/file/test_steady_twin.py`` runs a table of file resources both ways and
compares the events, summaries, log lines and files.

Guarantees: a ``SteadyObservation`` serialises, shows and compares field by field as the
``FileObservation`` of the same facts; its metadata is made once (two threads reading at
once get the same object) and from then on is an ordinary attribute.
"""
from __future__ import annotations

import os

from ccm.resources.file.observation import FileObservation, file_metadata
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

ENABLED = os.environ.get("CCM_FILE_STEADY", "").strip() != "0"


class SteadyObservation(FileObservation):
    metadata_when_read = True

    @property   # ResourceState's attribute, made on first read
    def extra(self) -> Dict[str, Any]:
        made: Optional[Dict[str, Any]] = self.__dict__.get("_made")
        if made is None:   # setdefault: two threads reading at once keep the first one made
            made = self.__dict__.setdefault("_made", file_metadata(self))
        return made

    @extra.setter
    def extra(self, value: Dict[str, Any]) -> None:
        self.__dict__["_made"] = value


_new_object = object.__new__


def observed(name: str, ensure: str, timestamp_ns: int, stat: Optional[os.stat_result], owner: str, group: str,
             checksum: Optional[str], same: bool, desired_data: Optional[bytes], desired_sum: str,
             uid: Optional[int], gid: Optional[int]) -> FileObservation:
    """``SteadyObservation(...)``: what ``FileObservation.__init__`` stores, but no metadata."""
    state: SteadyObservation = _new_object(SteadyObservation)
    state.name = name
    state.ensure = ensure
    state.timestamp_ns = timestamp_ns
    state.internal = {}
    state.stat = stat
    state.owner = owner
    state.group = group
    state.checksum = checksum
    state.same = same
    state.desired_data = desired_data
    state.desired_sum = desired_sum
    state.uid = uid
    state.gid = gid
    return state


def state_maker() -> Callable[..., FileObservation]:
    """How the provider makes a state: ``observed`` while ``ENABLED``, else ``FileObservation``."""
    return observed if ENABLED else FileObservation
