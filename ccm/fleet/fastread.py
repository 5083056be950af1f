"""Reading report subjects over ``ccm.fleet.wire``: the fast path of ``ccm.fleet.stream``'s reads.

What: ``read(ctx, subject, collect, all_messages=...)`` makes the same ephemeral push
consumer as the reference (``ccm.registration.stream.read_subjects`` over nats-py: last
message per subject, or every message; no acks, flow control, heartbeats, in memory, R1)
through the JetStream API, and hands ``collect(subject, body, header block)`` each
delivery until the server reports nothing pending, in one synchronous loop over one
socket. Why: nats-py turns every delivery into a message object, parses its headers and
awaits a callback (~60 us each); a fleet read is 30,000 deliveries.
Guarantees: markers (``Nats-Marker-Reason``) are dropped; a gap in the consumer sequence
raises ``Gap`` (the caller reads again); flow control is answered; no delivery for
``IDLE`` seconds is a timeout; the consumer is deleted afterwards. Errors are
``NatsError`` naming the servers and the context. ``$CCM_REPORT_CLIENT=nats-py`` (and nkey or
creds contexts) read through the reference instead; one test compares the two.
Not: watching (``stream.watch`` stays on nats-py), publishing.
"""
from __future__ import annotations

import json
import os
import time

from ccm.fleet import STREAM
from ccm.fleet.wire import WireClient, WireError
from ccm.nats import NatsError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

    from ccm.nats.context import NatsContext

IDLE = 5.0
CONNECT = 3.5
MARKER = b"Nats-Marker-Reason"


class Gap(Exception):
    """A delivery was lost (consumer sequence gap): read again."""


def _ack_tokens(reply: str) -> "tuple[int, int]":
    """(consumer sequence, pending) of a JetStream delivery's reply subject (v1 or v2 tokens)."""
    t = reply.split(".")
    return (int(t[6]), int(t[8])) if len(t) == 9 else (int(t[8]), int(t[10]))


def _config(inbox: str, subject: str, all_messages: bool) -> Dict[str, Any]:
    return {"deliver_subject": inbox, "filter_subject": subject,
            "deliver_policy": "all" if all_messages else "last_per_subject", "ack_policy": "none",
            "max_deliver": 1, "flow_control": True, "idle_heartbeat": 2_000_000_000, "mem_storage": True,
            "num_replicas": 1, "inactive_threshold": 5_000_000_000, "replay_policy": "instant"}


def _api_error(payload: bytes, what: str) -> Optional[Dict[str, Any]]:
    """The consumer info of a CONSUMER.CREATE answer, or NatsError for its error."""
    try:
        doc = json.loads(payload)
    except ValueError:
        raise NatsError(f"{what}: malformed JetStream API answer") from None
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict):
        if error.get("err_code") == 10059 or error.get("code") == 404:
            raise NatsError(f"{what}: stream {STREAM} not found")
        raise NatsError(f"{what}: {error.get('description') or error.get('code')}")
    return doc if isinstance(doc, dict) else None


def read(ctx: NatsContext, subject: str, collect: Callable[[str, bytes, Optional[bytes]], None], *,
         all_messages: bool = False, what: str = "could not read fleet reports") -> None:
    client = WireClient(ctx)
    try:
        try:
            client.connect(time.monotonic() + CONNECT)
        except WireError as exc:
            raise NatsError(f"nats connection error: {exc}") from None
        try:
            _consume(client, ctx, subject, collect, all_messages, what)
        except WireError as exc:
            raise NatsError(f"{what}: {exc} (servers {ctx.display_servers()}, context {ctx.name!r})") from None
    finally:
        client.close()


def _consume(client: WireClient, ctx: NatsContext, subject: str, collect: Any, all_messages: bool,
             what: str) -> None:
    prefix = ctx.inbox_prefix or "_INBOX"
    inbox, api = f"{prefix}.{os.urandom(8).hex()}", f"{prefix}.{os.urandom(8).hex()}"
    deliveries, answers = client.subscribe(inbox), client.subscribe(api)
    request = {"stream_name": STREAM, "config": _config(inbox, subject, all_messages)}
    client.pub(f"{ctx.api_prefix}.CONSUMER.CREATE.{STREAM}", api, json.dumps(request).encode("utf-8"))
    consumer, seq, pending = "", 0, -1
    deadline = time.monotonic() + IDLE
    try:
        while pending != 0:
            msg_subject, sid, reply, head, payload = client.next_message(deadline)
            if sid == answers:
                if head is not None and b" 503" in head.split(b"\r\n", 1)[0]:
                    raise NatsError(f"{what}: JetStream is not available (servers {ctx.display_servers()}, "
                                    f"context {ctx.name!r})")
                info = _api_error(payload, what) or {}
                consumer = str(info.get("name") or "")
                delivered = (info.get("delivered") or {}).get("consumer_seq") or 0
                if info.get("num_pending") == 0 and not delivered and seq == 0:
                    return
                continue
            if sid != deliveries:
                continue
            deadline = time.monotonic() + IDLE
            if reply.startswith("$JS.FC.") or (head is not None and not reply):
                if reply:   # flow control: answer it
                    client.pub(reply, "", b"")
                continue    # an idle heartbeat
            try:
                cseq, pending = _ack_tokens(reply)
            except (ValueError, IndexError):
                continue
            if cseq != seq + 1:
                raise Gap()
            seq = cseq
            if head is None or MARKER not in head:
                collect(msg_subject, payload, head)
    finally:
        try:
            client.unsubscribe(deliveries)
            if consumer:
                client.pub(f"{ctx.api_prefix}.CONSUMER.DELETE.{STREAM}.{consumer}", "", b"")
        except WireError:
            pass
