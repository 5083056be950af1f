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

from ccm.safe_extract.members import (DEFAULT_LIMITS, KIND_TAR, KIND_TGZ, KIND_ZIP, ArchiveError, Limits, Member,
                                      UnsafeArchive, archive_kind, effective_members, validate_members)
from ccm.safe_extract.writer import extract, is_within, list_members

__all__ = ["DEFAULT_LIMITS", "KIND_TAR", "KIND_TGZ", "KIND_ZIP", "ArchiveError", "Limits", "Member", "UnsafeArchive",
           "archive_kind", "effective_members", "extract", "is_within", "list_members", "validate_members"]
