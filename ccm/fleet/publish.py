"""Publishing a run's report: ``ReportPublisher.finished(result, context)``, the one entry point.

What: after a top-level run, ``finished`` builds the report (``ccm.fleet.document``),
checks its labels and subject tokens, then delivers, oldest first, every report queued
by earlier runs and this one; what cannot be delivered is queued (``ccm.fleet.queue``).
``nats`` publishes core NATS (flushed, no acknowledgement); ``jetstream`` waits for the
stream's acknowledgement, with ``Nats-Msg-Id`` (the server drops a re-sent report) and
``Nats-Expected-Stream: CCM_REPORTS``; both carry the report's outcome in ``Ccm-Outcome``.
Guarantees: ``finished`` never raises and never changes the run's outcome; it returns
within ``budget`` seconds (``$CCM_REPORT_SECONDS``, default 4) plus one connect; a
refused label or token publishes nothing and says so in one line; a report made before
``ccm report init`` is queued (JetStream says the stream does not exist) and delivered
by the first run after it. The fast path (``ccm.fleet.wire``) serves plain and TLS
contexts with user/password or token; ``$CCM_REPORT_CLIENT=nats-py`` (and every
nkey/creds context) takes the reference path over ``ccm.nats.connection``.
Not: the report's content (``document``), reading (``ccm.fleet.stream``).
"""
from __future__ import annotations

import os
import sys
import time

from ccm.fleet import KINDS, OUTCOME_HEADER, STREAM, document, subjects
from ccm.fleet.queue import QueueError, ReportQueue
from ccm.fleet.wire import NoResponders, Refused, Transient, WireError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, Mapping, Optional

DEFAULT_BUDGET = 4.0


def body_outcome(body: bytes) -> str:
    """The outcome of a report body (``document.outcome``), for ``OUTCOME_HEADER``: readers
    asked for failed hosts decode only the hosts with a failed report ("" if not a report)."""
    from ccm import jsonc

    try:
        return document.outcome(jsonc.loads(body))
    except (ValueError, TypeError, AttributeError):   # not a report: the readers count it as malformed
        return ""


class Unreachable(Transient):
    """No server of the context could be reached: not retried within this run."""


class NoStream(Transient):
    """JetStream answered that ``CCM_REPORTS`` does not exist: queued, not retried."""


def budget_seconds(environ: Optional[Mapping[str, str]] = None) -> float:
    env = os.environ if environ is None else environ
    try:
        return max(0.1, float(env.get("CCM_REPORT_SECONDS", "") or DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET


def _sha256() -> Any:
    """The interpreter's own sha256 (``_sha256``, ``_sha2`` from 3.12): ``hashlib``'s import
    loads OpenSSL, a few ms of every cron run for one digest of a small file."""
    for name in ("_sha256", "_sha2"):
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256

    return sha256


def file_sha256(path: str) -> str:
    """sha256 of the manifest file's bytes ("" when it cannot be read)."""
    h = _sha256()()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 16), b""):
                h.update(block)
    except OSError:
        return ""
    digest: str = h.hexdigest()
    return digest


class RunContext:
    """The plain values of one top-level run a report needs besides its result.

    ``events``: every event of the run, nested applies' included (default: the result's);
    ``start_ns``: the run's start (default: its summary's); ``hostname``: default the
    publisher's (the host's node name); ``error``: set by ``ReportPublisher.rejected``.
    """

    __slots__ = ("manifest_source", "manifest_sha256", "exit_code", "noop", "labels", "hostname", "events",
                 "start_ns", "end_ns", "error")

    def __init__(self, manifest_source: str, *, manifest_sha256: str = "", exit_code: int = 0, noop: bool = False,
                 labels: Optional[Mapping[str, str]] = None, hostname: str = "", events: Optional[Iterable[Any]] = None,
                 start_ns: int = 0, end_ns: int = 0) -> None:
        self.manifest_source = manifest_source
        self.manifest_sha256 = manifest_sha256
        self.exit_code = exit_code
        self.noop = noop
        self.labels = dict(labels or {})
        self.hostname = hostname
        self.events = events
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.error = ""


class Delivery:
    """What became of a run's report: delivered now, or queued, with the queue's state."""

    __slots__ = ("delivered", "queued", "dropped", "error", "subject")

    def __init__(self, delivered: bool = False, queued: int = 0, dropped: int = 0, error: str = "", subject: str = ""):
        self.delivered, self.queued, self.dropped, self.error, self.subject = delivered, queued, dropped, error, subject

    def to_dict(self) -> Dict[str, Any]:
        return {"delivered": self.delivered, "queued": self.queued, "dropped": self.dropped,
                "error": self.error or None}


def _stderr(line: str) -> None:
    sys.stderr.write(f"ccm: {line}\n")


class ReportPublisher:
    """Delivers the reports of one host's runs (a CLI run, or the agent's whole life)."""

    def __init__(self, kind: str, *, context: str = "CCM", environ: Optional[Mapping[str, str]] = None,
                 queue: Optional[ReportQueue] = None, budget: Optional[float] = None, hostname: str = "",
                 labels: Optional[Mapping[str, str]] = None, warn: Optional[Callable[[str], None]] = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown report publisher {kind!r} (expected nats or jetstream)")
        self.kind = kind
        self.context_name = context
        self.environ = os.environ if environ is None else environ
        self.queue = queue if queue is not None else ReportQueue.default(self.environ)
        self.budget = budget_seconds(self.environ) if budget is None else budget
        self.hostname = hostname or os.uname().nodename
        self.labels = dict(labels or {})
        self.warn = warn or _stderr
        self._transport: Any = None

    # --- the entry point ------------------------------------------------------------------

    def finished(self, result: Any, context: RunContext) -> Delivery:
        """Publish the report of a finished run (``result``: its events and summary)."""
        try:
            prepared = self._prepare(result, context)
        except subjects.ReportInputError as exc:
            self.warn(f"report not published: {exc}")
            return Delivery(error=str(exc))
        except Exception as exc:   # a report must never fail the run
            self.warn(f"report not published: {type(exc).__name__}: {exc}")
            return Delivery(error=str(exc))
        try:
            return self.deliver(*prepared)
        except Exception as exc:
            self.warn(f"report not delivered: {type(exc).__name__}: {exc}")
            return Delivery(error=str(exc), subject=prepared[0])

    def rejected(self, context: RunContext, error: str) -> Delivery:
        """The report of a run whose manifest was rejected before it ran (it did not parse or
        validate): outcome failed, ``context.exit_code`` and ``error`` (one redacted line),
        no resources. Never raises, as ``finished``."""
        context.error = error
        return self.finished(None, context)

    def _prepare(self, result: Any, ctx: RunContext) -> "tuple[str, str, bytes]":
        from ccm import jsonc

        if result is None:   # rejected before the run: nothing ran, nothing to count
            from ccm.model.events import SessionSummary

            result = _Rejected(SessionSummary.build([]))
        hostname = ctx.hostname or self.hostname
        labels = subjects.check_labels({**self.labels, **ctx.labels})
        source = document.clean(ctx.manifest_source)
        instance, mid = subjects.instance_token(hostname), subjects.manifest_id(source)
        subject = subjects.report_subject(instance, mid)
        summary = result.summary
        start = ctx.start_ns or int(summary.start_time_ns or 0) or time.time_ns()
        doc = document.build(result.events if ctx.events is None else ctx.events, summary, instance=instance,
                             hostname=hostname, labels=labels, source=source, sha256=ctx.manifest_sha256,
                             start_ns=start, end_ns=ctx.end_ns or time.time_ns(), exit_code=ctx.exit_code,
                             noop=ctx.noop, error=ctx.error)
        body = jsonc.dumps(doc).encode("utf-8")
        return subject, f"{instance}.{mid}.{start}", body

    # --- delivery ---------------------------------------------------------------------------

    def deliver(self, subject: str, msg_id: str, body: bytes) -> Delivery:
        """Queued reports oldest first, then this one; whatever is left is queued."""
        deadline = time.monotonic() + self.budget
        try:
            with self.queue.locked() as q:
                return self._deliver_queued(q, subject, msg_id, body, deadline)
        except QueueError as exc:
            self.warn(f"report queue unusable: {exc}")
            try:
                self.send(subject, msg_id, body, deadline)
                return Delivery(True, subject=subject)
            except WireError as err:
                self.warn(f"report lost: {err}")
                return Delivery(error=str(err), subject=subject)

    def _deliver_queued(self, q: ReportQueue, subject: str, msg_id: str, body: bytes, deadline: float) -> Delivery:
        failure: Optional[WireError] = None
        for item in q.pending():
            try:
                self.send(item.subject, item.msg_id, item.body, deadline)
            except Refused as exc:
                self.warn(f"queued report refused, dropped: {exc}")
                q.remove(item.name)
                q.count_dropped(1)
                continue
            except WireError as exc:
                failure = exc
                break
            q.remove(item.name)
        if failure is None:
            try:
                self.send(subject, msg_id, body, deadline)
                return Delivery(True, queued=len(q), dropped=q.dropped(), subject=subject)
            except Refused as exc:
                self.warn(f"report refused: {exc}")
                return Delivery(queued=len(q), dropped=q.dropped(), error=str(exc), subject=subject)
            except WireError as exc:
                failure = exc
        dropped = q.add(subject, msg_id, body)
        waiting = len(q)
        if dropped:
            self.warn(f"report queue full: dropped the {dropped} oldest report(s) ({q.dropped()} dropped in all)")
        self.warn(f"report queued ({waiting} waiting in {q.path}): {failure}")
        return Delivery(queued=waiting, dropped=q.dropped(), error=str(failure), subject=subject)

    def send(self, subject: str, msg_id: str, body: bytes, deadline: float) -> None:
        """One report, retried through transient failures until ``deadline``."""
        headers = {"Nats-Msg-Id": msg_id, OUTCOME_HEADER: body_outcome(body)}
        if self.kind == "jetstream":
            headers["Nats-Expected-Stream"] = STREAM
        delay = 0.1
        while True:
            try:
                self.transport().send(self.kind, subject, body, headers, deadline)
                return
            except (Unreachable, NoStream, Refused):
                raise
            except Transient:
                if time.monotonic() + delay >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def transport(self) -> Any:
        if self._transport is None:
            from ccm.nats.context import load

            try:
                ctx = load(self.context_name, self.environ)
            except Exception as exc:   # NatsError: a missing or broken context
                raise Unreachable(str(exc)) from None
            from ccm.fleet import wire

            if self.environ.get("CCM_REPORT_CLIENT", "") == "nats-py" or not wire.supports(ctx):
                from ccm.fleet.reference import ReferenceTransport

                self._transport = ReferenceTransport(self.context_name, self.environ)
            else:
                self._transport = WireTransport(wire.WireClient(ctx))
        return self._transport

    def close(self) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()
        self.queue.close()


class _Rejected:
    """The result of a run that never started: no events, zero counts."""

    __slots__ = ("events", "summary")

    def __init__(self, summary: Any):
        self.events: "list[Any]" = []
        self.summary = summary


class WireTransport:
    """The fast path: ``ccm.fleet.wire`` over one socket, kept open between reports."""

    def __init__(self, client: Any):
        self.client = client

    def send(self, kind: str, subject: str, body: bytes, headers: Mapping[str, str], deadline: float) -> None:
        from ccm.fleet import wire

        client = self.client
        try:
            client.connect(deadline)
        except Transient as exc:
            raise Unreachable(str(exc)) from None
        if kind == "nats":
            client.publish(subject, body, headers, deadline)
            return
        try:
            wire.ack_of(client.request(subject, body, headers, deadline))
        except NoResponders:
            prefix = client.ctx.api_prefix
            if wire.stream_missing(client, prefix, STREAM, deadline):
                raise NoStream(f"stream {STREAM} does not exist yet (create it with: ccm report init)") from None
            raise

    def close(self) -> None:
        self.client.close()


__all__ = ["Delivery", "NoStream", "ReportPublisher", "RunContext", "Unreachable", "WireTransport", "file_sha256"]
