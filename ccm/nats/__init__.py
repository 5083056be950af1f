"""NATS: contexts, the one connection a manager shares, KV, object store, JetStream.

What: ``context`` reads nats CLI context files (pure JSON, no client library);
``connection`` owns one lazily opened nats-py connection per manager, driven by a
private asyncio event-loop thread so the synchronous engine can call it with bounded
timeouts; ``kv`` and ``objstore`` are the data features built on it.
Guarantees: importing this package (or ``context``) never imports ``nats``; the client
library is loaded on the first real network operation. Credentials never reach
messages or logs. Not: registration (``ccm.registration``).
"""
from __future__ import annotations

from ccm.model.errors import CCMError


class NatsError(CCMError):
    """A NATS feature failed (connection, JetStream, KV, object store)."""


__all__ = ["NatsError"]
