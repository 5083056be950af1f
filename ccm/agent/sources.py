"""Where a worker's manifest comes from: a local file, an http(s) tarball, an object.

What: every source implements ``ManifestSource``: ``check()`` returns a new
``Candidate`` when the source changed (``None`` when not), ``commit(candidate)`` makes a
validated candidate the current bundle, ``discard(candidate)`` throws a rejected one
away. The worker validates in between, so a bundle that does not resolve never
replaces the last good one.

* ``LocalSource``: the file itself; a change of its inode, size or mtime is a new
  candidate (the file is re-read on every apply anyway).
* ``HTTPSource``: conditional GET (``If-None-Match``/``If-Modified-Since``); a 304
  downloads nothing. Without either validator the body's SHA-256 decides.
* ``ObjectSource``: ``obj://BUCKET/KEY`` through an ``ObjectStore`` (the NATS layer);
  a deleted object raises ``SourceGone``.

Bundles are extracted under ``cache_dir`` into ``<prefix>-<clean>.<random>`` and
swapped to ``<prefix>_<clean>`` on commit (old one removed). Extraction keeps regular
files and directories only, nothing outside the directory (``ccm.safe_extract``).
Bundles hold Hiera data and templates: every bundle directory is 0700, and so is
``cache_dir`` when the agent creates it; a ``cache_dir`` another user owns or may write
is refused (``prepare_cache_dir``).
Not: the validation itself, nor any scheduling.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, IO, Optional, Tuple

MAX_BUNDLE_BYTES = 256 << 20


class SourceError(CCMError):
    """A check or download failed; the last good bundle stays current."""


class SourceGone(SourceError):
    """The source was deleted (object store): the worker stops with this reason."""


class SourceUnavailable(SourceError):
    """This build cannot reach the source at all (e.g. obj:// without the NATS layer)."""


@dataclass
class Candidate:
    manifest_path: str
    directory: Optional[str] = None    # extraction dir (remote bundles), swapped on commit
    revision: str = ""


class ManifestSource(Protocol):
    kind: str
    shown: str                     # for logs/status: credentials redacted
    check_interval: float
    fetches: int                   # remote fetches made (the fetch metric); a local file has none

    @property
    def manifest_path(self) -> Optional[str]: ...   # current good manifest, None until the first commit

    def check(self) -> Optional[Candidate]: ...
    def commit(self, candidate: Candidate) -> None: ...
    def discard(self, candidate: Candidate) -> None: ...


class ObjectStore(Protocol):
    """The object-store operations the agent needs (implemented over ``ccm.nats``)."""

    def digest(self, bucket: str, key: str) -> Optional[str]: ...   # None: missing or deleted
    def download(self, bucket: str, key: str, out: IO[bytes]) -> None: ...


def clean_name(text: str) -> str:
    """``h:8443/m/web.tar.gz`` -> ``h_8443_m_web`` (also used for object keys)."""
    text = re.sub(r"(\.tar\.gz|\.tgz)$", "", text)
    return re.sub(r"[^A-Za-z0-9._-]", "_", text).strip(".") or "_"


class _Bounded:
    def __init__(self, fh: IO[bytes], limit: int, sha: Any):
        self.fh, self.limit, self.size, self.sha = fh, limit, 0, sha

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise SourceError(f"bundle larger than {self.limit} bytes")
        self.sha.update(data)
        return self.fh.write(data)

    def seek(self, pos: int, whence: int = 0) -> int:   # a retried download starts over
        if pos == 0 and whence == 0:
            self.size, self.sha = 0, hashlib.sha256()
        return self.fh.seek(pos, whence)

    def truncate(self, size: Optional[int] = None) -> int:
        return self.fh.truncate(size)

    def flush(self) -> None:
        self.fh.flush()


class LocalSource:
    kind = "local"
    fetches = 0

    def __init__(self, path: str, check_interval: float):
        self.path = os.path.abspath(path)
        self.shown = self.path
        self._manifest_path: Optional[str] = None
        self.check_interval = check_interval
        self._seen: Optional[Tuple[int, int, int, int]] = None

    def check(self) -> Optional[Candidate]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise SourceError(f"manifest {self.path} does not exist") from None
        except OSError as exc:
            raise SourceError(f"cannot read manifest {self.path}: {exc.strerror or exc}") from None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if stamp == self._seen:
            return None
        self._seen = stamp
        return Candidate(manifest_path=self.path)

    @property
    def manifest_path(self) -> Optional[str]:
        return self._manifest_path

    def commit(self, candidate: Candidate) -> None:
        self._manifest_path = candidate.manifest_path

    def discard(self, candidate: Candidate) -> None:
        pass


def prepare_cache_dir(path: str) -> None:
    """Create ``cache_dir`` 0700 when missing; refuse one that is not ours alone to write
    (another user could swap a bundle between its validation and its apply)."""
    import stat

    try:
        os.makedirs(path, mode=0o700)
        os.chmod(path, 0o700)   # whatever the umask
    except FileExistsError:
        pass
    except OSError as exc:
        raise CCMError(f"cannot create cache_dir {path}: {exc.strerror or exc}") from None
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise CCMError(f"cache_dir {path} is not a directory")
    if st.st_uid != os.geteuid():
        raise CCMError(f"cache_dir {path} is owned by uid {st.st_uid}, not by the agent's user (uid {os.geteuid()})")
    if st.st_mode & 0o022:
        raise CCMError(f"cache_dir {path} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}): "
                       "make it 0700 or use another directory")


class _BundleCache:
    """Extraction and swap of tarball bundles under the cache directory."""

    def __init__(self, cache_dir: str, prefix: str, clean: str, shown: str):
        self.cache_dir = cache_dir
        self.final = os.path.join(cache_dir, f"{prefix}_{clean}")
        self.temp_prefix = f"{prefix}-{clean}."
        self.shown = shown
        self.manifest_path: Optional[str] = None

    def download(self, fetch: Callable[[Any], Any]) -> Tuple[str, str]:
        """Run ``fetch(out)`` into a temp file; -> (archive path, sha256)."""
        os.makedirs(self.cache_dir, mode=0o700, exist_ok=True)
        fd, archive = tempfile.mkstemp(dir=self.cache_dir, prefix=self.temp_prefix, suffix=".tar.gz")
        try:
            with os.fdopen(fd, "w+b") as fh:
                out = _Bounded(fh, MAX_BUNDLE_BYTES, hashlib.sha256())
                fetch(out)
        except BaseException:
            os.unlink(archive)
            raise
        return archive, out.sha.hexdigest()

    def extract(self, archive: str, revision: str) -> Candidate:
        from ccm import safe_extract
        from ccm.remote import find_manifest

        try:
            dest = tempfile.mkdtemp(dir=self.cache_dir, prefix=self.temp_prefix)
            try:
                os.chmod(dest, 0o700)
                safe_extract.extract(archive, os.path.join(dest, "bundle"), kind=safe_extract.KIND_TGZ,
                                     allow_links=False, dir_mode=0o755)
            except safe_extract.UnsafeArchive as exc:
                shutil.rmtree(dest, ignore_errors=True)
                raise SourceError(f"invalid tar file detected in {self.shown}: {exc}") from None
            except (safe_extract.ArchiveError, OSError) as exc:
                shutil.rmtree(dest, ignore_errors=True)
                raise SourceError(f"could not extract {self.shown}: {exc}") from None
        finally:
            os.unlink(archive)
        path = find_manifest(os.path.join(dest, "bundle"))
        if path is None:
            shutil.rmtree(dest, ignore_errors=True)
            raise SourceError(f"manifest.yaml not found in archive {self.shown}")
        return Candidate(manifest_path=path, directory=dest, revision=revision)

    def commit(self, candidate: Candidate) -> None:
        assert candidate.directory is not None
        rel = os.path.relpath(candidate.manifest_path, candidate.directory)
        old = None
        if os.path.lexists(self.final):
            old = tempfile.mkdtemp(dir=self.cache_dir, prefix=self.temp_prefix + "old.")
            os.rename(self.final, os.path.join(old, "x"))
        os.rename(candidate.directory, self.final)   # mkdtemp made it 0700: it stays so
        if old:
            shutil.rmtree(old, ignore_errors=True)
        self.manifest_path = os.path.join(self.final, rel)

    def discard(self, candidate: Candidate) -> None:
        if candidate.directory:
            shutil.rmtree(candidate.directory, ignore_errors=True)


class _RemoteSource:
    """What http(s) and object-store sources share: the bundle cache and the swap."""

    _cache: _BundleCache
    fetches = 0

    @property
    def manifest_path(self) -> Optional[str]:
        return self._cache.manifest_path

    def commit(self, candidate: Candidate) -> None:
        self._cache.commit(candidate)

    def discard(self, candidate: Candidate) -> None:
        self._cache.discard(candidate)
        self._forget()   # a rejected bundle is fetched again next check

    def _forget(self) -> None:
        raise NotImplementedError


class HTTPSource(_RemoteSource):
    kind = "http"

    def __init__(self, url: str, cache_dir: str, check_interval: float, timeout: float = 60.0):
        from ccm.httpget import redact_url

        self.url = url
        self.shown = redact_url(url)
        parts = urllib.parse.urlsplit(url)
        self._cache = _BundleCache(cache_dir, "http", clean_name((parts.hostname or "") +
                                   (f":{parts.port}" if parts.port else "") + parts.path), self.shown)
        self.check_interval = check_interval
        self.timeout = timeout
        self.etag = ""
        self.last_modified = ""
        self.sha = ""

    def check(self) -> Optional[Candidate]:
        from ccm.httpget import HTTPGetError, NotModified, get

        headers: Dict[str, str] = {}
        if self._cache.manifest_path is not None:
            if self.etag:
                headers["If-None-Match"] = self.etag
            if self.last_modified:
                headers["If-Modified-Since"] = self.last_modified
        got: Dict[str, str] = {}
        try:
            archive, sha = self._cache.download(
                lambda out: get(self.url, out, headers=headers, timeout=self.timeout, response_headers=got))
        except NotModified:
            return None
        except HTTPGetError as exc:
            raise SourceError(f"could not fetch {self.shown}: {exc}") from None
        self.fetches += 1
        self.etag, self.last_modified = got.get("etag", ""), got.get("last-modified", "")
        if self._cache.manifest_path is not None and sha == self.sha:
            os.unlink(archive)   # no validators, same body: unchanged
            return None
        self.sha = sha
        return self._cache.extract(archive, self.etag or self.last_modified or sha[:12])

    def _forget(self) -> None:
        self.etag = self.last_modified = self.sha = ""


class ObjectSource(_RemoteSource):
    kind = "obj"

    def __init__(self, source: str, cache_dir: str, check_interval: float, store: Callable[[], ObjectStore]):
        self.shown = source
        bucket, _, key = source[len("obj://"):].partition("/")
        self.bucket, self.key = bucket, key
        self._cache = _BundleCache(cache_dir, clean_name(bucket), clean_name(key), source)
        self.check_interval = check_interval
        self._store_factory = store
        self._store: Optional[ObjectStore] = None
        self.digest = ""

    def check(self) -> Optional[Candidate]:
        if self._store is None:
            self._store = self._store_factory()
        store = self._store
        try:
            digest = store.digest(self.bucket, self.key)
        except SourceError:
            raise
        except CCMError as exc:
            raise SourceError(f"could not check {self.shown}: {exc}") from None
        if digest is None:
            if self.manifest_path is not None:
                raise SourceGone("file deleted from bucket")
            raise SourceError(f"object {self.key} not found in bucket {self.bucket}")
        if digest == self.digest:
            return None
        try:
            archive, _sha = self._cache.download(lambda out: store.download(self.bucket, self.key, out))
        except SourceError:
            raise
        except CCMError as exc:
            raise SourceError(f"could not fetch {self.shown}: {exc}") from None
        self.fetches += 1
        self.digest = digest
        return self._cache.extract(archive, digest)

    def _forget(self) -> None:
        self.digest = ""


def make_source(source: str, *, cache_dir: str, check_interval: float, local_interval: float,
                object_store: Callable[[], ObjectStore]) -> ManifestSource:
    from ccm.agent.config import scheme_of

    scheme = scheme_of(source)
    if scheme in ("http", "https"):
        return HTTPSource(source, cache_dir, check_interval)
    if scheme == "obj":
        return ObjectSource(source, cache_dir, check_interval, object_store)
    if scheme:
        raise SourceError(f"unsupported manifest source: {source}")
    return LocalSource(source, local_interval)
