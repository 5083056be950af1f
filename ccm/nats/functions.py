"""The NATS-backed template functions: ``kvGet(bucket, key)`` and
``registrations(cluster, protocol, service, address)``.

``template_functions(manager)`` returns closures over the manager; nothing is imported
or connected until a template calls one, and then the manager's one connection is used.
Failures raise ``ExprError("kvGet: ...")`` / ``ExprError("registrations: ...")``, which
fail only the resource whose template called them.
"""
from __future__ import annotations

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List

NAMES = frozenset({"kvGet", "registrations"})


def template_functions(manager: Any) -> Dict[str, Callable[..., Any]]:
    def kv_get(*args: Any) -> str:
        from ccm.expr import ExprError

        if len(args) != 2:
            raise ExprError("kvGet: requires 2 arguments, bucket and key")
        bucket, key = args
        if not isinstance(bucket, str) or not isinstance(key, str):
            raise ExprError("kvGet: arguments must be strings")
        from ccm.nats import kv

        try:
            value = kv.get(manager.nats_connection(), bucket, key)
        except CCMError as exc:
            raise ExprError(f"kvGet: {exc}") from None
        return value.decode("utf-8", "replace")

    def registrations(*args: Any) -> Any:
        from ccm.expr import ExprError

        if len(args) != 4:
            raise ExprError("registrations: requires 4 arguments, cluster, protocol, service and address")
        if not all(isinstance(a, str) for a in args):
            raise ExprError("registrations: arguments must be strings")
        from ccm.registration import stream

        try:
            return stream.lookup(manager.nats_connection(), manager.registration_stream, *args)
        except CCMError as exc:
            raise ExprError(f"registrations: {exc}") from None

    return {"kvGet": kv_get, "registrations": registrations}


def kv_loader_for(context_name: str) -> Callable[[str, str], bytes]:
    """A Hiera ``kv_loader`` for commands without a manager (``ccm hiera parse``)."""
    conns: List[Any] = []

    def load(bucket: str, key: str) -> bytes:
        from ccm.nats.connection import Connection
        from ccm.nats.kv import hiera_loader

        if not conns:
            conns.append(Connection(context_name))
        value: bytes = hiera_loader(conns[0])(bucket, key)
        return value

    return load
