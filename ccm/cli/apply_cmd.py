"""``ccm apply MANIFEST``: resolve a manifest completely, then run it."""
from __future__ import annotations

import os
import sys
from typing import Any, List

from ccm.cli.common import ArgumentParser, to_json
from ccm.cli.setup import add_bool, build_manager, cli_facts
from ccm.model.errors import ValidationError

EXIT_REJECTED = 1


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm apply", description="Apply a manifest")
    p.add_argument("manifest", help="local path, obj://BUCKET/KEY, or http(s)://[user:pass@]host/bundle.tar.gz")
    p.add_argument("--fact", action="append", default=[], metavar="K=V", help="extra facts")
    p.add_argument("--facts", metavar="FILE", help="extra facts file (JSON or YAML)")
    p.add_argument("--hiera", default=os.environ.get("CCM_HIERA_DATA") or None, metavar="SOURCE",
                   help="overriding Hiera data (env CCM_HIERA_DATA)")
    add_bool(p, "read-env", True, "read ./.env")
    p.add_argument("--noop", action="store_true", help="do not change anything")
    p.add_argument("--monitor-only", action="store_true", help="run only the health checks")
    p.add_argument("--render", action="store_true", help="print the resolved manifest and exit")
    add_bool(p, "report", True, "print the run summary")
    p.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context")
    p.add_argument("-R", "--registration", default="REGISTRATION", help="registration stream")
    p.add_argument("--detailed-exit-codes", action="store_true",
                   help="0 no changes, 2 changes, 4 failures, 6 changes and failures, 1 rejected")
    p.add_argument("--json", action="store_true", help="print one JSON document with every event and the summary")
    p.add_argument("--metrics-file", metavar="PATH", help="write the run's metrics in textfile-collector format")
    p.add_argument("--publish-registrations", choices=("nats", "jetstream"), help="publish register_when_stable entries")
    return p


def exit_code(result: Any, detailed: bool) -> int:
    if detailed:
        return (2 if result.changed else 0) + (4 if result.failed else 0)
    return 1 if result.failed else 0


def run(argv: List[str]) -> int:
    from ccm.cli.common import require_file

    args = parser().parse_args(argv)
    if args.facts:
        require_file(args.facts)
    if args.noop and args.monitor_only:
        from ccm.model.errors import UsageError

        raise UsageError("cannot set healthcheck only and noop mode at the same time")
    if not args.manifest.strip():
        raise ValidationError("source is required")
    metrics = None
    if args.metrics_file:
        parent = os.path.dirname(os.path.abspath(args.metrics_file))
        if not os.path.isdir(parent):
            raise ValidationError(f"--metrics-file {args.metrics_file}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ValidationError(f"--metrics-file {args.metrics_file}: directory {parent} is not writable")
        from ccm.metrics import Metrics

        metrics = Metrics()
    manager = build_manager(noop=args.noop, session_dir=os.environ.get("CCM_SESSION_STORE") or None,
                            extra_facts=cli_facts(args.fact, args.facts), read_env=args.read_env,
                            nats_context=args.context, registration_stream=args.registration, metrics=metrics)
    if args.json:
        manager.user_log.quiet = True
    if args.publish_registrations:
        from ccm.registration.publish import enable

        enable(manager, args.publish_registrations, args.registration)
    manifest = manager.load(args.manifest, hiera=args.hiera)
    try:
        if args.render:
            from ccm.apply import render_manifest

            sys.stdout.write(render_manifest(manifest) + "\n")
            return 0
        if manifest.pre_message and not args.json:
            print()
            print(manifest.pre_message)
        result = manager.execute(manifest, health_check_only=args.monitor_only)
        summary = result.summary
        if args.json:
            from ccm.report import json_report

            sys.stdout.write(to_json(json_report(manager.session.transaction_events(), summary)) + "\n")
        else:
            if manifest.post_message and summary.total_errors == 0:
                print(manifest.post_message)
            if args.report:
                from ccm.report import manifest_summary

                print()
                sys.stdout.write(manifest_summary(summary))
        if metrics is not None:
            from ccm.metrics import write_textfile

            write_textfile(metrics, args.metrics_file)
        return exit_code(result, args.detailed_exit_codes)
    finally:
        manifest.cleanup()
