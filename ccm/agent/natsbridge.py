"""The agent's NATS features: object-store manifests, ``kv://`` external data, and
registration publishing, over the NATS layer (``ccm.nats``, ``ccm.registration``).

Everything here is reached lazily: an agent that uses none of it never imports this
module's dependencies (nor ``nats``). A build without the NATS layer raises
``SourceUnavailable`` with one clear line instead of failing at import.
"""
from __future__ import annotations

import threading

from ccm.agent.sources import ObjectStore, SourceUnavailable
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, IO, Optional

NEEDS = "need the NATS layer (ccm.nats), which this build does not have"


def _layer(module: str) -> Any:
    """A module of the NATS layer, imported on first use."""
    import importlib

    return importlib.import_module(module)


class NatsBridge:
    """The NATS features over the agent's root manager's one connection (which every
    worker's manager, a ``Manager.child()`` of it, shares for kvGet and registrations())."""

    def __init__(self, root: Callable[[], Any]):
        self._root = root
        self._conn: Any = None
        self._lock = threading.Lock()

    def connection(self, what: str) -> Any:
        with self._lock:
            if self._conn is None:
                try:
                    _layer("ccm.nats.connection")
                except ImportError:
                    raise SourceUnavailable(f"{what} {NEEDS}") from None
                self._conn = self._root().nats_connection()
            return self._conn

    def object_store(self) -> ObjectStore:
        return _ObjectStore(self.connection("obj:// sources"))

    def object_bytes(self, source: str) -> bytes:
        import io

        bucket, _, key = source[len("obj://"):].partition("/")
        buf = io.BytesIO()
        self.object_store().download(bucket, key, buf)
        return buf.getvalue()

    def kv_loader(self) -> Callable[[str, str], bytes]:
        conn = self.connection("kv:// external data")
        loader: Callable[[str, str], bytes] = _layer("ccm.nats.kv").hiera_loader(conn)
        return loader

    def enable_registration(self, manager: Any, kind: str) -> None:
        """Publish ``register_when_stable`` entries of this manager's runs (the CLI's gate)."""
        self.connection(f"registration publishing ({kind}):")
        try:
            publish = _layer("ccm.registration.publish")
        except ImportError:
            raise SourceUnavailable(f"registration publishing ({kind}): {NEEDS}") from None
        publish.enable(manager, kind, manager.registration_stream)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None


class _ObjectStore:
    def __init__(self, conn: Any):
        self.conn = conn

    def digest(self, bucket: str, key: str) -> Optional[str]:
        async def op(js: Any) -> Dict[str, Any]:
            import nats.js.errors as je

            try:
                store = await js.object_store(bucket)
            except (je.BucketNotFoundError, je.NotFoundError):
                return {"missing": True}
            try:
                info = await store.get_info(key, show_deleted=True)
            except je.ObjectNotFoundError:
                return {"missing": True}
            return {"missing": bool(info.deleted), "digest": info.digest or str(info.nuid)}

        state = self.conn.jetstream(op, f"could not check obj://{bucket}/{key}")
        return None if state.get("missing") else str(state["digest"])

    def download(self, bucket: str, key: str, out: IO[bytes]) -> None:
        _layer("ccm.nats.objstore").download(self.conn, bucket, key, out)
