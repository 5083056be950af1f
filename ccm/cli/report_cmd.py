"""``ccm report init|fleet|show|watch``: fleet reports in the ``CCM_REPORTS`` stream.

Every subcommand takes ``--context`` (env ``NATS_CONTEXT``, default ``CCM``). Reading
commands exit 0 whenever they can read the stream, also when nothing matches, and fail
with one line naming the servers and the context when they cannot (within about 5 s).
Malformed messages are skipped and counted (``malformed=N`` in the summary line).
"""
from __future__ import annotations

import os
import sys
import time

from ccm.cli.common import ArgumentParser, parse_map, to_yaml
from ccm.nats import NatsError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

EXAMPLES = """\
examples:
  ccm report init --replicas 3 --max-age 30d     create the stream (idempotent)
  ccm report fleet                               every host's last run, newest first
  ccm report fleet --failed --label role=web     failed web hosts and why
  ccm report fleet --stale 2h --html fleet.html  a page; hosts silent for 2h are stale
  ccm report fleet --stale 2h --prometheus > /var/lib/node_exporter/ccm_fleet.prom.tmp
  ccm report show web1.example.net --history 10  one host's last ten runs in full
  ccm report watch --failed                      failed runs as they are reported
"""


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm report", description="Fleet reports over NATS JetStream", epilog=EXAMPLES)
    common = ArgumentParser(add_help=False)
    common.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    sp = sub.add_parser("init", parents=[common], help="create or update the CCM_REPORTS stream")
    sp.add_argument("--replicas", type=int, default=1, help="stream replicas (1..5)")
    sp.add_argument("--max-age", default="30d", help="how long reports are kept (history)")

    sp = sub.add_parser("fleet", parents=[common], help="every host's last run, newest first")
    which = sp.add_mutually_exclusive_group()
    which.add_argument("--failed", action="store_true", help="only hosts whose last run failed")
    which.add_argument("--changed", action="store_true", help="only hosts whose last run changed something")
    sp.add_argument("--stale", metavar="DURATION", help="hosts without a report for this long are stale (e.g. 2h)")
    sp.add_argument("--label", action="append", default=[], metavar="K=V",
                    help="only hosts with this label, repeatable")
    out = sp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON output")
    out.add_argument("--yaml", action="store_true", help="YAML output")
    out.add_argument("--html", metavar="FILE", help="write a self-contained HTML page to FILE")
    out.add_argument("--prometheus", action="store_true", help="gauges for a textfile collector")

    sp = sub.add_parser("show", parents=[common], help="one host's last runs in full")
    sp.add_argument("host", help="the host name (or its instance token)")
    sp.add_argument("--history", type=int, metavar="N", help="the last N runs (default: the last run of each manifest)")
    sp.add_argument("--json", action="store_true", help="JSON output")

    sp = sub.add_parser("watch", parents=[common], help="reports as they arrive")
    sp.add_argument("--failed", action="store_true", help="only failed runs")
    sp.add_argument("--json", action="store_true", help="one JSON document a line")
    return p


def run(argv: List[str]) -> int:
    p = parser()
    args = p.parse_args(argv)
    if not args.command:
        p.print_help()
        return 1
    conn = ReadConnection(args.context)
    try:
        return int(_COMMANDS[args.command](conn, args))
    except NatsError as exc:
        raise NatsError(_where(conn, str(exc))) from None
    finally:
        conn.close()


class ReadConnection:
    """The commands' connection: the context at once, ``ccm.nats.connection`` (asyncio, ssl,
    logging: ~30 ms of a fleet read's start) only when nats-py is needed (init, watch, the
    reference read); the fast reads (``ccm.fleet.fastread``) need only the context."""

    def __init__(self, context_name: str):
        self.context_name = context_name
        self._ctx: Any = None
        self._conn: Any = None

    def connection(self) -> Any:
        if self._conn is None:
            from ccm.nats.connection import Connection

            self._conn = Connection(self.context_name)
        return self._conn

    def context(self) -> Any:
        if self._conn is not None:
            return self._conn.context()
        if self._ctx is None:
            from ccm.nats.context import load

            self._ctx = load(self.context_name)
        return self._ctx

    def jetstream(self, *args: Any, **kwargs: Any) -> Any:
        return self.connection().jetstream(*args, **kwargs)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def _where(conn: Any, text: str) -> str:
    """The error with the servers and the context named (connect errors name them already)."""
    if "(context " in text:
        return text
    try:
        ctx = conn.context()
    except NatsError:
        return text
    hint = "; create it with: ccm report init" if "not found" in text else ""
    return f"{text} (servers {ctx.display_servers()}, context {ctx.name!r}){hint}"


def _init(conn: Any, args: Any) -> int:
    from ccm.fleet import stream
    from ccm.log import UserLogger

    info = stream.init(conn.connection(), replicas=args.replicas, max_age=args.max_age)
    cfg = info.config
    UserLogger().info("Report stream ready", stream=cfg.name, subjects=list(cfg.subjects or []),
                      replicas=cfg.num_replicas or args.replicas, max_age=args.max_age)
    return 0


def _stale_seconds(text: Optional[str]) -> Optional[float]:
    if not text:
        return None
    from ccm.model.durations import DurationError, parse_duration
    from ccm.model.errors import UsageError

    try:
        seconds = parse_duration(text)
    except (DurationError, ValueError) as exc:
        raise UsageError(f"invalid --stale duration {text!r}: {exc}") from None
    if seconds <= 0:
        raise UsageError(f"invalid --stale duration {text!r}: must be greater than zero")
    return seconds


def _fleet(conn: Any, args: Any) -> int:
    from ccm.fleet import stream, view

    stale = _stale_seconds(args.stale)
    labels = parse_map(args.label)
    fleet = stream.read_fleet(conn, failed=args.failed)
    outcome = "failed" if args.failed else "changed" if args.changed else ""
    rows = fleet.rows(time.time(), stale=stale, outcome=outcome, labels=labels)
    counts = view.summary(rows, fleet.malformed)
    if args.json:
        write_json(sys.stdout, rows, counts)
    elif args.yaml:
        write_yaml(sys.stdout, rows, counts)
    elif args.prometheus:
        from ccm.fleet.prom import textfile

        sys.stdout.write(textfile(rows, fleet.malformed))
    elif args.html:
        _write_html(args.html, rows, counts, args.stale)
        sys.stdout.write(f"wrote {args.html}: {view.summary_line(counts)}\n")
    else:
        sys.stdout.write(view.text(rows, counts))
    return 0


def write_json(out: Any, rows: List[Any], counts: Dict[str, int]) -> None:
    """``{"hosts": [...], "summary": {...}}`` with one host a line, written host by host:
    10,000 hosts never sit in memory as one document (nor one string)."""
    import json

    line = _row_line()
    out.write('{"hosts": [')
    chunk: List[str] = []
    for i, row in enumerate(rows):
        chunk.append(("," if i else "") + "\n" + line(row))
        if len(chunk) == 500:
            out.write("".join(chunk))
            chunk.clear()
    out.write("".join(chunk) + ('\n' if rows else '') + '],\n"summary": ' + json.dumps(counts) + "}\n")


def _row_line() -> Any:
    """One host's JSON line: ``ccm.fleet.rowjson`` (the fast path), or ``json.dumps`` of
    ``Row.to_dict`` with ``$CCM_REPORT_CLIENT=nats-py``."""
    if os.environ.get("CCM_REPORT_CLIENT", "") != "nats-py":
        from ccm.fleet.rowjson import RowWriter

        return RowWriter().line
    import json

    return lambda row: json.dumps(row.to_dict(), ensure_ascii=False, separators=(",", ":"))


def write_yaml(out: Any, rows: List[Any], counts: Dict[str, int]) -> None:
    """The YAML of the same document (``to_yaml``'s), written host by host."""
    if not rows:
        out.write(to_yaml({"hosts": [], "summary": counts}))
        return
    out.write("hosts:\n")
    for row in rows:
        out.write(to_yaml([row.to_dict()]))
    out.write(to_yaml({"summary": counts}))


def _json(doc: Any) -> str:
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _write_html(path: str, rows: List[Any], counts: Dict[str, int], stale: Optional[str]) -> None:
    from ccm import fsafe
    from ccm.fleet.html import page
    from ccm.model.errors import CCMError
    from ccm.gocompat.rfc3339 import rfc3339

    text = page(rows, counts, generated=rfc3339(time.time_ns()), stale=stale)
    try:
        with fsafe.atomic_replace(os.path.abspath(path), mode=0o644) as fh:
            fh.write(text.encode("utf-8"))
    except OSError as exc:
        raise CCMError(f"cannot write --html {path}: {exc.strerror or exc}") from None


def _show(conn: Any, args: Any) -> int:
    from ccm.fleet import stream, subjects

    if args.history is not None and args.history < 1:
        from ccm.model.errors import UsageError

        raise UsageError("--history must be at least 1")
    try:
        found = stream.read_host(conn, subjects.instance_token(args.host), args.history)
        if not found.reports() and len(args.host) == 16 and all(c in "0123456789abcdef" for c in args.host):
            found = stream.read_host(conn, args.host, args.history)   # given as its instance token
    except subjects.ReportInputError as exc:
        from ccm.model.errors import UsageError

        raise UsageError(str(exc)) from None
    reports = found.reports()
    if args.json:
        sys.stdout.write(_json({"reports": [doc for _, doc in reports], "malformed": found.malformed}))
        return 0
    if not reports:
        print(f"No reports for {args.host}")
    for _subject, doc in reports:
        sys.stdout.write(show_text(doc) + "\n")
    if found.malformed:
        print(f"malformed={found.malformed} (skipped)")
    return 0


def show_text(doc: Dict[str, Any]) -> str:
    """One run in full, as ``ccm report show`` prints it."""
    from ccm.fleet import document
    from ccm.fleet.view import labels_text

    counts = " ".join(f"{k}={v}" for k, v in doc["summary"].items())
    lines = [f"{doc['hostname']} ({doc['instance']}) {labels_text(doc.get('labels') or {})}",
             f"       manifest: {doc['manifest']['source']}",
             f"         sha256: {doc['manifest'].get('sha256') or '-'}",
             f"            run: {doc['start']} .. {doc['end']} ({doc.get('duration', 0)}s)",
             f"        outcome: {document.outcome(doc)} (exit code {doc.get('exit_code')}"
             f"{', noop' if doc.get('noop') else ''})",
             f"         counts: {counts}"]
    if doc.get("error"):
        lines.append(f"       rejected: {doc['error']}")
    for r in doc.get("resources") or ():
        error = f": {r.get('error')}" if r.get("error") else ""
        lines.append(f"  {r.get('outcome', ''):>13}: {r.get('resource', '')}{error}")
    return "\n".join(lines) + "\n"


def _watch(conn: Any, args: Any) -> int:
    from ccm.fleet import document, stream
    from ccm.fleet.view import labels_text

    malformed = 0
    try:
        for subject, doc in stream.watch(conn.connection()):
            if doc is None:
                malformed += 1
                sys.stderr.write(f"ccm: skipped a malformed report on {subject} ({malformed} so far)\n")
                continue
            outcome = document.outcome(doc)
            if args.failed and outcome != "failed":
                continue
            if args.json:
                sys.stdout.write(_compact(doc))
            else:
                s = doc["summary"]
                failed = next((r for r in doc.get("resources") or () if r.get("outcome") == "failed"), None)
                if doc.get("error"):
                    failed = {"resource": "manifest", "error": doc["error"]}
                tail = f"  {failed['resource']}: {failed.get('error', '')}" if failed else ""
                sys.stdout.write(f"{doc['end']}  {doc['hostname']}  {labels_text(doc.get('labels') or {})}  "
                                 f"{outcome}  total={s.get('total', 0)} changed={s.get('changed', 0)} "
                                 f"failed={s.get('failed', 0)}  {doc['manifest']['source']}{tail}\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        return 0
    return 0


def _compact(doc: Any) -> str:
    import json

    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"


_COMMANDS = {"init": _init, "fleet": _fleet, "show": _show, "watch": _watch}
