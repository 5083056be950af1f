"""Acting on what was checked: descriptor-based file system primitives for root on shared hosts.

What: the file, archive and scaffold providers change files through these functions only.
A path is reached by opening each directory with ``O_NOFOLLOW | O_DIRECTORY`` relative to
the one before (``dir_fd``); a symlink on the way is followed only when it belongs to root
or to us (another user's symlink is refused, whatever ``fs.protected_symlinks`` says). The
last component is created, opened with ``O_NOFOLLOW`` and changed through the descriptor
(``fchown``, ``fchmod``, ``fstat``), so a symlink swapped in between a check and a change
makes the operation fail instead of changing the symlink's target.

Temp files are named ``.<name>.ccm-<hex>.tmp``; ``sweep_stale`` removes ours (that prefix,
owned by us, older than this process) the first time a run touches a directory, so
leftovers of a ``kill -9`` do not pile up.

``DurableBatch`` is ``atomic_replace`` split in three for many files at once: ``stage``
writes, chowns and chmods a temp file (the target is untouched); ``sync`` makes every
staged temp file durable in one pass (one ``syncfs`` per file system where Linux reports
its errors, else an ``fsync`` per file); ``install`` renames one over its target; ``close``
fsyncs the directories renamed into. Directory descriptors are opened once per parent and
batch. Renaming only what ``sync`` made durable keeps the guarantee of a single write: a
killed or powered-off host sees each target with its old or its new content, never a
partial one, and a temp file left by a kill is swept by the next run.

``DirectWrites`` (``DIRECT``) is the write sink of a run that batches nothing: every write
an ``atomic_replace`` of its own.
"""
from __future__ import annotations

from ccm.fsafe.paths import (RUN_START, atomic_replace, ensure_directory, open_dir, open_temp, parent_of, remove,
                             set_attributes, sweep_stale, temp_name)
from ccm.fsafe.writes import _SYNCFS_MIN, DIRECT, DirectWrites, DurableBatch, StagedWrite

__all__ = ["DIRECT", "RUN_START", "DirectWrites", "DurableBatch", "StagedWrite", "_SYNCFS_MIN", "atomic_replace",
           "ensure_directory", "open_dir", "open_temp", "parent_of", "remove", "set_attributes", "sweep_stale",
           "temp_name"]
