"""The reference path of report publishing: nats-py over ``ccm.nats.connection``.

What: ``ReferenceTransport.send`` publishes one report as the fast path
(``ccm.fleet.wire``) does, with the same subjects, headers and outcomes (``Unreachable``,
``NoStream``, ``Refused``, ``Transient``); tests compare the two on a real server. Used for
contexts the fast path does not serve (nkey, creds) and when ``$CCM_REPORT_CLIENT`` is
``nats-py``. Guarantees: bounded by the caller's deadline (plus one connect); errors
are ``describe``d (credential-free). Not: retries (``ReportPublisher.send`` retries).
"""
from __future__ import annotations

import time

from ccm.fleet import STREAM
from ccm.fleet.wire import NoResponders, Refused, Transient
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Mapping


class ReferenceTransport:
    def __init__(self, context_name: str, environ: Mapping[str, str]):
        from ccm.nats.connection import Connection

        self.conn = Connection(context_name, dict(environ))

    def send(self, kind: str, subject: str, body: bytes, headers: Mapping[str, str], deadline: float) -> None:
        from ccm.fleet.publish import NoStream, Unreachable
        from ccm.nats import NatsError
        from ccm.nats.connection import describe

        left = max(0.1, deadline - time.monotonic())
        started = time.monotonic()

        async def op(nc: Any) -> Any:
            if kind == "nats":
                await nc.publish(subject, body, headers=dict(headers))
                await nc.flush(timeout=left)
                return None
            import nats.errors as ne
            import nats.js.errors as je

            js = nc.jetstream(prefix=self.conn.context().api_prefix, timeout=left)
            try:
                return await js.publish(subject, body, timeout=left, headers=dict(headers))
            except (ne.NoRespondersError, je.NoStreamResponseError):
                try:
                    await js.stream_info(STREAM)
                except je.NotFoundError:
                    raise NoStream(f"stream {STREAM} does not exist yet (create it with: ccm report init)") from None
                except Exception:
                    pass
                raise NoResponders("no responders (no stream for the subject, or none with a leader)") from None

        try:
            self.conn.run(op, left, "could not publish report")
            self.conn.raise_if_denied("could not publish report", started)
        except (NoStream, NoResponders):
            raise
        except NatsError as exc:
            text = str(exc)
            if "ermissions violation" in text.lower() or "ermission" in text:
                raise Refused(text) from None
            if "could not connect" in text or "timeout" not in text:   # a connect or context failure
                raise Unreachable(text) from None
            raise Transient(text) from None
        except Exception as exc:
            raise _mapped(exc, describe(exc)) from None

    def close(self) -> None:
        self.conn.close()


def _mapped(exc: BaseException, text: str) -> Exception:
    import nats.js.errors as je

    if isinstance(exc, je.APIError) and not (exc.code == 503 or exc.err_code in (10008, 10076, 10077)):
        return Refused(text)
    return Transient(text)
