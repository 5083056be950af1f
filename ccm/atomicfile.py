"""Replace a small text file atomically: the report files of a run (metrics, last run).

What: ``write_text(path, text)`` writes a temporary file in the target's directory (its
name starts with ``.`` and ends in ``.tmp``, so collectors globbing ``*.prom`` or
``*.json`` never read a partial file), fsyncs it and renames it over ``path``.

Guarantees: readers see the old or the new content, never a mix; a symlink at ``path``
is replaced, not followed; no temporary file is left behind on error.
Not: a durable-directory writer (the directory itself is not fsynced).
"""
from __future__ import annotations

import os
import tempfile


def write_text(path: str, text: str, mode: int = 0o644) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
