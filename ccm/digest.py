"""sha256 without loading OpenSSL for small inputs.

``hashlib`` loads OpenSSL's libcrypto when it is imported, ~4 ms of every run that
hashes anything. CPython's builtin sha256 (``_sha256`` up to 3.11, ``_sha2`` from 3.12)
gives the same digests and is as fast for a few KiB; it is slower on large inputs, so
``sha256(size_hint=...)`` takes ``hashlib`` (OpenSSL) for anything from ``LARGE`` bytes.
"""
from __future__ import annotations

import importlib

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, List

LARGE = 256 * 1024
_builtin: List[Any] = []   # [the builtin sha256 constructor or None], once looked up


def _small_sha256() -> Any:
    if not _builtin:
        found = None
        for name in ("_sha256", "_sha2"):  # CPython <= 3.11, 3.12+
            try:
                found = importlib.import_module(name).sha256
            except ImportError:
                continue
            if found is not None:
                break
        _builtin.append(found)
    return _builtin[0]


def sha256(data: bytes = b"", *, size_hint: int = 0) -> Any:
    """A ``hashlib.sha256``-compatible hash object (``update``, ``hexdigest``) over
    ``data``; ``size_hint``: how many bytes will be fed in all (0 = just ``data``)."""
    if max(size_hint, len(data)) < LARGE:
        small = _small_sha256()
        if small is not None:
            return small(data)
    import hashlib

    return hashlib.sha256(data)


def sha256_hex(data: bytes) -> str:
    small = _builtin[0] if _builtin else _small_sha256()   # sha256(data) without its general steps
    if small is not None and len(data) < LARGE:
        text: str = small(data).hexdigest()
        return text
    return str(sha256(data).hexdigest())
