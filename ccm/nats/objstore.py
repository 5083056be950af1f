"""Manifest bundles from a JetStream object store: ``ccm apply obj://BUCKET/KEY``.

``fetch_bundle(conn, source)`` downloads the object (the library verifies its SHA-256
digest), extracts it with the safe extractor and returns ``(manifest path, tmpdir)``;
the caller removes tmpdir. Missing bucket or object, a digest mismatch and an object
larger than ``MAX_OBJECT`` are clear ``ManifestError``s.
"""
from __future__ import annotations

import base64
import hashlib

from ccm.model.errors import ManifestError
from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, Tuple

GET_TIMEOUT = 60.0
CHUNK_IDLE = 3.0
MAX_OBJECT = 512 << 20


def parse(source: str) -> Tuple[str, str]:
    rest = source[len("obj://"):] if source.lower().startswith("obj://") else source
    bucket, _, key = rest.partition("/")
    if not bucket or not key:
        raise ManifestError(f"invalid object store source {source}: expected obj://BUCKET/KEY")
    return bucket, key


def download(conn: Connection, bucket: str, key: str, out: IO[bytes]) -> None:
    async def op(js: Any) -> str:
        import nats.js.errors as je

        try:
            store = await js.object_store(bucket)
        except (je.BucketNotFoundError, je.NotFoundError):
            return "nobucket"
        try:
            info = await store.get_info(key)
        except je.ObjectNotFoundError:
            return "noobject"
        if (info.size or 0) > MAX_OBJECT:
            return "toolarge"
        if info.options is not None and info.options.link is not None:
            return "link"
        out.seek(0)
        out.truncate()
        if not info.size:
            return "ok"
        # Chunks through an ordered consumer, each wait bounded (the library's own get
        # waits forever when the stream leader dies mid-download).
        sub = await js.subscribe(f"$O.{bucket}.C.{info.nuid}", stream=f"OBJ_{bucket}", ordered_consumer=True)
        digest = hashlib.sha256()
        size = 0
        try:
            while True:
                msg = await sub.next_msg(timeout=CHUNK_IDLE)
                size += len(msg.data)
                if size > MAX_OBJECT:
                    return "toolarge"
                digest.update(msg.data)
                out.write(msg.data)
                if msg.metadata.num_pending == 0:
                    break
        finally:
            try:
                await sub.unsubscribe()
            except Exception:
                pass
        expected = (info.digest or "").split("=", 1)[-1]
        try:
            if base64.urlsafe_b64decode(expected + "=" * (-len(expected) % 4)) != digest.digest():
                return "digest"
        except ValueError:
            return "digest"
        out.flush()
        return "ok"

    source = f"obj://{bucket}/{key}"
    try:
        state = conn.jetstream(op, f"could not get {source}", attempt_timeout=GET_TIMEOUT)
    except NatsError as exc:
        raise ManifestError(str(exc)) from None
    reasons = {"nobucket": f"object store bucket {bucket!r} not found", "noobject": f"object {key!r} not found",
               "toolarge": f"object is larger than {MAX_OBJECT} bytes", "link": "object links are not supported",
               "digest": "digest mismatch"}
    if state in reasons:
        raise ManifestError(f"could not get {source}: {reasons[state]}")


def fetch_bundle(conn: Connection, source: str, checksum: Any = None) -> Tuple[str, str]:
    """``checksum``: a ``ccm.remote.Checksum`` the object must match before extraction."""
    from ccm.remote import bundle_from

    bucket, key = parse(source)
    return bundle_from(lambda out: download(conn, bucket, key, out), f"obj://{bucket}/{key}", checksum)
