"""Bounded reads of documents: manifests, data, facts, templates, ``.env``, ``readFile()``.

What: ``read_bytes``/``read_text`` open a path without blocking, refuse anything that is
not a regular file (``/dev/zero``, a FIFO, a device, a directory) and read at most a limit
(``CCM_MAX_DOCUMENT_BYTES``, default 64 MiB), so a hostile path can neither hang ccm nor
grow it to a MemoryError. ``read_stream`` caps a stream (pipe-API stdin) the same way.
Errors are ``ReadError`` (a ``ValidationError``) naming the file and the limit; text that
is not UTF-8 names the byte offset.
"""
from __future__ import annotations

import os
import stat

from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Optional

DEFAULT_LIMIT = 64 << 20
ENV_LIMIT = "CCM_MAX_DOCUMENT_BYTES"
_CHUNK = 1 << 20


class ReadError(ValidationError):
    """A document could not be read: missing, not a regular file, too large, not UTF-8."""


def env_limit(name: str, default: int) -> int:
    """A positive integer from environment variable ``name``, else ``default``."""
    raw = os.environ.get(name, "")
    try:
        value = int(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def document_limit() -> int:
    return env_limit(ENV_LIMIT, DEFAULT_LIMIT)


def _too_large(what: str, path: str, limit: int) -> ReadError:
    return ReadError(f"{what} {path} is larger than the limit of {limit} bytes (set {ENV_LIMIT} to change it)")


def open_regular(path: str, what: str = "file") -> int:
    """A read-only descriptor on ``path`` once it is known to be a regular file."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReadError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ReadError(f"{what} {path} is {kind}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str, what: str = "file", *, limit: Optional[int] = None) -> bytes:
    limit = document_limit() if limit is None else limit
    fd = open_regular(path, what)
    with os.fdopen(fd, "rb") as fh:
        try:
            # a buffer of the file's size, not of the limit (64 MiB per read otherwise)
            want = min(limit, os.fstat(fd).st_size) + 1
            data = fh.read(want)
            if len(data) == want and want <= limit:   # it grew since: read on to the limit
                data += fh.read(limit + 1 - want)
        except OSError as exc:
            raise ReadError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _too_large(what, path, limit)
    return data


def decode(data: bytes, what: str, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(f"{what} {path} is not valid UTF-8 (byte offset {exc.start})") from None


def read_text(path: str, what: str = "file", *, limit: Optional[int] = None) -> str:
    return decode(read_bytes(path, what, limit=limit), what, path)


def read_stream(stream: IO[bytes], what: str, *, limit: Optional[int] = None) -> bytes:
    limit = document_limit() if limit is None else limit
    chunks = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise ReadError(f"{what} is larger than the limit of {limit} bytes (set {ENV_LIMIT} to change it)")
    return b"".join(chunks)
