"""Putting data where ccm reads it: KV entries and object store objects (``ccm kv``, ``ccm obj``).

What: ``kv_put``/``kv_delete`` and ``obj_put``/``obj_delete`` over a ``Connection``'s
public ``jetstream`` call; a put creates a missing bucket with the given number of
replicas (an existing bucket is left as it is). Reads are ``ccm.nats.kv.get`` and
``ccm.nats.objstore.download``, the ones ``kvGet``, ``kv://`` and ``obj://`` use.

Guarantees: every failure is one ``NatsError`` naming the bucket (and key or object);
nothing is retried that is not safe to repeat (``Connection.jetstream``'s rules). Not:
bucket removal, history, TTLs or watching (the ``nats`` CLI does those).
"""
from __future__ import annotations


from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, BinaryIO, Tuple

PUT_TIMEOUT = 60.0
MAX_REPLICAS = 5


def _check(bucket: str, key: str, what: str) -> None:
    if not bucket:
        raise NatsError("bucket name is required")
    if not key:
        raise NatsError(f"{what} is required")


def _replicas(replicas: int) -> int:
    if not 1 <= replicas <= MAX_REPLICAS:
        raise NatsError(f"replicas must be between 1 and {MAX_REPLICAS}, got {replicas}")
    return replicas


async def _kv(js: Any, bucket: str, create: bool, replicas: int) -> Tuple[Any, bool]:
    import nats.js.errors as je

    try:
        return await js.key_value(bucket), False
    except (je.BucketNotFoundError, je.NotFoundError):
        if not create:
            raise NatsError(f'could not access KV bucket "{bucket}": bucket not found') from None
    return await js.create_key_value(bucket=bucket, replicas=replicas), True


def kv_put(conn: Connection, bucket: str, key: str, value: bytes, *, replicas: int = 1) -> Tuple[int, bool]:
    """Store ``value`` as the latest revision of ``key`` -> (revision, bucket created)."""
    _check(bucket, key, "key")
    _replicas(replicas)

    async def op(js: Any) -> Tuple[int, bool]:
        import nats.js.errors as je

        kv, created = await _kv(js, bucket, True, replicas)
        try:
            return int(await kv.put(key, value)), created
        except je.InvalidKeyError:
            raise NatsError(f'could not put key "{key}" in bucket "{bucket}": invalid key') from None

    result: Tuple[int, bool] = conn.jetstream(op, f'could not put key "{key}" in bucket "{bucket}"')
    return result


def kv_delete(conn: Connection, bucket: str, key: str) -> None:
    """Delete ``key`` (a delete marker, as ``nats kv del`` leaves)."""
    _check(bucket, key, "key")

    async def op(js: Any) -> None:
        import nats.js.errors as je

        kv, _created = await _kv(js, bucket, False, 1)
        try:
            await kv.get(key)
        except je.KeyNotFoundError:
            raise NatsError(f'could not delete key "{key}" from bucket "{bucket}": key not found') from None
        await kv.delete(key)

    conn.jetstream(op, f'could not delete key "{key}" from bucket "{bucket}"')


async def _store(js: Any, bucket: str, create: bool, replicas: int, what: str = "") -> Tuple[Any, bool]:
    import nats.js.errors as je

    try:
        return await js.object_store(bucket), False
    except (je.BucketNotFoundError, je.NotFoundError):
        if not create:
            raise NatsError(f"{what}: object store bucket {bucket!r} not found") from None
    return await js.create_object_store(bucket=bucket, replicas=replicas), True


def obj_put(conn: Connection, bucket: str, name: str, data: BinaryIO, *, replicas: int = 1) -> Tuple[int, bool]:
    """Store the bytes read from ``data`` as object ``name`` -> (size, bucket created)."""
    _check(bucket, name, "object name")
    _replicas(replicas)

    async def op(js: Any) -> Tuple[int, bool]:
        store, created = await _store(js, bucket, True, replicas)
        data.seek(0)
        info = await store.put(name, data)
        return int(info.size or 0), created

    result: Tuple[int, bool] = conn.jetstream(op, f"could not put obj://{bucket}/{name}",
                                              attempt_timeout=PUT_TIMEOUT)
    return result


def obj_delete(conn: Connection, bucket: str, name: str) -> None:
    _check(bucket, name, "object name")

    async def op(js: Any) -> None:
        import nats.js.errors as je

        store, _created = await _store(js, bucket, False, 1, f"could not delete obj://{bucket}/{name}")
        try:
            await store.delete(name)
        except je.ObjectNotFoundError:
            raise NatsError(f"could not delete obj://{bucket}/{name}: object {name!r} not found") from None

    conn.jetstream(op, f"could not delete obj://{bucket}/{name}")
