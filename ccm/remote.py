"""Manifest bundles: ``ccm apply https://user:pass@host/bundle.tar.gz``, ``ccm apply
./bundle.tgz``, ``ccm apply ./site/`` and ``file://`` URLs for both.

``open_source(source, checksum=...)`` is the one place a manifest source becomes a path:
http(s) bundles are downloaded, local ``.tar.gz``/``.tgz`` bundles copied, into a private
temp dir, then both go through ``extract_bundle`` (the safe extractor, links refused); a
directory is searched for ``manifest.yaml`` in place; anything else is a manifest file.
``--checksum sha256:HEX`` (``parse_checksum``) is verified on the copy that is then
extracted (no window between checking and reading), and a mismatch refuses the bundle
before anything is extracted. ``bundle_from(download, shown, checksum)`` is how other
transports (the NATS object store) land in the same checks.

What: ``fetch_bundle(url) -> (manifest_path, tmpdir)`` GETs a gzipped tar (basic auth
from the URL's user info, 1 minute overall timeout, status 200), extracts it with
``ccm.safe_extract`` into a new private temp dir ``manifest-*`` (0700; regular files and
directories only, nothing outside the dir) and returns the first ``manifest.yaml``
found (breadth first, then by name). The caller removes the **whole** ``tmpdir`` when
done (upstream removes only the manifest's own directory).

Guarantees: the temp dir is removed on any error; credentials never appear in logs or
errors (``redact_url`` gives ``https://REDACTED@host/...``); errors name a file of a
bundle as the bundle and its member (``name_in_bundle``), never the temp dir.
"""
from __future__ import annotations

import os
import stat

from ccm.model.errors import ManifestError, ValidationError
from ccm.model.value import FrozenValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO, Callable, List, Optional, Tuple

__all__ = ["Checksum", "bundle_from", "extract_bundle", "fetch_bundle", "find_manifest", "name_in_bundle", "open_source",
           "parse_checksum", "redact_url"]

MANIFEST_NAME = "manifest.yaml"
_BUNDLE_SUFFIXES = (".tar.gz", ".tgz")
# A local bundle is copied before it is checked and extracted; bound what a copy may take.
MAX_LOCAL_BUNDLE_BYTES = 1 << 30
_CHUNK = 1 << 20
_ALGORITHMS = {"sha256": 64}


class Checksum(FrozenValueObject):
    """A digest a manifest source must have (``--checksum``): compared and hashed by value."""

    __slots__ = ("algorithm", "hexdigest")
    _value_fields = __slots__

    algorithm: str
    hexdigest: str

    def __init__(self, algorithm: str, hexdigest: str) -> None:
        object.__setattr__(self, "algorithm", algorithm)
        object.__setattr__(self, "hexdigest", hexdigest)

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hexdigest}"


def parse_checksum(text: str) -> Checksum:
    """``sha256:HEX`` (a bare 64-digit HEX is taken as sha256); case-insensitive hex."""
    algorithm, sep, digest = text.strip().partition(":")
    if not sep:
        algorithm, digest = "sha256", algorithm
    algorithm, digest = algorithm.lower(), digest.lower()
    width = _ALGORITHMS.get(algorithm)
    if width is None:
        raise ValidationError(f"invalid checksum {text!r}: unsupported algorithm {algorithm!r} (expected sha256:HEX)")
    if len(digest) != width or any(c not in "0123456789abcdef" for c in digest):
        raise ValidationError(f"invalid checksum {text!r}: expected {algorithm}: and {width} hex digits")
    return Checksum(algorithm, digest)


def redact_url(url: str) -> str:
    """``ccm.httpget.redact_url``, imported only for URLs: local runs never load urllib/ssl."""
    if "://" not in url:
        return url
    from ccm.httpget import redact_url as redact

    return redact(url)


def _copy_hashing(src: BinaryIO, dst: Optional[BinaryIO], limit: int) -> str:
    import hashlib

    h = hashlib.sha256()
    total = 0
    while True:
        chunk = src.read(_CHUNK)
        if not chunk:
            return h.hexdigest()
        total += len(chunk)
        if total > limit:
            raise ManifestError(f"bundle is larger than {limit} bytes")
        h.update(chunk)
        if dst is not None:
            dst.write(chunk)


def verify_checksum(path: str, checksum: Optional[Checksum], shown: str) -> None:
    """Raise ManifestError unless ``path``'s digest is ``checksum`` (None: nothing to check)."""
    if checksum is None:
        return
    with open(path, "rb") as fh:
        got = _copy_hashing(fh, None, 1 << 62)
    if got != checksum.hexdigest:
        raise ManifestError(f"checksum mismatch for {shown}: expected {checksum}, got {checksum.algorithm}:{got}; "
                            "bundle refused, nothing extracted")


def find_manifest(root: str) -> Optional[str]:
    level = [root]
    while level:
        nxt: List[str] = []
        for d in level:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            for n in names:
                p = os.path.join(d, n)
                if n == MANIFEST_NAME and os.path.isfile(p) and not os.path.islink(p):
                    return p
            nxt.extend(os.path.join(d, n) for n in names
                       if os.path.isdir(os.path.join(d, n)) and not os.path.islink(os.path.join(d, n)))
        level = nxt
    return None


def extract_bundle(archive: str, tmpdir: str, shown: str, checksum: Optional[Checksum] = None) -> str:
    """Check ``archive`` (inside the private ``tmpdir``) against ``checksum``, extract it
    into ``tmpdir/bundle`` and return its ``manifest.yaml``. The archive is removed."""
    from ccm import safe_extract

    dest = os.path.join(tmpdir, "bundle")
    try:
        verify_checksum(archive, checksum, shown)
        safe_extract.extract(archive, dest, kind=safe_extract.KIND_TGZ, allow_links=False, dir_mode=0o700)
    except safe_extract.UnsafeArchive as exc:
        raise ManifestError(f"invalid tar file detected in {shown}: {exc}") from None
    except safe_extract.ArchiveError as exc:
        raise ManifestError(f"unzip failed: {shown}: {exc}") from None
    finally:
        os.unlink(archive)
    path = find_manifest(dest)
    if path is None:
        raise ManifestError(f"manifest.yaml not found in archive {shown}")
    return path


def name_in_bundle(text: str, tmpdir: str, shown: str) -> str:
    """``text`` with every path inside the bundle extracted into ``tmpdir`` named as the
    bundle and its member (``site.tgz!/site/manifest.yaml:5:1``): the temp dir is gone by
    the time anyone reads the error."""
    if not tmpdir or tmpdir not in text:
        return text
    root = os.path.join(tmpdir, "bundle")
    return text.replace(root + os.sep, f"{shown}!/").replace(root, f"{shown}!/").replace(tmpdir, shown)


def _private_tmpdir() -> str:
    import tempfile

    tmpdir = tempfile.mkdtemp(prefix="manifest-")
    os.chmod(tmpdir, 0o700)
    return tmpdir


def bundle_from(download: Callable[[BinaryIO], None], shown: str,
                checksum: Optional[Checksum] = None) -> Tuple[str, str]:
    """Any transport: ``download(file)`` writes a gzipped tar into a new private temp dir,
    which is then checked against ``checksum`` and extracted -> (manifest, tmpdir)."""
    tmpdir = _private_tmpdir()
    try:
        archive = os.path.join(tmpdir, "bundle.tar.gz")
        with open(archive, "wb") as out:
            download(out)
        return extract_bundle(archive, tmpdir, shown, checksum), tmpdir
    except BaseException:
        import shutil

        shutil.rmtree(tmpdir, ignore_errors=True)
        raise


def fetch_bundle(url: str, *, timeout: Optional[float] = None,
                 checksum: Optional[Checksum] = None) -> Tuple[str, str]:
    from ccm.httpget import DEFAULT_TIMEOUT, HTTPGetError, get, reason_of

    shown = redact_url(url)

    def download(out: BinaryIO) -> None:
        try:
            get(url, out, timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
        except HTTPGetError as exc:
            raise ManifestError(f"failed to fetch manifest from URL {shown}: {reason_of(exc, shown)}") from None

    return bundle_from(download, shown, checksum)


def local_bundle(path: str, shown: str, checksum: Optional[Checksum] = None) -> Tuple[str, str]:
    """A local ``.tar.gz``/``.tgz``: copied (hashing as it goes) into a private temp dir,
    then checked and extracted like a downloaded one."""
    tmpdir = _private_tmpdir()
    try:
        archive = os.path.join(tmpdir, "bundle.tar.gz")
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise ManifestError(f"cannot read bundle {shown}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as src:
            if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
                raise ManifestError(f"cannot read bundle {shown}: not a regular file")
            with open(archive, "wb") as out:
                try:
                    _copy_hashing(src, out, MAX_LOCAL_BUNDLE_BYTES)
                except OSError as exc:
                    raise ManifestError(f"cannot read bundle {shown}: {exc.strerror or exc}") from None
        return extract_bundle(archive, tmpdir, shown, checksum), tmpdir
    except BaseException:
        import shutil

        shutil.rmtree(tmpdir, ignore_errors=True)
        raise


def _is_gzip(path: str) -> bool:
    """A gzip file whatever its name (a bundle saved as ``site.bundle``)."""
    # Sniff regular files only, through a non-blocking descriptor: a FIFO or a device given
    # as a manifest must reach the reader's "not a regular file" error, not block here.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 2) == b"\x1f\x8b"
    except OSError:
        return False
    finally:
        os.close(fd)


def _file_url_path(url: str) -> str:
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ManifestError(f"unsupported file URL {url}: only local files (file:///path)")
    path = urllib.parse.unquote(parts.path)
    if not path:
        raise ManifestError(f"unsupported file URL {url}: no path")
    return path


def open_source(source: str, *, base_dir: str, checksum: Optional[Checksum] = None) -> Tuple[str, str, Optional[str]]:
    """A manifest source -> (manifest path, source as shown to users, temp dir to remove).

    http(s):// and local/``file://`` ``.tar.gz``/``.tgz`` bundles are extracted into a
    new private temp dir; a directory (or ``file://`` to one) gives its top-level
    ``manifest.yaml``; anything else is a manifest file, relative to ``base_dir``.
    ``checksum`` applies to the bundle or manifest file; a directory cannot be checked.
    """
    scheme = source.split("://", 1)[0].lower() if "://" in source else ""
    if scheme in ("http", "https"):
        path, tmpdir = fetch_bundle(source, checksum=checksum)
        return path, redact_url(source), tmpdir
    if scheme == "file":
        local = _file_url_path(source)
    elif scheme:
        raise ManifestError(f"unsupported manifest source: {redact_url(source)}")
    else:
        local = source
    if not os.path.isabs(local):
        local = os.path.join(base_dir, local)
    local = os.path.abspath(local)
    if os.path.isdir(local):
        if checksum is not None:
            raise ManifestError(f"--checksum needs a bundle file, {source} is a directory")
        found = os.path.join(local, MANIFEST_NAME)  # the top level only: never walk a tree like /
        if not os.path.isfile(found):
            raise ManifestError(f"{MANIFEST_NAME} not found in directory {source}")
        return found, source, None
    if local.lower().endswith(_BUNDLE_SUFFIXES) or _is_gzip(local):
        path, tmpdir = local_bundle(local, source, checksum)
        return path, source, tmpdir
    if checksum is not None and os.path.isfile(local):  # a FIFO or device: the reader refuses it
        verify_checksum(local, checksum, source)
    return local, source, None
