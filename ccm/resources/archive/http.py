"""http provider for the archive type: the only archive code that touches disk or network.

Guarantees: the body is streamed into a temp file next to the archive (``<url base
name>-<random>``), its SHA-256 checked against ``checksum`` **before** it is renamed
into place (a mismatch removes the temp file and leaves any existing archive untouched),
fsynced, chowned and chmodded (0644, not upstream's 0600), then renamed over the target.
Extraction uses ``ccm.safe_extract`` (standard library, no ``tar``/``unzip``), refuses
unsafe archives before writing anything and chowns what it extracts to the archive's
owner/group. Credentials never appear in logs or errors.
"""
from __future__ import annotations

import hashlib
import os
import urllib.parse

from ccm.clock import now_ns
from ccm.model.errors import ProviderError
from ccm.gocompat.rfc3339 import rfc3339
from ccm.model.events import ResourceState
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.resource import Properties
from ccm.resources.ownership import atomic_replace, group_name, resolve_ids, sha256_file, user_name
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, IO, Mapping, Optional

ARCHIVE_MODE = 0o644
EXTRACT_DIR_MODE = 0o755




class _HashingWriter:
    def __init__(self, fh: IO[bytes]):
        self.fh = fh
        self.sha = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        return self.fh.write(data)


class HttpArchiveProvider:
    name = "http"

    def __init__(self, runner: Any = None, log: Any = None, *, timeout: float = 60.0):
        self.log = log
        self.timeout = timeout

    def status(self, path: str, creates: Optional[str] = None) -> ResourceState:
        meta: Dict[str, Any] = {"name": path}
        state = ResourceState(type="archive", name=path, ensure="absent", extra={"metadata": meta}, timestamp_ns=now_ns())
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise ProviderError(f"cannot stat {path}: {exc.strerror or exc}") from None
        if st is not None:
            state.ensure = "present"
            try:
                meta["checksum"] = sha256_file(path)
            except OSError as exc:
                raise ProviderError(f"cannot read {path}: {exc.strerror or exc}") from None
            meta["archive_exists"] = True
        if creates and os.path.lexists(creates):
            meta["creates_exists"] = True
        meta["owner"] = user_name(st.st_uid) if st else ""
        meta["group"] = group_name(st.st_gid) if st else ""
        meta["mtime"] = rfc3339(st.st_mtime_ns if st else 0)
        if st is not None and st.st_size:
            meta["size"] = st.st_size
        meta["provider"] = self.name
        return state

    def download(self, path: str, url: str, *, checksum: Optional[str], username: str, password: str,
                 headers: Mapping[str, str], owner: str, group: str) -> int:
        from ccm import httpget

        uid, gid = resolve_ids(owner, group)
        parent = os.path.dirname(path) or "/"
        if not os.path.isdir(parent):
            raise ProviderError(f'download failed: "{parent}" is not a directory')
        from ccm.redact import split_userinfo

        base = os.path.basename(urllib.parse.urlsplit(split_userinfo(url)[0]).path) or "archive"
        try:
            with atomic_replace(path, mode=ARCHIVE_MODE, uid=uid, gid=gid, prefix=f"{base}-") as out:
                writer = _HashingWriter(out)
                try:
                    size = httpget.get(url, writer, username=username, password=password,
                                       headers=headers, timeout=self.timeout)
                except httpget.HTTPGetError as exc:
                    raise ProviderError(f"download failed: {exc}") from None
                got = writer.sha.hexdigest()
                if checksum and got != checksum.lower():
                    raise ProviderError(f'download failed: checksum mismatch, expected "{checksum}" got "{got}"')
        except OSError as exc:
            raise ProviderError(f"download failed: cannot write {path}: {exc.strerror or exc}") from None
        _fsync_dir(parent)
        if self.log is not None:
            self.log.info("Archive downloaded", bytes=size)
        return size

    def extract(self, path: str, parent: str, *, owner: str, group: str,
                limits: Optional[Mapping[str, int]] = None) -> None:
        from ccm import safe_extract

        uid, gid = resolve_ids(owner, group)
        bounds = safe_extract.Limits(**dict(limits or {}))
        try:
            safe_extract.extract(path, parent, uid=uid, gid=gid, dir_mode=EXTRACT_DIR_MODE, limits=bounds)
        except safe_extract.UnsafeArchive as exc:
            raise ProviderError(f"refusing to extract {path}: {exc}") from None
        except safe_extract.ArchiveError as exc:
            raise ProviderError(f"extract failed: {exc}") from None

    def remove(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ProviderError(f"cannot remove {path}: {exc.strerror or exc}") from None

    def set_ownership(self, path: str, owner: str, group: str) -> None:
        from ccm import fsafe

        uid, gid = resolve_ids(owner, group)
        try:
            fsafe.set_attributes(path, uid, gid, None)
        except OSError as exc:
            raise ProviderError(f"cannot chown {path}: {exc.strerror or exc}") from None


def _fsync_dir(path: str) -> None:
    try:
        dfd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


class HttpFactory(ProviderFactory):
    type_name = "archive"
    name = "http"

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        # Extraction is done in-process, so no tar/unzip is needed (unlike upstream).
        scheme = urllib.parse.urlsplit(props.get("url") or "").scheme.lower()
        return Manageable(scheme in ("http", "https"), 1)

    def new(self, runner: Any, log: Any) -> HttpArchiveProvider:
        return HttpArchiveProvider(runner, log)
