"""``ccm apply MANIFEST``: resolve a manifest completely, then run it."""
from __future__ import annotations

import os
import sys

from ccm.cli.fastargs import bool_option, option
from ccm.cli.setup import build_manager, cli_facts
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

    from ccm.cli.common import ArgumentParser
    from ccm.cli.fastargs import Option

EXIT_REJECTED = 1

EXAMPLES = """\
examples:
  ccm apply manifest.yaml                       apply a local manifest
  ccm apply --noop site.tar.gz                  show what a bundle would change
  ccm apply ./site/                             a directory holding manifest.yaml
  ccm apply --checksum sha256:9f86d0... file:///srv/ccm/site.tgz
  ccm apply https://user:pass@repo.example/site.tar.gz
  ccm apply --quiet --detailed-exit-codes --last-run /var/lib/ccm/last_run.json site.tgz

Global flags (--quiet, --log-level, --color, --syslog, --debug) go anywhere: see ccm --help.
"""

EXIT_CODES = """exit codes:
  0    success (with --detailed-exit-codes: no changes)
  1    a resource failed, or the manifest or command line was rejected
  2/4/6  with --detailed-exit-codes: changes / failures / both
  8    skipped: another ccm run holds the host-wide run lock (nothing was changed; see --wait-lock);
       8 sets neither the changed (2) nor the failed (4) bit of --detailed-exit-codes
  129/130/143  interrupted by SIGHUP/SIGINT/SIGTERM (the partial summary is printed)
"""


def manifest_input_options() -> List[Option]:
    """What a manifest is resolved from (shared by ``apply`` and ``validate``)."""
    return [
        option("manifest", help="manifest file, directory holding manifest.yaml, .tar.gz/.tgz bundle, "
                                "file:// URL to any of those, obj://BUCKET/KEY, or "
                                "http(s)://[user:pass@]host/bundle.tar.gz"),
        option("--fact", action="append", default=[], metavar="K=V", help="extra facts, repeatable"),
        option("--facts", metavar="FILE", help="extra facts file (JSON or YAML)"),
        option("--hiera", default=os.environ.get("CCM_HIERA_DATA") or None, metavar="SOURCE",
               help="overriding Hiera data (env CCM_HIERA_DATA)"),
        *bool_option("read-env", True, "read ./.env"),
        option("--checksum", metavar="sha256:HEX",
               help="refuse the bundle (or manifest file) unless its sha256 matches, before extracting it"),
    ]


def add_manifest_inputs(p: ArgumentParser) -> None:
    from ccm.cli.fastargs import add_options

    add_options(p, manifest_input_options())


def options() -> List[Option]:
    """``ccm apply``'s flags, in --help order (``parser()`` and the argparse-free parse)."""
    return manifest_input_options() + [
        option("--noop", action="store_true", help="do not change anything"),
        option("--diff", dest="diff", action="store_true", default=None,
               help="print a unified diff of each file content change (default with --noop on a terminal)"),
        option("--no-diff", dest="diff", action="store_false", help="never print content diffs"),
        option("--monitor-only", action="store_true", help="run only the health checks"),
        option("--render", action="store_true", help="print the resolved manifest and exit"),
        *bool_option("report", True, "print the run summary"),
        option("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context (env NATS_CONTEXT)"),
        option("-R", "--registration", default="REGISTRATION", help="registration stream"),
        option("--detailed-exit-codes", action="store_true",
               help="0 no changes, 2 changes, 4 failures, 6 changes and failures, 1 rejected"),
        option("--json", action="store_true", help="print one JSON document with every event and the summary"),
        option("--metrics-file", metavar="PATH",
               help="write the run's metrics in textfile-collector format, with the last run's time and "
                    "exit code"),
        option("--last-run", metavar="FILE",
               help="write a JSON record of this run (times, manifest, exit code, counts, failed resources), "
                    "atomically, whatever the outcome"),
        option("--publish-registrations", choices=("nats", "jetstream"), help="publish register_when_stable entries"),
        option("--publish-report", choices=("nats", "jetstream"),
               help="publish this run's report to the fleet (stream CCM_REPORTS, see ccm report); queued under "
                    "the state directory when it cannot be delivered"),
        option("--wait-lock", metavar="DURATION", default="0s",
               help="wait up to DURATION (e.g. 30s, 5m) for another run's host-wide lock instead of "
                    "exiting 8 (skipped) at once"),
    ]


def parser() -> ArgumentParser:
    from ccm.cli.common import ArgumentParser
    from ccm.cli.fastargs import add_options

    p = ArgumentParser(prog="ccm apply", description="Apply a manifest", epilog=EXAMPLES + "\n" + EXIT_CODES)
    add_options(p, options())
    return p


def wait_lock_seconds(text: str) -> float:
    if text == "0s":  # the default: no need to parse it
        return 0.0
    from ccm.model.durations import DurationError, parse_duration
    from ccm.model.errors import UsageError

    try:
        return max(0.0, float(parse_duration(text)))
    except (DurationError, ValueError) as exc:
        raise UsageError(f"invalid --wait-lock duration {text!r}: {exc}") from None


def exit_code(result: Any, detailed: bool) -> int:
    if detailed:
        return (2 if result.changed else 0) + (4 if result.failed else 0)
    return 1 if result.failed else 0


def run(argv: List[str]) -> int:
    from ccm.cli.fastargs import parse

    args: Any = parse(options(), argv)  # a plain command line: no argparse at all
    if args is None:
        args = parser().parse_args(argv)
    _check_args(args)
    metrics = _metrics(args.metrics_file) if args.metrics_file else None
    record = None
    if args.last_run and not args.render:
        from ccm.lastrun import LastRun
        from ccm.remote import redact_url  # imports urllib only for URLs

        record = LastRun(manifest=redact_url(args.manifest), noop=args.noop)
    if args.render:
        metrics = None  # printing the resolved manifest is not a run: no run records
    rc: Optional[int] = None
    result: Any = None
    manager: Any = None
    rejected = ""   # the error of a manifest rejected before its run
    failure: Any = None   # (exit code, error) of a run that ended in an exception
    report = _report_setup(args)
    try:
        manager = build_manager(noop=args.noop, session_dir=os.environ.get("CCM_SESSION_STORE") or None,
                                extra_facts=cli_facts(args.fact, args.facts), read_env=args.read_env,
                                nats_context=args.context, registration_stream=args.registration,
                                metrics=metrics)
        run_opts = run_options(args, manager)
        wait = wait_lock_seconds(args.wait_lock)
        if args.render:
            return _render(args, manager)
        from ccm import interrupt
        from ccm.locks import EXIT_LOCKED, RunLockHeld, acquire_run_lock

        try:
            # a noop changes nothing: it neither waits for nor holds the run lock (README)
            lock = None if args.noop else acquire_run_lock(args.manifest, wait)
        except RunLockHeld as exc:
            # another run is at work and writes its own records: leave them alone
            record = metrics = None
            sys.stderr.write(f"ccm: {exc}\n")
            if args.json:
                _json_refusal(args, exc, skipped=True)
            return EXIT_LOCKED
        try:
            with interrupt.guard():
                rc, result = _apply(args, manager, run_opts, report[1] if report else None)
                return rc
        finally:
            if lock is not None:
                lock.release()
    except BaseException as exc:
        if rc is None and args.json and isinstance(exc, Exception) and not args.render:
            _json_refusal(args, exc)
        if rc is None:
            failure = (130 if isinstance(exc, KeyboardInterrupt) else EXIT_REJECTED, str(exc) or type(exc).__name__)
            rejected = failure[1] if isinstance(exc, Exception) else ""
        raise
    finally:
        _publish_report(report, rc, result, manager, record, rejected)   # before the records: they note its delivery
        if rc is not None:
            _finish(args, record, metrics, rc, result, "", manager)
        elif failure is not None and (record is not None or metrics is not None):
            _finish(args, record, metrics, failure[0], None, failure[1])


def _check_args(args: Any) -> None:
    """What the command line alone can tell is wrong, before anything is built."""
    if args.facts:
        from ccm.cli.common import require_file

        require_file(args.facts, "--facts")
    if args.noop and args.monitor_only:
        from ccm.model.errors import UsageError

        raise UsageError("cannot set healthcheck only and noop mode at the same time")
    if not args.manifest.strip():
        raise ValidationError("source is required")
    if args.checksum is not None:
        from ccm.remote import parse_checksum

        parse_checksum(args.checksum)


def _render(args: Any, manager: Any) -> int:
    """``--render``: the resolved manifest printed, nothing run."""
    from ccm.apply import render_manifest

    manifest = manager.load(args.manifest, hiera=args.hiera, checksum=args.checksum)
    try:
        sys.stdout.write(render_manifest(manifest, manager.template_environment()) + "\n")
        return 0
    finally:
        manifest.cleanup()


def _json_refusal(args: Any, exc: Exception, skipped: bool = False) -> None:
    """``--json`` of a run that did not happen (a rejected manifest, a held run lock): one
    document on stdout, as a run prints, saying why (the error line still goes to stderr)."""
    from ccm.apply.manifest import ManifestProblems
    from ccm.cli.common import to_json
    from ccm.log import escape_controls

    found = exc.problems if isinstance(exc, ManifestProblems) else [str(exc) or type(exc).__name__]
    problems = [escape_controls(p) for p in found]
    doc: Dict[str, Any] = {"manifest": redact_source(args.manifest), "rejected": not skipped, "skipped": skipped,
                           "error": "\n".join(problems), "problems": problems, "events": []}
    sys.stdout.write(to_json(doc) + "\n")


def _report_setup(args: Any) -> Any:
    """``--publish-report``: the publisher and the run's context (nothing of the report code
    is imported otherwise)."""
    if not args.publish_report or args.render:
        return None
    from ccm.fleet.publish import ReportPublisher, RunContext

    return (ReportPublisher(args.publish_report, context=args.context),
            RunContext(redact_source(args.manifest), noop=args.noop, labels=report_labels(args.fact)))


def redact_source(source: str) -> str:
    """The manifest as a report names it (and its subject's manifest id is made from): a
    local path made absolute, a URL with its credentials redacted."""
    if "://" not in source:
        return os.path.abspath(source)
    from ccm.redact import redact_url

    return redact_url(source)


def report_labels(facts: List[str]) -> Any:
    """Every ``--fact K=V`` of the command line, as the report's labels."""
    if not facts:
        return {}
    from ccm.cli.common import parse_map

    return parse_map(facts)


def _publish_report(report: Any, rc: Optional[int], result: Any, manager: Any, record: Any,
                    rejected: str = "") -> None:
    """The finished run's report (nested applies folded in), or the failed report of a
    manifest ``rejected`` before its run (so the fleet sees hosts whose manifest is
    broken); its delivery noted in the ``--last-run`` record; never raises, never changes
    ``rc``."""
    if report is None:
        return
    publisher, context = report
    try:
        if rejected:
            context.exit_code = EXIT_REJECTED
            if not context.manifest_sha256 and "://" not in context.manifest_source:
                from ccm.fleet.publish import file_sha256

                context.manifest_sha256 = file_sha256(context.manifest_source)
            delivered = publisher.rejected(context, rejected).delivered
        elif rc is None or result is None:   # another run holds the lock, or interrupted: no run to report
            return
        else:
            context.exit_code = rc
            context.events = manager.session.transaction_events()
            delivered = publisher.finished(result, context).delivered
        if record is not None:
            record.report_delivered = delivered
    finally:
        publisher.close()


def _metrics(path: str) -> Any:
    """The metrics of a run written to ``--metrics-file`` (whose directory must be writable)."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValidationError(f"--metrics-file {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValidationError(f"--metrics-file {path}: directory {parent} is not writable")
    from ccm.metrics import Metrics

    return Metrics()


def _finish(args: Any, record: Any, metrics: Any, rc: int, result: Any, error: str, manager: Any = None) -> None:
    """Write the run's record files (--last-run, --metrics-file): on success, failure or
    rejection. Both are attempted; the first that cannot be written is the error."""
    from ccm.model.errors import CCMError

    problems: List[str] = []
    if record is not None:
        events = manager.session.transaction_events() if (manager is not None and result is not None) else None
        record.finish(rc, summary=None if result is None else result.summary, events=events, error=error)
        try:
            record.write(args.last_run)
        except OSError as exc:
            problems.append(f"cannot write --last-run {args.last_run}: {exc.strerror or exc}")
    if metrics is not None:
        import time

        from ccm.metrics import write_textfile

        metrics.set("last_run_timestamp", time.time())
        metrics.set("last_run_exit_code", rc)
        try:
            write_textfile(metrics, args.metrics_file)
        except CCMError as exc:  # "cannot write metrics file PATH: reason"
            problems.append(str(exc))
    if problems and not error:
        raise CCMError("; ".join(problems))
    for problem in problems:  # the run already failed with its own error: do not hide it
        sys.stderr.write(f"ccm: error: {problem}\n")


def run_options(args: Any, manager: Any) -> Dict[str, Any]:
    """The options of the run (``Manager.execute``'s) the command line asks for."""
    publisher = None
    if args.publish_registrations:
        from ccm.registration.publish import publisher_for

        publisher = publisher_for(manager, args.publish_registrations, args.registration)
    # --json prints the events instead of log lines; without it nothing serialises the
    # recorded events, so the store keeps their flags and counters only
    return {"quiet": bool(args.json), "keep_events": bool(args.json), "publisher": publisher,
            "diff": _diff(args)}


def _diff(args: Any) -> bool:
    """``--diff``: the content diffs of a real run, and of a noop run (there by default on a
    terminal); never with ``--json`` (its events are the output)."""
    if args.json:
        return False
    if args.diff is not None:
        return bool(args.diff)
    return bool(args.noop) and sys.stdout.isatty()


def _apply(args: Any, manager: Any, options: Dict[str, Any], report: Any = None) -> "tuple[int, Any]":
    from ccm import interrupt, log

    quiet = log.quiet()
    manifest = manager.load(args.manifest, hiera=args.hiera, checksum=args.checksum)
    try:
        if report is not None:   # while a bundle's manifest file still exists
            from ccm.fleet.publish import file_sha256

            report.manifest_sha256 = file_sha256(manifest.path)
        if manifest.pre_message and not args.json and not quiet:
            print()
            print(manifest.pre_message)
        result = manager.execute(manifest, health_check_only=args.monitor_only, **options)
        summary = result.summary
        if args.json:
            from ccm.cli.common import to_json
            from ccm.report import json_report

            sys.stdout.write(to_json(json_report(manager.session.transaction_events(), summary)) + "\n")
        else:
            if manifest.post_message and summary.total_errors == 0 and not quiet:
                print(manifest.post_message)
            failed = summary.failed_resources or summary.total_errors or summary.requirements_unmet_count
            if args.report and (not quiet or failed):
                from ccm.report import manifest_summary

                print()
                sys.stdout.write(manifest_summary(summary))
        if interrupt.received() is not None:
            if not args.json:
                sys.stderr.write(f"ccm: {interrupt.message()}\n")
            return interrupt.exit_code(), result
        return exit_code(result, args.detailed_exit_codes), result
    finally:
        manifest.cleanup()
