"""The file type's fast path on a steady run: a state whose metadata is made when read.

What: ``PosixFileProvider.status`` makes each state of the class ``state_class()`` gives.
By default that is a ``SteadyObservation``: the ``FileObservation`` whose ``extra`` (the
metadata: names, mode text, RFC 3339 mtime and the checksum, which for a file holding the
desired bytes means hashing them) is made on first read. The file logic decides from the
observed fields, so a steady ``ccm apply`` that keeps no status builds no metadata.

``CCM_FILE_STEADY=0`` (read when this module is imported) or ``ENABLED = False`` turns it
off: every state is a plain ``FileObservation``, its metadata made at once.
``tests/resources/file/test_file_runs_equal_the_plain_path.py`` runs a table of file resources both ways and
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
    from typing import Any, Dict, Optional, Type

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


def state_class() -> Type[FileObservation]:
    """What the provider makes its states of: ``SteadyObservation`` while ``ENABLED``, else
    ``FileObservation``."""
    return SteadyObservation if ENABLED else FileObservation
