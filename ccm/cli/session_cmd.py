"""``ccm session new|report``: sessions for shell scripts driving ``ccm ensure``."""
from __future__ import annotations

import os
import sys
import tempfile

from ccm.cli.common import ArgumentParser, to_json
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm session", description="Manage shell-script sessions")
    sub = p.add_subparsers(dest="action", metavar="<action>", parser_class=ArgumentParser)
    new = sub.add_parser("new", aliases=["start", "create"], help="create a session directory")
    new.add_argument("--directory", metavar="DIR", help="use DIR (created, must not exist yet)")
    rep = sub.add_parser("report", help="summarise a session")
    rep.add_argument("--session", default=os.environ.get("CCM_SESSION_STORE") or None, metavar="DIR",
                     help="the session directory (env CCM_SESSION_STORE)")
    rep.add_argument("--remove", action="store_true",
                     help="remove the session directory afterwards (only under TMPDIR)")
    rep.add_argument("--json", action="store_true", help="every event and the summary as one JSON document")
    return p


def run(argv: List[str]) -> int:
    args = parser().parse_args(argv)
    if args.action in ("new", "start", "create"):
        if args.directory:
            if os.path.isdir(args.directory):
                raise ValidationError(f"session store {args.directory} already exists")
            os.makedirs(args.directory, mode=0o700)
            directory = args.directory
        else:
            directory = tempfile.mkdtemp(prefix="ccm-session-")
        print(f"export CCM_SESSION_STORE={directory}")
        return 0
    if args.action == "report":
        if not args.session:
            raise ValidationError("no session store specified")
        from ccm.session.directory import DirectoryStore

        from ccm.session.directory import check_store

        store = DirectoryStore(args.session)
        check_store(store.directory, must_exist=True)
        summary = store.summary()
        if args.json:
            from ccm.report import json_report

            sys.stdout.write(to_json(json_report(store.transaction_events(), summary)) + "\n")
        else:
            from ccm.report import session_summary

            sys.stdout.write(session_summary(summary))
        if args.remove:
            tmp = os.path.realpath(tempfile.gettempdir())
            target = os.path.abspath(args.session)
            parent = os.path.realpath(os.path.dirname(target))
            if parent == tmp or parent.startswith(tmp + os.sep):
                store.destroy()   # our event files only, never through a symlink
        return 0
    raise parser().missing_subcommand()
