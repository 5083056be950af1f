"""One NATS connection per manager, bridged once to the synchronous engine.

What: ``Connection`` opens nats-py lazily on first use, on a private asyncio event loop
running in a daemon thread; callers hand it coroutine functions (``run``) and get the
result or a ``NatsError`` within a bounded time. ``jetstream`` retries an operation
through leader elections and reconnects (timeouts, no responders, 503s) within a budget
of about 15 s; "not found"-style answers are never retried.
Guarantees: the initial connect tries every server URL of the context and fails within
about 4.5 s with one line naming the servers (credentials redacted) and the context;
an established connection reconnects forever in the background; nothing here logs a
password, token or seed. TLS failures say what the context probably lacks (its ``ca``, a
client ``cert``/``key``, ``tls_first``); ``creds``/``nkey`` contexts fail before any traffic
when the ``nkeys`` package (not bundled in ccm.pyz) is missing.
Not: feature logic (``ccm.nats.kv``, ``ccm.nats.objstore``, ``ccm.registration``).
"""
from __future__ import annotations

import asyncio
import atexit
import os
import re
import ssl
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout

from ccm.log import internal
from ccm.nats import NatsError
from ccm.nats.context import NatsContext, load, redact_url
from ccm.typing_guard import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Tuple

log = internal("ccm.nats")

T = TypeVar("T")

CONNECT_DEADLINE = 3.5      # the whole initial connect, every server URL included
API_TIMEOUT = 2.0           # one JetStream API request (upstream's default)
RECONNECT_WAIT = 1.0


def retry_budget() -> float:
    """Seconds a JetStream operation keeps retrying through elections (default 15)."""
    try:
        return max(0.0, float(os.environ.get("CCM_NATS_RETRY_SECONDS", "15")))
    except ValueError:
        return 15.0


def _retryable(exc: BaseException) -> bool:
    import nats.errors as ne
    import nats.js.errors as je

    if isinstance(exc, (asyncio.TimeoutError, FutureTimeout, ne.TimeoutError, ne.NoRespondersError,
                        ne.ConnectionClosedError,
                        ne.ConnectionReconnectingError, ne.OutboundBufferLimitError, ne.StaleConnectionError,
                        ne.FlushTimeoutError, je.NoStreamResponseError, je.ServiceUnavailableError,
                        je.ServerError, ConnectionError)):
        return True
    if type(exc).__name__ == "_Gap":
        return True
    if isinstance(exc, je.APIError):
        # 10008 JetStream temporarily unavailable, 10077/10076 leader-related, 503 anything
        return exc.code == 503 or exc.err_code in (10008, 10076, 10077)
    return False


def _auth_error(exc: BaseException) -> bool:
    import nats.errors as ne

    return isinstance(exc, (ne.AuthorizationError, ne.InvalidUserCredentialsError)) or "uthoriz" in str(exc)


def describe(exc: BaseException) -> str:
    """A short, credential-free text for a nats-py exception."""
    import nats.errors as ne
    import nats.js.errors as je

    if isinstance(exc, je.APIError):
        return exc.description or f"JetStream API error {exc.code}"
    if isinstance(exc, (asyncio.TimeoutError, ne.TimeoutError)):
        return "timeout"
    if isinstance(exc, ne.NoRespondersError):
        return "no responders available for request"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verify failed: {exc.verify_message or exc.reason} (check the context's ca)"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {_ssl_text(exc)}"
    text = str(exc) or type(exc).__name__
    return text[len("nats: "):] if text.startswith("nats: ") else text


def _require_nkeys(ctx: NatsContext, kind: str) -> None:
    """nats-py signs nkey/creds logins with the ``nkeys`` package (PyNaCl), which ccm.pyz does not bundle."""
    import importlib.util

    if importlib.util.find_spec("nkeys") is None:
        raise NatsError(f"context {ctx.name!r}: {kind} authentication needs the nkeys package, which this ccm "
                        "bundle does not include (use user/password, a token or a TLS client certificate)")


def _ssl_text(exc: BaseException) -> str:
    """``[X509: KEY_VALUES_MISMATCH] key values mismatch (_ssl.c:4065)`` -> ``key values mismatch``."""
    text = str(exc.args[1]) if isinstance(exc, ssl.SSLError) and len(exc.args) > 1 else str(exc)
    return re.sub(r"^\[[^]]*\]\s*|\s*\(_ssl\.c:\d+\)$", "", text) or type(exc).__name__


def _tls_hint(ctx: NatsContext, err: Optional[BaseException]) -> str:
    """What a TLS connect failure most likely means, from the context's settings."""
    reset = isinstance(err, (ConnectionResetError, BrokenPipeError))
    if not ctx.cert and (reset or "certificate required" in str(err)):
        return (" (the server closed the connection during the TLS handshake: it may require a client "
                "certificate, cert and key in the context)")
    if not ctx.tls_first and (err is None or "expecting INFO" in str(err) or describe(err) == "timeout"):
        return " (no INFO from the server: if its tls block has handshake_first, set tls_first in the context)"
    if ctx.tls_first and not isinstance(err, ssl.SSLCertVerificationError):
        return " (tls_first is set in the context: the server must have handshake_first in its tls block)"
    return ""


def _hopeless(state: Dict[str, Any], exc: BaseException, servers: int) -> bool:
    """Whether an initial connect should stop waiting after ``exc``: every URL tried once and
    refused, or an auth failure. A reset during the handshake is ambiguous: a server that
    rejects credentials sends -ERR and closes, and the reset can overtake that -ERR on the
    wire, so resets get a second round in which the -ERR usually arrives."""
    state["failures"] += 1 if not isinstance(exc, (ConnectionResetError, BrokenPipeError)) else 0.5
    return bool(state["failures"] >= servers or _auth_error(exc))


async def _abandon(nc: Any, task: "asyncio.Future[Any]", finished: bool, last: Dict[str, BaseException]) -> None:
    """A connect that failed or ran out of time: its error kept in ``last``, the client closed."""
    if not finished:
        task.cancel()
    elif task.exception() is not None:
        last.setdefault("err", task.exception())  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(nc.close(), 1.0)
    except Exception:
        pass


def _connect_failure(ctx: NatsContext, err: Optional[BaseException]) -> str:
    """Why the initial connect failed, from its last error and the context's settings."""
    reason = describe(err) if err is not None else f"no server answered within {CONNECT_DEADLINE:g}s"
    if err is not None and _auth_error(err):
        return f"authorization failed ({reason})"
    if isinstance(err, (ConnectionResetError, BrokenPipeError)) and (ctx.user or ctx.token or ctx.creds or ctx.nkey):
        return f"{reason} (the server closed the connection during the handshake: likely an authorization failure)"
    if ctx.uses_tls:
        return reason + _tls_hint(ctx, err)
    return reason


def _auth_options(ctx: NatsContext) -> Dict[str, Any]:
    """The connect options of the context's one credential: user and password, a creds file or an nkey."""
    if ctx.user:
        return {"user": ctx.user, "password": ctx.password}
    if ctx.creds:
        if not os.path.exists(ctx.creds):
            raise NatsError(f"context {ctx.name!r}: credentials file {ctx.creds} does not exist")
        _require_nkeys(ctx, "creds")
        return {"user_credentials": ctx.creds}
    if ctx.nkey:
        if not os.path.exists(ctx.nkey):
            raise NatsError(f"context {ctx.name!r}: nkey file {ctx.nkey} does not exist")
        _require_nkeys(ctx, "nkey")
        return {"nkeys_seed": ctx.nkey}
    return {}


def _tls_context(ctx: NatsContext) -> ssl.SSLContext:
    for key, path in (("ca", ctx.ca), ("cert", ctx.cert), ("key", ctx.key)):
        if path and not os.path.isfile(path):
            raise NatsError(f"context {ctx.name!r}: TLS {key} file {path} "
                            f"{'is not a regular file' if os.path.exists(path) else 'does not exist'}")
    try:
        tls = ssl.create_default_context(cafile=ctx.ca or None)
        if ctx.cert:
            tls.load_cert_chain(ctx.cert, ctx.key)
    except ssl.SSLError as exc:
        raise NatsError(f"context {ctx.name!r}: TLS setup failed: {_ssl_text(exc)}") from None
    except OSError as exc:
        raise NatsError(f"context {ctx.name!r}: TLS setup failed: {exc.strerror or exc}") from None
    return tls


class Connection:
    """The lazily opened connection a manager (and its children) share."""

    def __init__(self, context_name: str, environ: Optional[Mapping[str, str]] = None):
        self.context_name = context_name
        self._environ = environ
        self._context: Optional[NatsContext] = None
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._nc: Any = None
        self._connect_lock: Optional[asyncio.Lock] = None
        self._js: Dict[str, Any] = {}
        self._denied: Optional[Tuple[float, str]] = None   # the last permissions violation (when, what)
        self._lost = ""   # why the established connection is down (error_cb/disconnected_cb), for outage()
        self.closed = False

    # --- context and loop --------------------------------------------------------------

    def context(self) -> NatsContext:
        if self._context is None:
            self._context = load(self.context_name, self._environ)
        return self._context

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=main, name="ccm-nats", daemon=True)
                thread.start()
                ready.wait(5)
                self._loop, self._thread = loop, thread
                atexit.register(self.close)
            return self._loop

    def run(self, fn: Callable[[Any], Awaitable[T]], timeout: float, what: str = "nats operation") -> T:
        """Run ``fn(client)`` on the loop, connecting first; bounded by ``timeout`` after connect."""
        self.context()   # a bad context fails here, before any thread or import
        loop = self._ensure_loop()

        async def call() -> T:
            nc = await self._client()
            return await asyncio.wait_for(fn(nc), timeout)

        started = time.monotonic()
        future = asyncio.run_coroutine_threadsafe(call(), loop)
        try:
            return future.result(timeout + CONNECT_DEADLINE + 1.0)
        except (FutureTimeout, asyncio.TimeoutError):
            # Python 3.11 made both the builtin TimeoutError, nats-py's too: only a future
            # that is not done timed out here; a done one raised the operation's own
            # timeout, which the caller may retry (an election, a reconnect)
            self.raise_if_denied(what, started)
            if future.done():
                raise
            future.cancel()
            elapsed = time.monotonic() - started
            raise NatsError(f"{what}: {self.outage() or f'timeout (context {self.context_name!r})'} "
                            f"after {elapsed:.1f}s") from None

    def outage(self) -> str:
        """Why requests cannot be answered when the connection is down (empty when it is
        up): ``NATS not connected: <last error> (servers ..., context 'CCM')``."""
        nc = self._nc
        if nc is None or nc.is_connected:
            return ""
        ctx = self.context()
        cause = self._lost or "connection lost"
        return f"NATS not connected: {cause}, reconnecting (servers {ctx.display_servers()}, context {ctx.name!r})"

    def raise_if_denied(self, what: str, since: float) -> None:
        """Fail with the server's refusal (``-ERR Permissions Violation``) when one arrived since
        ``since``: a request that timed out because its inbox or subject was refused, or a core
        publish the server dropped (no retrying: permissions do not change in an election)."""
        denied = self._denied
        if denied is None or denied[0] < since:
            return
        text = denied[1]
        hint = ""
        if "subscription" in text.lower() and "inbox" in text.lower():
            hint = "; set inbox_prefix in the context to a prefix this user may subscribe to"
        raise NatsError(f"{what}: {text} (context {self.context_name!r}{hint})")

    def jetstream(self, fn: Callable[[Any], Awaitable[T]], what: str, *, attempt_timeout: float = API_TIMEOUT,
                  budget: Optional[float] = None, api_timeout: float = API_TIMEOUT) -> T:
        """Run ``fn(jetstream_context)``, retrying transient failures within ``budget`` seconds.

        Each JetStream API request waits ``api_timeout``; one whole attempt ``attempt_timeout``.
        """
        budget = retry_budget() if budget is None else budget
        started = time.monotonic()
        deadline = started + budget
        delay = 0.2
        attempt = 0
        while True:
            attempt += 1
            try:
                return self.run(lambda nc: fn(self._jetstream(nc, api_timeout)),
                                attempt_timeout + 0.5, what)
            except NatsError:
                raise
            except Exception as exc:
                retryable = _retryable(exc)
                if retryable:   # a timeout caused by a refused subject: that refusal is the error
                    self.raise_if_denied(what, started)
                left = deadline - time.monotonic()
                if not retryable:
                    raise NatsError(f"{what}: {describe(exc)}") from None
                if left <= 0:
                    raise NatsError(f"{what}: {self.outage() or describe(exc)} (gave up after "
                                    f"{time.monotonic() - started:.1f}s, {attempt} attempts)") from None
                log.debug("%s failed (%s), retrying (attempt %d)", what, describe(exc), attempt)
                time.sleep(min(delay, max(0.0, left)))
                delay = min(delay * 2, 1.0)

    def _jetstream(self, nc: Any, timeout: float) -> Any:
        ctx = self.context()
        key = f"{timeout}"
        js = self._js.get(key)
        if js is None or js._nc is not nc:
            js = nc.jetstream(prefix=ctx.api_prefix, timeout=timeout)
            self._js[key] = js
        return js

    # --- connecting --------------------------------------------------------------------

    async def _client(self) -> Any:
        if self._nc is not None and not self._nc.is_closed:
            return self._nc
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            if self._nc is None or self._nc.is_closed:
                self._nc = await self._connect()
                self._js = {}
        return self._nc

    def _options(self, ctx: NatsContext) -> Dict[str, Any]:
        opts: Dict[str, Any] = {"servers": list(ctx.servers), "name": "choria-ccm", "allow_reconnect": True,
                                "max_reconnect_attempts": -1, "reconnect_time_wait": RECONNECT_WAIT,
                                "connect_timeout": max(0.5, min(2.0, (CONNECT_DEADLINE - 0.5) / len(ctx.servers)))}
        if ctx.socks_proxy:
            raise NatsError(f"context {ctx.name!r}: socks_proxy is not supported")
        opts.update(_auth_options(ctx))
        if ctx.token:
            opts["token"] = ctx.token
        if ctx.inbox_prefix:
            opts["inbox_prefix"] = ctx.inbox_prefix
        if ctx.uses_tls:
            opts["tls"] = _tls_context(ctx)
            if ctx.tls_first:
                opts["tls_handshake_first"] = True
        return opts

    async def _connect(self) -> Any:
        import nats

        ctx = self.context()
        opts = self._options(ctx)
        last: Dict[str, BaseException] = {}
        fatal = asyncio.Event()
        state: Dict[str, Any] = {"connected": False, "failures": 0}

        async def error_cb(exc: Exception) -> None:
            if "permissions violation" in str(exc).lower():
                # a refused subject fails the operation that used it (``raise_if_denied``)
                self._denied = (time.monotonic(), describe(exc))
                log.debug("NATS server refused: %s", describe(exc))
                return
            if _auth_error(exc):
                last["auth"] = exc
            last["err"] = exc
            if not state["connected"]:
                if _hopeless(state, exc, len(ctx.servers)):
                    fatal.set()
            elif not self.closed:
                self._lost = describe(exc)
                # refused reconnect attempts are expected while a server is down
                (log.debug if isinstance(exc, OSError) else log.error)("NATS connection error: %s", describe(exc))

        async def disconnected_cb() -> None:
            if state["connected"] and not self.closed:
                log.error("NATS connection lost, attempting to reconnect")

        async def reconnected_cb() -> None:
            self._lost = ""
            log.info("NATS connection re-established to %s", redact_url(str(nc.connected_url or "")))

        async def closed_cb() -> None:
            if state["connected"]:
                log.debug("NATS connection closed")

        opts.update(error_cb=error_cb, disconnected_cb=disconnected_cb, reconnected_cb=reconnected_cb,
                    closed_cb=closed_cb)
        nc = nats.NATS()
        task = asyncio.ensure_future(nc.connect(**opts))
        stop = asyncio.ensure_future(fatal.wait())
        done, _pending = await asyncio.wait({task, stop}, timeout=CONNECT_DEADLINE,
                                            return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if task in done and task.exception() is None:
            state["connected"] = True
            log.debug("connected to NATS %s", ctx.display_servers())
            return nc
        await _abandon(nc, task, task in done, last)
        raise NatsError(f"nats connection error: could not connect to {ctx.display_servers()} "
                        f"(context {ctx.name!r}): {_connect_failure(ctx, last.get('auth') or last.get('err'))}")

    # --- state and shutdown ------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._nc is not None and bool(self._nc.is_connected)

    def close(self) -> None:
        """Flush and close (bounded), then stop the loop thread."""
        loop = self._loop
        if loop is None or self.closed:
            return
        self.closed = True
        nc = self._nc

        async def shutdown() -> None:
            if nc is not None and not nc.is_closed:
                try:
                    if nc.is_connected:
                        await asyncio.wait_for(nc.flush(), 1.0)
                except Exception:
                    pass
                try:
                    await asyncio.wait_for(nc.close(), 1.0)
                except Exception:
                    pass
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            if others:
                await asyncio.wait(others, timeout=1.0)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(3.0)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(2.0)
        self._nc = None
        self._loop = None
