"""``ccm kv put|get|rm BUCKET KEY [FILE|-]``: JetStream key-value entries, without the nats CLI.

What ``kvGet()`` and Hiera's ``kv://BUCKET/KEY`` read, put there from a host that has only
ccm: ``put`` stores FILE (``-`` or nothing: standard input) as the key's latest value,
creating the bucket when it is missing (``--replicas``); ``get`` writes the latest value
to FILE (``-`` or nothing: standard output); ``rm`` deletes the key. The NATS context is
``--context`` (env ``NATS_CONTEXT``, default ``CCM``), as for every other command.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from ccm.cli.common import ArgumentParser
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, IO, Iterator, List

MAX_VALUE = 8 << 20


def _common(p: Any) -> None:
    p.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context (env NATS_CONTEXT)")


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm kv", description="Put, get and remove JetStream key-value entries",
                       epilog="examples:\n  ccm kv put CONFIG motd motd.txt           store a file as CONFIG/motd\n"
                              "  echo hello | ccm kv put CONFIG motd       from standard input\n"
                              "  ccm kv get CONFIG motd                    print the value\n"
                              "  ccm kv rm CONFIG motd\n"
                              "then: kvGet('CONFIG', 'motd') in templates, --hiera kv://CONFIG/data")
    sub = p.add_subparsers(dest="action", metavar="<action>", parser_class=ArgumentParser)
    sub.required = True
    put = sub.add_parser("put", help="store a value (creates the bucket when missing)")
    put.add_argument("bucket", help="the bucket")
    put.add_argument("key", help="the key")
    put.add_argument("file", nargs="?", default="", help="read the value from FILE (- or nothing: standard input, "
                                                         "which must then not be a terminal)")
    put.add_argument("--replicas", type=int, default=1, help="replicas of a bucket created by this put")
    _common(put)
    get = sub.add_parser("get", help="write the latest value")
    get.add_argument("bucket", help="the bucket")
    get.add_argument("key", help="the key")
    get.add_argument("file", nargs="?", default="-", help="write the value to FILE (default -: standard output)")
    _common(get)
    rm = sub.add_parser("rm", aliases=["del"], help="delete a key")
    rm.add_argument("bucket", help="the bucket")
    rm.add_argument("key", help="the key")
    _common(rm)
    return p


def stdin_unless_terminal(path: str) -> str:
    """No FILE given: standard input, when something is piped in (not a terminal to wait on)."""
    if path:
        return path
    if sys.stdin.isatty():
        from ccm.model.errors import UsageError

        raise UsageError("nothing to store: give a FILE, or pipe the data in (- reads standard input)")
    return "-"


def read_input(path: str, limit: int, what: str) -> bytes:
    """FILE's bytes, or standard input's for ``-``, bounded by ``limit``."""
    from ccm.readfile import read_bytes, read_stream

    if path == "-":
        return read_stream(sys.stdin.buffer, f"{what} from standard input", limit=limit)
    return read_bytes(path, what, limit=limit)


def write_output(path: str, data: bytes) -> None:
    """To standard output for ``-``, else to FILE (``output_file``)."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with output_file(path) as out:
        out.write(data)


@contextmanager
def output_file(path: str) -> Iterator[IO[bytes]]:
    """FILE replaced atomically, mode 0600 (what is fetched may be a secret); an error
    leaves FILE as it was."""
    from ccm.fsafe import atomic_replace
    from ccm.model.errors import ProviderError

    try:
        with atomic_replace(os.path.abspath(path), mode=0o600) as out:
            yield out
    except (OSError, ProviderError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValidationError(f"cannot write {path}: {reason}") from None


def run(argv: List[str]) -> int:
    from ccm.nats import kv
    from ccm.nats.admin import kv_delete, kv_put
    from ccm.nats.connection import Connection

    args = parser().parse_args(argv)
    conn = Connection(args.context)
    if args.action == "put":
        value = read_input(stdin_unless_terminal(args.file), MAX_VALUE, "value")
        revision, created = kv_put(conn, args.bucket, args.key, value, replicas=args.replicas)
        if created:
            print(f"created KV bucket {args.bucket} with {args.replicas} replica{'s' if args.replicas != 1 else ''}")
        print(f"put {args.bucket} {args.key}: revision {revision}, {len(value)} bytes")
    elif args.action == "get":
        write_output(args.file, kv.get(conn, args.bucket, args.key))
    else:
        kv_delete(conn, args.bucket, args.key)
        print(f"deleted {args.bucket} {args.key}")
    return 0

