"""Human output for events and summaries: the per-resource status line and the
end-of-run summary blocks, in upstream's shape."""
from __future__ import annotations

import sys

from ccm.log import ERROR, INFO, WARN, escape_line
from ccm.model.durations import go_duration, round_ms, truncate_ms
from ccm.model.events import SessionSummary, TransactionEvent
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Tuple

    from ccm.model.manager import UserLog


def _runtime(event: TransactionEvent) -> str:
    ns = event.duration_ns
    return "0s" if 0 <= ns < 1_000_000 else go_duration(truncate_ms(ns))   # most resources: under 1ms


def _level_word(skipped: Any, refreshed: Any, changed: Any) -> Tuple[int, str]:
    """Level and word of a resource that neither failed nor missed a requirement."""
    if skipped:
        return WARN, "skipped"
    if refreshed:
        return WARN, "refreshed"
    if changed:
        return WARN, "changed"
    return INFO, "stable"


# _level_word of every combination of the three flags: the status line of each resource
# reads one entry instead of making a call (other flag values take the function)
_LEVEL_WORD = {(s, r, c): _level_word(s, r, c) for s in (False, True) for r in (False, True) for c in (False, True)}


def _label(event: TransactionEvent) -> str:
    """``event.label`` with every control character escaped, newlines too: a name holding
    one cannot start a line of its own."""
    label = event.label
    return label if label.isprintable() else escape_line(label)


def _outcome(event: TransactionEvent) -> Tuple[int, str]:
    """Level and message of a resource that neither failed nor missed a requirement."""
    flags = (event.skipped, event.refreshed, event.changed)
    level, word = _LEVEL_WORD.get(flags) or _level_word(*flags)
    alias = event.alias   # event.label, in the same f-string as the word (once per resource)
    if alias:
        if alias.isprintable() and event.name.isprintable():
            return level, f"{event.type}#{alias} ({event.name}) {word}"
    elif event.name.isprintable():
        return level, f"{event.type}#{event.name} {word}"
    return level, f"{_label(event)} {word}"


def event_line(event: TransactionEvent) -> Tuple[int, str, List[Tuple[str, Any]]]:
    """(level, message, attributes) of the status line for one event."""
    attrs: List[Tuple[str, Any]] = [
        ("ensure", event.requested_ensure),
        ("runtime", _runtime(event)),
        ("provider", event.provider),
    ]
    if event.noop:
        attrs.append(("noop", event.noop_message or "true"))
    if event.failed:
        attrs.append(("errors", ", ".join(event.errors)))
        return ERROR, f"{_label(event)} failed", attrs
    if event.unmet_requirements:
        attrs += [("unmet", r) for r in event.unmet_requirements]
        return ERROR, f"{_label(event)} skipped due to unmet requirement", attrs
    level, message = _outcome(event)
    return level, message, attrs


def log_event(user_log: UserLog, event: TransactionEvent, quiet_skips: bool = False) -> None:
    """The status line of ``event`` (a run prints many through ``status_logger``).
    ``quiet_skips`` (``--quiet``): a resource skipped by its own ``control`` is expected,
    so its line is INFO, below what ``--quiet`` prints (syslog still has it)."""
    level, message, attrs = event_line(event)
    if quiet_skips and level == WARN and event.skipped and not event.unmet_requirements:
        level = INFO
    user_log.log(level, message, *attrs)


# ensure values the status line of most resources shows: printable, no need to ask
_PLAIN_ENSURES = frozenset(("present", "absent", "directory", "running", "stopped", "latest", "installed"))


def status_logger(user_log: UserLog) -> Callable[[TransactionEvent], None]:
    """``log_event(user_log, event)`` for the events of one run: the logger's policy is read
    once (``UserLog.line_sink``) and the line of most resources (neither noop, failed
    nor missing a requirement) is rendered and written in one step, the same text as
    ``event_line``'s through ``log``. A logger that needs the generic path gets
    ``log_event`` on every line."""
    from ccm import log as ccmlog

    quiet_skips = ccmlog.quiet()   # --quiet: silent about resources skipped by their control
    sink = user_log.line_sink()
    if sink is None:
        return lambda event: log_event(user_log, event, quiet_skips)
    own, threshold, seen, target, lock = sink.own, sink.threshold, sink.seen, sink.target, sink.lock

    def log_status(event: TransactionEvent) -> None:
        ensure, provider = event.requested_ensure, event.provider
        if event.noop or event.failed or event.unmet_requirements or type(ensure) is not str \
                or type(provider) is not str \
                or not event.name.isprintable() or (event.alias and not event.alias.isprintable()) \
                or (ensure not in _PLAIN_ENSURES and not ensure.isprintable()):
            log_event(user_log, event, quiet_skips)   # and the generic path escapes control characters
            return
        # _outcome's level and word without its call (~600 Ir per resource); the status-line
        # tests hold every outcome of this path to event_line's through log
        flags = (event.skipped, event.refreshed, event.changed)
        level, word = _LEVEL_WORD.get(flags) or _level_word(*flags)
        if quiet_skips and flags[0]:
            level = INFO   # skipped by its own control (log_event)
        if level < threshold:
            return
        ns = event.duration_ns
        runtime = "0s" if 0 <= ns < 1_000_000 else go_duration(truncate_ms(ns))   # _runtime
        stream = sys.stdout if own is None else own
        last = seen[0]
        if last[0] is not stream:
            last = target(stream)
        alias = event.alias
        if alias:
            line = (f"{last[2][level]}{event.type}#{alias} ({event.name}) {word} ensure={ensure} runtime={runtime}"
                    f" provider={provider}\n")
        else:
            line = f"{last[2][level]}{event.type}#{event.name} {word} ensure={ensure} runtime={runtime} provider={provider}\n"
        lock.acquire()   # what "with lock" does, for half the cost
        try:
            stream.write(line)
            if last[1]:   # a terminal: show progress as it happens
                stream.flush()
        finally:
            lock.release()

    return log_status


def _checked_line(s: SessionSummary) -> str:
    line = f"{s.health_checked_count}"
    if any((s.health_check_ok_count, s.health_check_critical_count, s.health_check_warning_count,
            s.health_check_unknown_count)):
        line += (f" (ok: {s.health_check_ok_count}, critical: {s.health_check_critical_count}, "
                 f"warning: {s.health_check_warning_count} unknown: {s.health_check_unknown_count})")
    return line


def manifest_summary(s: SessionSummary) -> str:
    rows = [
        ("Run Time", go_duration(round_ms(s.total_duration_ns))),
        ("Total Resources", s.total_resources),
        ("Stable Resources", s.stable_resources),
        ("Changed Resources", s.changed_resources),
        ("Failed Resources", s.failed_resources),
        ("Skipped Resources", s.skipped_resources),
        ("Refreshed Resources", s.refreshed_count),
        ("Unmet Requirements", s.requirements_unmet_count),
        ("Checked Resources", _checked_line(s)),
        ("Total Errors", s.total_errors),
    ]
    return "Manifest Run Summary\n\n" + "\n".join(f"{k:>21}: {v}" for k, v in rows) + "\n"


def session_summary(s: SessionSummary) -> str:
    rows: List[Tuple[str, Any]] = []
    if s.total_duration_ns > 0:
        rows.append(("Run Time", go_duration(round_ms(s.total_duration_ns))))
    rows += [
        ("Total Resources", s.total_resources),
        ("Unique Resources", s.unique_resources),
        ("Stable Resources", s.stable_resources),
        ("Changed Resources", s.changed_resources),
        ("Failed Resources", s.failed_resources),
        ("Skipped Resources", s.skipped_resources),
        ("Refreshed Resources", s.refreshed_count),
        ("Total Errors", s.total_errors),
    ]
    return "\nSession Summary\n\n" + "\n".join(f"{k:>21}: {v}" for k, v in rows) + "\n"


def one_line(s: SessionSummary) -> str:
    parts = [f"resources={s.total_resources}", f"changed={s.changed_resources}", f"failed={s.failed_resources}",
             f"skipped={s.skipped_resources}", f"stable={s.stable_resources}", f"refreshed={s.refreshed_count}"]
    if s.health_checked_count:
        for name, n in (("critical", s.health_check_critical_count), ("warning", s.health_check_warning_count),
                        ("ok", s.health_check_ok_count), ("unknown", s.health_check_unknown_count)):
            if n:
                parts.append(f"health_{name}={n}")
    parts.append(f"duration={go_duration(round_ms(s.total_duration_ns))}")
    return "Session: " + ", ".join(parts)


# --- machine-readable report --------------------------------------------------------------

def summary_counts(s: SessionSummary) -> Dict[str, int]:
    """A run's counts under the names monitors read (``--last-run``, fleet reports)."""
    return {"total": s.total_resources, "stable": s.stable_resources, "changed": s.changed_resources,
            "failed": s.failed_resources, "skipped": s.skipped_resources,
            "refreshed": s.refreshed_count, "unmet_requirements": s.requirements_unmet_count,
            "health_checked": s.health_checked_count, "health_critical": s.health_check_critical_count,
            "health_warning": s.health_check_warning_count, "total_errors": s.total_errors}


def json_report(events: List[Any], summary: SessionSummary) -> Dict[str, Any]:
    """One document for tools: every transaction event (wire shape) and the run summary.

    ``events`` may include session start events; they are left out (the summary carries
    the start time).
    """
    return {
        "events": [e.to_dict() for e in events if isinstance(e, TransactionEvent)],
        "summary": summary.to_dict(),
    }


def json_report_text(events: List[Any], summary: SessionSummary) -> str:
    """``json_report`` as 2-space indented JSON with a trailing newline (stdout of
    ``ccm apply --json`` and ``ccm session report --json``)."""
    import json

    return json.dumps(json_report(events, summary), indent=2) + "\n"
