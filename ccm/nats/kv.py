"""JetStream KV reads: ``kvGet(bucket, key)`` and Hiera ``kv://BUCKET/KEY``.

``get(conn, bucket, key)`` returns the latest value as bytes; a missing bucket or key,
a deleted or purged value, and a server problem are each one ``NatsError`` naming the
bucket and key. Buckets are never created here.
"""
from __future__ import annotations


from ccm.nats import NatsError
from ccm.nats.connection import Connection
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

MAX_VALUE = 8 << 20


class KVMissing(NatsError):
    """The bucket or the key does not exist (or the value was deleted)."""


def get(conn: Connection, bucket: str, key: str) -> bytes:
    if not bucket:
        raise NatsError("bucket name is required")
    if not key:
        raise NatsError("key is required")

    async def op(js: Any) -> Any:
        import nats.js.errors as je

        try:
            kv = await js.key_value(bucket)
        except je.BucketNotFoundError:
            return ("nobucket", None)
        except je.NotFoundError:
            return ("nobucket", None)
        try:
            entry = await kv.get(key)
        except je.KeyNotFoundError as exc:
            op_ = exc.op
            return ("deleted", op_) if op_ else ("nokey", None)
        except je.InvalidKeyError:
            return ("invalid", None)
        return ("ok", entry.value or b"")

    state, value = conn.jetstream(op, f'could not get key "{key}" from bucket "{bucket}"')
    failures = {
        "nobucket": (KVMissing, f'could not access KV bucket "{bucket}": bucket not found'),
        "nokey": (KVMissing, f'could not get key "{key}" from bucket "{bucket}": key not found'),
        "invalid": (NatsError, f'could not get key "{key}" from bucket "{bucket}": invalid key'),
        "deleted": (KVMissing, f"kv {bucket}#{key} is not a put operation"),
    }
    if state in failures:
        cls, message = failures[state]
        raise cls(message)
    if len(value) > MAX_VALUE:
        raise NatsError(f"kv {bucket}#{key} is larger than {MAX_VALUE} bytes")
    return bytes(value)


def hiera_loader(conn: Connection) -> Any:
    """A ``kv_loader`` for ``ccm.data.sources``: ValidationError-style failures."""
    from ccm.model.errors import ValidationError

    def load(bucket: str, key: str) -> bytes:
        try:
            return get(conn, bucket, key)
        except NatsError as exc:
            text = str(exc)
            raise ValidationError(text if f"{bucket}#{key}" in text or f'"{key}"' in text
                                  else f"kv://{bucket}/{key}: {text}") from None

    return load
