"""Manifest bundles from a JetStream object store: ``ccm apply obj://BUCKET/KEY``.

``fetch_bundle(conn, source)`` downloads the object (the library verifies its SHA-256
digest), extracts it with the safe extractor and returns ``(manifest path, tmpdir)``;
the caller removes tmpdir. Missing bucket or object, a digest mismatch and an object
larger than ``MAX_OBJECT`` are clear ``ManifestError``s.
"""
from __future__ import annotations

from typing import Any, BinaryIO, Tuple

from ccm.model.errors import ManifestError
from ccm.nats import NatsError
from ccm.nats.connection import Connection

GET_TIMEOUT = 60.0
MAX_OBJECT = 512 << 20


def parse(source: str) -> Tuple[str, str]:
    rest = source[len("obj://"):] if source.lower().startswith("obj://") else source
    bucket, _, key = rest.partition("/")
    if not bucket or not key:
        raise ManifestError(f"invalid object store source {source}: expected obj://BUCKET/KEY")
    return bucket, key


def download(conn: Connection, bucket: str, key: str, out: BinaryIO) -> None:
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
        out.seek(0)
        out.truncate()
        try:
            await store.get(key, writeinto=out)
        except je.DigestMismatchError:
            return "digest"
        except je.ObjectNotFoundError:
            return "noobject"
        out.flush()
        return "ok"

    source = f"obj://{bucket}/{key}"
    try:
        state = conn.jetstream(op, f"could not get {source}", attempt_timeout=GET_TIMEOUT)
    except NatsError as exc:
        raise ManifestError(str(exc)) from None
    if state == "nobucket":
        raise ManifestError(f"could not get {source}: object store bucket {bucket!r} not found")
    if state == "noobject":
        raise ManifestError(f"could not get {source}: object {key!r} not found")
    if state == "toolarge":
        raise ManifestError(f"could not get {source}: object is larger than {MAX_OBJECT} bytes")
    if state == "digest":
        raise ManifestError(f"could not get {source}: digest mismatch")


def fetch_bundle(conn: Connection, source: str) -> Tuple[str, str]:
    from ccm.remote import bundle_from

    bucket, key = parse(source)
    return bundle_from(lambda out: download(conn, bucket, key, out), f"obj://{bucket}/{key}")
