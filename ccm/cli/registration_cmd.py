"""``ccm registration|reg|r init|create|rm|query|watch``: the registration stream by hand.

Every subcommand takes ``--context`` (env ``NATS_CONTEXT``, default ``CCM``) and
``-R/--registration`` (default ``REGISTRATION``); semantics in spec registration.md.
"""
from __future__ import annotations

import argparse
import os
import sys

from ccm.cli.common import ArgumentParser, parse_map, to_yaml
from ccm.log import UserLogger
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List

SUBCOMMANDS = {"init": "init", "create": "create", "c": "create", "rm": "rm", "delete": "rm",
               "query": "query", "q": "query", "watch": "watch"}


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm registration", description="Manage service registrations")
    common = ArgumentParser(add_help=False)
    common.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context")
    common.add_argument("-R", "--registration", default="REGISTRATION", help="registration stream name")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    sp = sub.add_parser("init", parents=[common], help="create or update the registration stream")
    sp.add_argument("--replicas", type=int, default=1, help="stream replicas (1..5)")
    sp.add_argument("--max-age", default="1m", help="how long entries live without a refresh")

    def entry_flags(sp: argparse.ArgumentParser) -> None:
        for flag in ("cluster", "service", "protocol", "address"):
            sp.add_argument(f"--{flag}", required=True, help=f"the entry's {flag} (required)")
        sp.add_argument("--port", type=int, required=True, help="the entry's port (required)")

    sp = sub.add_parser("create", aliases=["c"], parents=[common], help="publish an entry (JetStream)")
    entry_flags(sp)
    sp.add_argument("--priority", type=int, default=100, help="entry priority, lower is preferred")
    sp.add_argument("--ttl", default="30s", help="entry TTL (duration or never)")
    sp.add_argument("-A", "--annotation", action="append", default=[], metavar="K=V",
                    help="an annotation on the entry, repeatable")

    sp = sub.add_parser("rm", aliases=["delete"], parents=[common], help="remove an entry")
    entry_flags(sp)
    sp.add_argument("--force", action="store_true", help="do not ask for confirmation")

    for name, aliases, last in (("query", ["q"], "address"), ("watch", [], "ip")):
        sp = sub.add_parser(name, aliases=aliases, parents=[common],
                            help="list entries" if name == "query" else "follow changes")
        for arg in ("cluster", "protocol", "service", last):
            sp.add_argument(arg, nargs="?", default="*", help=f"{arg} to match")
        sp.add_argument("--json", action="store_true", help="JSON output")
        if name == "query":
            sp.add_argument("--yaml", action="store_true", help="YAML output")
    return p


def run(argv: List[str]) -> int:
    p = parser()
    args = p.parse_args(argv)
    if not args.command:
        p.print_help()
        return 1
    from ccm.nats.connection import Connection

    conn = Connection(args.context)
    try:
        return _COMMANDS[SUBCOMMANDS[args.command]](conn, args)
    finally:
        conn.close()


def _entry(args: argparse.Namespace, **extra: Any) -> Any:
    from ccm.registration.entry import from_mapping

    raw: Dict[str, Any] = {"cluster": args.cluster, "service": args.service, "protocol": args.protocol,
                           "address": args.address, "port": args.port}
    raw.update(extra)
    return from_mapping(raw)


def _init(conn: Any, args: argparse.Namespace) -> int:
    from ccm.registration import stream

    settings = stream.init(conn, args.registration, replicas=args.replicas, max_age=args.max_age)
    UserLogger().info("Registration stream ready", stream=settings.name, subjects=settings.subjects,
                      replicas=settings.replicas)
    return 0


def _create(conn: Any, args: argparse.Namespace) -> int:
    from ccm.registration.publish import Publisher

    entry = _entry(args, priority=args.priority, ttl=args.ttl, annotations=parse_map(args.annotation))
    Publisher(conn, "jetstream", args.registration).publish(entry)
    UserLogger().info("Registration entry created", cluster=entry.cluster, service=entry.service,
                      protocol=entry.protocol, address=entry.address, port=entry.port, priority=entry.priority)
    return 0


def _confirm(question: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        return False
    sys.stdout.write(f"{question} (y/N) ")
    sys.stdout.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _rm(conn: Any, args: argparse.Namespace) -> int:
    from ccm.registration import stream

    entry = _entry(args, priority=1)
    question = (f"Remove registration entry {entry.cluster}/{entry.service}/{entry.protocol} "
                f"at {entry.address}:{entry.port}?")
    if not args.force and not _confirm(question):
        sys.stderr.write("not removed (confirm interactively or use --force)\n")
        return 1
    stream.remove(conn, args.registration, entry)
    UserLogger().info("Registration entry removed", cluster=entry.cluster, service=entry.service,
                      protocol=entry.protocol, address=entry.address, port=entry.port)
    return 0


def text_listing(entries: List[Any]) -> str:
    out: List[str] = []
    last = None
    for e in sorted(entries, key=lambda e: (e.cluster, e.protocol, e.service)):
        if (e.cluster, e.service) != last:
            out += [f"Service: {e.service} @ {e.cluster}", ""]
            last = (e.cluster, e.service)
        out += [f"       Cluster: {e.cluster}", f"      Protocol: {e.protocol}", f"       Service: {e.service}",
                f"       Address: {e.address}"]
        if e.port is not None:
            out.append(f"          Port: {e.port}")
        out.append(f"      Priority: {e.priority}")
        if e.TTL:
            out.append(f"           TTL: {e.TTL}")
        if e.annotations:
            out.append("   Annotations:")
            out += [f"                {k}: {e.annotations[k]}" for k in sorted(e.annotations)]
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def _query(conn: Any, args: argparse.Namespace) -> int:
    from ccm.registration import stream

    entries = stream.lookup(conn, args.registration, args.cluster, args.protocol, args.service, args.address)
    if args.json:
        from ccm.registration.entry import dumps

        sys.stdout.write(dumps([e.as_dict() for e in entries], indent=2) + "\n")
    elif args.yaml:
        text = to_yaml([e.as_dict() for e in entries])
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    elif not entries:
        print("No results found")
    else:
        sys.stdout.write(text_listing(list(entries)))
    return 0


def _watch(conn: Any, args: argparse.Namespace) -> int:
    import json

    from ccm.registration import stream

    ulog = UserLogger()
    try:
        for ev in stream.watch(conn, args.registration, args.cluster, args.protocol, args.service, args.ip):
            e = ev.entry
            if args.json:
                doc: Dict[str, Any] = {"action": ev.action, "entry": e.as_dict()}
                if ev.action == "remove":
                    doc["reason"] = ev.reason
                sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")
                sys.stdout.flush()
            elif ev.action == "remove":
                ulog.warn("Removed entry", cluster=e.cluster, service=e.service, protocol=e.protocol,
                          address=e.address, reason=ev.reason)
            else:
                attrs: Dict[str, Any] = {"cluster": e.cluster, "service": e.service, "protocol": e.protocol,
                                         "address": e.address, "port": e.port}
                if e.TTL:
                    attrs["ttl"] = e.TTL
                ulog.info("Updated entry", **attrs)
                sys.stdout.flush()
    except KeyboardInterrupt:
        return 0
    return 0


_COMMANDS = {"init": _init, "create": _create, "rm": _rm, "query": _query, "watch": _watch}
