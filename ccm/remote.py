"""Remote manifest bundles: ``ccm apply https://user:pass@host/bundle.tar.gz``.

What: ``fetch_bundle(url) -> (manifest_path, tmpdir)`` GETs a gzipped tar (basic auth
from the URL's user info, 1 minute overall timeout, status 200), extracts it with
``ccm.safe_extract`` into a new private temp dir ``manifest-*`` (0700; regular files and
directories only, nothing outside the dir) and returns the first ``manifest.yaml``
found (breadth first, then by name). The caller removes the **whole** ``tmpdir`` when
done (upstream removes only the manifest's own directory).

Guarantees: the temp dir is removed on any error; credentials never appear in logs or
errors (``redact_url`` gives ``https://REDACTED@host/...``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import BinaryIO, Callable, List, Optional, Tuple

from ccm.httpget import DEFAULT_TIMEOUT, HTTPGetError, get, redact_url
from ccm.model.errors import ManifestError

__all__ = ["bundle_from", "fetch_bundle", "find_manifest", "redact_url"]

MANIFEST_NAME = "manifest.yaml"


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


def fetch_bundle(url: str, *, timeout: float = DEFAULT_TIMEOUT) -> Tuple[str, str]:
    shown = redact_url(url)

    def download(out: BinaryIO) -> None:
        try:
            get(url, out, timeout=timeout)
        except HTTPGetError as exc:
            raise ManifestError(f"could not fetch manifest {shown}: {exc}") from None

    return bundle_from(download, shown)


def bundle_from(download: Callable[[BinaryIO], None], shown: str) -> Tuple[str, str]:
    """Write a gzipped tar with ``download(file)``, extract it safely -> (manifest, tmpdir)."""
    from ccm import safe_extract

    tmpdir = tempfile.mkdtemp(prefix="manifest-")
    try:
        os.chmod(tmpdir, 0o700)
        archive = os.path.join(tmpdir, "bundle.tar.gz")
        with open(archive, "wb") as out:
            download(out)
        dest = os.path.join(tmpdir, "bundle")
        try:
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
        return path, tmpdir
    except BaseException:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise
