"""``ccm obj put|get|rm BUCKET NAME [FILE]``: JetStream object store entries, without the nats CLI.

What ``ccm apply obj://BUCKET/NAME`` and the agent's object-store sources read, put there
from a host that has only ccm: ``put`` stores FILE (default: the file NAME; ``-``:
standard input) as object NAME, creating the bucket when it is missing (``--replicas``);
``get`` writes the object to FILE (``-`` or nothing: standard output), its SHA-256 digest
checked; ``rm`` deletes it. ``--context`` as for every other command.
"""
from __future__ import annotations

import os
import sys

from ccm.cli.common import ArgumentParser
from ccm.cli.kv_cmd import output_file
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm obj", description="Put, get and remove JetStream object store entries",
                       epilog="examples:\n  tar czf site.tgz -C site .\n"
                              "  ccm obj put MANIFESTS site.tgz            store the bundle as MANIFESTS/site.tgz\n"
                              "  ccm apply obj://MANIFESTS/site.tgz        apply it on any host\n"
                              "  ccm obj get MANIFESTS site.tgz copy.tgz\n"
                              "  ccm obj rm MANIFESTS site.tgz")
    sub = p.add_subparsers(dest="action", metavar="<action>", parser_class=ArgumentParser)
    sub.required = True
    put = sub.add_parser("put", help="store a file (creates the bucket when missing)")
    put.add_argument("bucket", help="the bucket")
    put.add_argument("name", help="the object name")
    put.add_argument("file", nargs="?", default="",
                     help="the file to store (default: the file NAME, stored under its base name; -: standard input)")
    put.add_argument("--replicas", type=int, default=1, help="replicas of a bucket created by this put")
    get = sub.add_parser("get", help="write an object")
    get.add_argument("bucket", help="the bucket")
    get.add_argument("name", help="the object name")
    get.add_argument("file", nargs="?", default="-", help="write it to FILE (default -: standard output)")
    rm = sub.add_parser("rm", aliases=["del"], help="delete an object")
    rm.add_argument("bucket", help="the bucket")
    rm.add_argument("name", help="the object name")
    for child in (put, get, rm):
        child.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"),
                           help="NATS context (env NATS_CONTEXT)")
    return p


def _put(conn: Any, args: Any) -> None:
    import tempfile

    from ccm.nats.admin import obj_put
    from ccm.nats.objstore import MAX_OBJECT

    path = args.file or args.name
    name = args.name if args.file else os.path.basename(args.name)
    with tempfile.TemporaryFile() if path == "-" else _open(path) as data:
        if path == "-":   # a stream may be read once: keep it for the library's retries
            _copy(sys.stdin.buffer, data, MAX_OBJECT)
        size = os.fstat(data.fileno()).st_size
        if size > MAX_OBJECT:
            raise ValidationError(
                f"{path} is larger than {MAX_OBJECT} bytes, the most ccm fetches from an object store")
        stored, created = obj_put(conn, args.bucket, name, data, replicas=args.replicas)
    if created:
        print(f"created object store bucket {args.bucket} with {args.replicas} "
              f"replica{'s' if args.replicas != 1 else ''}")
    print(f"put obj://{args.bucket}/{name}: {stored} bytes")


def _open(path: str) -> Any:
    from ccm.readfile import open_regular

    return os.fdopen(open_regular(path, "file"), "rb")


def _copy(src: Any, dst: Any, limit: int) -> None:
    total = 0
    while True:
        chunk = src.read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            raise ValidationError(f"standard input is larger than {limit} bytes")
        dst.write(chunk)
    dst.flush()


def _get(conn: Any, args: Any) -> None:
    import tempfile

    from ccm.nats.objstore import download

    if args.file != "-":
        with output_file(args.file) as out:
            download(conn, args.bucket, args.name, out)
        return
    with tempfile.TemporaryFile() as tmp:   # nothing reaches stdout before the digest is checked
        download(conn, args.bucket, args.name, tmp)
        tmp.seek(0)
        _copy(tmp, sys.stdout.buffer, 1 << 62)


def run(argv: List[str]) -> int:
    from ccm.nats.admin import obj_delete
    from ccm.nats.connection import Connection

    args = parser().parse_args(argv)
    conn = Connection(args.context)
    if args.action == "put":
        _put(conn, args)
    elif args.action == "get":
        _get(conn, args)
    else:
        obj_delete(conn, args.bucket, args.name)
        print(f"deleted obj://{args.bucket}/{args.name}")
    return 0
