"""Health checks of a resource: nagios commands and goss rules, with retries.

``run_checks(manager, props, checks, user_log) -> (results, errors)`` is what the shared
resource flow calls after the apply step. Every check yields exactly one
``HealthCheckResult`` (a check that cannot run is UNKNOWN with the reason as output, never
a missing result), and every non-OK result yields one error naming the check, its status
and what it printed, so the event says what to fix.

Guarantees: commands and rules are rendered through ccm's templates at check time; each
attempt's duration is observed (``healthcheck``); nothing raises to the caller.
Not: a scheduler (the agent decides when to run checks and what a CRITICAL triggers).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ccm.model.events import CRITICAL, OK, STATUS_NAMES, UNKNOWN, HealthCheckResult
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

    from ccm.model.manager import RunManager

__all__ = ["run_checks", "run_check", "CheckSpec"]

_MARKERS = ("{{", "${")
_MAX_DETAIL = 5   # failed goss tests quoted in the event error


@dataclass
class CheckSpec:
    """One ``health_checks`` entry, rendered and with defaults applied."""

    format: str
    name: str
    command: str = ""
    rules: Any = None
    tries: int = 1
    try_sleep_ns: int = 0
    timeout_s: Optional[float] = None


class CheckError(Exception):
    """The check could not be prepared or run (it yields UNKNOWN plus this reason)."""


def _has_template(value: Any) -> bool:
    return isinstance(value, str) and any(m in value for m in _MARKERS)


class _Renderer:
    """Renders check text through ccm's templates; the environment is built on first use."""

    def __init__(self, manager: "RunManager"):
        self._manager = manager
        self._env: Optional[Mapping[str, Any]] = None

    @property
    def env(self) -> Mapping[str, Any]:
        if self._env is None:
            self._env = self._manager.template_environment()
        return self._env

    def string(self, text: Any, where: str) -> Any:
        if not _has_template(text):
            return text
        from ccm import templates

        try:
            return templates.render_string(text, self.env)
        except Exception as exc:
            raise CheckError(f"rendering {where}: {exc}") from None

    def typed(self, value: Any, where: str) -> Any:
        if not _has_template(value):
            return value
        from ccm import templates

        try:
            return templates.render_typed(value, self.env)
        except Exception as exc:
            raise CheckError(f"rendering {where}: {exc}") from None

    def tree(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            return self.typed(value, where)
        if isinstance(value, list):
            return [self.tree(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {self.string(k, f"{where}[{k}]"): self.tree(v, f"{where}[{k}]") for k, v in value.items()}
        return value


def prepare(check: Mapping[str, Any], renderer: _Renderer) -> CheckSpec:
    """Render one raw entry and apply defaults (format inferred, name, tries >= 1)."""
    from ccm.model.durations import DurationError, parse_duration, parse_duration_ns
    from ccm.healthcheck.nagios import default_name

    command = str(renderer.string(check.get("command") or "", "command")).strip()
    rules = check.get("goss_rules")
    fmt = str(renderer.string(check.get("format") or "", "format")).strip()
    if not fmt:
        fmt = "goss" if rules else "nagios"
    name = str(renderer.string(check.get("name") or "", "name")).strip()
    if not name:
        name = "goss" if fmt == "goss" else default_name(command)
    spec = CheckSpec(format=fmt, name=name, command=command, rules=rules)
    try:
        spec.tries = max(1, int(check.get("tries") or 1))
    except (TypeError, ValueError):
        raise CheckError(f"invalid tries {check.get('tries')!r}") from None
    sleep = renderer.string(check.get("try_sleep") or "", "try_sleep")
    timeout = renderer.string(check.get("timeout") or "", "timeout")
    try:
        spec.try_sleep_ns = max(0, parse_duration_ns(sleep)) if sleep else 0
    except DurationError as exc:
        raise CheckError(f'invalid try sleep duration "{sleep}": {exc}') from None
    try:
        spec.timeout_s = parse_duration(timeout) if timeout else None
    except DurationError as exc:
        raise CheckError(f'invalid timeout duration "{timeout}": {exc}') from None
    if spec.timeout_s is not None and spec.timeout_s <= 0:
        spec.timeout_s = None
    return spec


# --- one attempt per format ----------------------------------------------------------------

@dataclass
class _Outcome:
    status: int
    output: str
    error: Optional[str] = None
    detail: str = ""                # what the event error quotes
    report: Any = None              # GossReport for goss


def _nagios_attempt(manager: "RunManager", spec: CheckSpec) -> _Outcome:
    from ccm.healthcheck import nagios

    att = nagios.run_once(manager.runner, spec.command, spec.timeout_s)
    detail = nagios.summary_line(att.output)
    if att.tail and att.status != OK:
        detail = f"{detail}\n{att.tail}" if detail else att.tail
    return _Outcome(att.status, att.output, att.error, detail)


def _goss_rules(spec: CheckSpec, renderer: _Renderer) -> Dict[str, Any]:
    from ccm.healthcheck.goss.schema import parse_rules, validate_goss_rules
    from ccm.model.errors import ValidationError

    raw = spec.rules
    try:
        if isinstance(raw, str):
            raw = renderer.string(raw, "goss_rules")
        else:
            raw = renderer.tree(raw, "goss_rules")
        validate_goss_rules(raw)
        return parse_rules(raw)
    except ValidationError as exc:
        raise CheckError(str(exc)) from None


def _goss_attempt(manager: "RunManager", spec: CheckSpec, rules: Dict[str, Any]) -> _Outcome:
    from ccm.healthcheck.goss.evaluate import GossContext, evaluate

    ctx = GossContext(runner=manager.runner,
                      provider_status=manager.status)
    report = evaluate(rules, ctx)
    failed = report.failed
    status = CRITICAL if failed else OK
    quoted = [r.text for r in failed[:_MAX_DETAIL]]
    if len(failed) > _MAX_DETAIL:
        quoted.append(f"and {len(failed) - _MAX_DETAIL} more")
    return _Outcome(status, report.output, None, "; ".join(quoted + [report.summary]), report)


# --- the check loop -------------------------------------------------------------------------

def run_check(manager: "RunManager", props: Any, check: Mapping[str, Any], user_log: Any,
              sleep: Callable[[float], None] = time.sleep) -> Tuple[HealthCheckResult, Optional[str]]:
    """Run one check with its retries. Returns its result and the event error (if any)."""
    from ccm.model.durations import go_duration

    renderer = _Renderer(manager)
    fallback_name = check.get("name") or ("goss" if check.get("goss_rules") else "")
    try:
        spec = prepare(check, renderer)
        if spec.format == "goss":
            rules = _goss_rules(spec, renderer)
        elif spec.format != "nagios":
            raise CheckError(f'unknown health check format "{spec.format}"')
    except CheckError as exc:
        name = fallback_name or _safe_default_name(check)
        user_log.warn("Health check could not run", check=name, error=str(exc))
        return (HealthCheckResult(status=UNKNOWN, tries=0, output=str(exc), name=name),
                f'health check "{name}" could not run: {exc}')

    log = user_log.bind(format=spec.format, check=spec.name)
    labels = {"type": props.type_name, "name": props.name, "check": spec.name}
    outcome = _Outcome(UNKNOWN, "")
    tries = 0
    for tries in range(1, spec.tries + 1):
        started = time.monotonic()
        try:
            if spec.format == "goss":
                outcome = _goss_attempt(manager, spec, rules)
            else:
                outcome = _nagios_attempt(manager, spec)
        except Exception as exc:  # a bug or provider crash must still yield a result
            outcome = _Outcome(UNKNOWN, f"{type(exc).__name__}: {exc}", f"{type(exc).__name__}: {exc}")
        finally:
            manager.metrics.observe("healthcheck", time.monotonic() - started, **labels)
        status_name = STATUS_NAMES.get(outcome.status, "UNKNOWN")
        if outcome.error is not None:
            # Execution errors (cannot start, timed out, killed) are not retried.
            log.warn("Health check failed", ("try", tries), ("sleep", go_duration(spec.try_sleep_ns)),
                    ("status", status_name), ("error", outcome.error))
            result = HealthCheckResult(status=UNKNOWN, tries=tries, output=outcome.output, name=spec.name)
            return result, f'health check "{spec.name}" could not run: {outcome.error}'
        if outcome.status == OK:
            if outcome.report is not None:
                _log_goss(log, outcome.report, final=True)
            break
        last = tries == spec.tries
        if outcome.report is not None:
            _log_goss(log, outcome.report, final=last)
        if outcome.report is None or not last:  # goss' last attempt already logged its verdict
            log.warn("Health check failed", ("try", tries), ("sleep", go_duration(spec.try_sleep_ns)),
                     ("status", status_name))
        if not last and spec.try_sleep_ns:
            sleep(spec.try_sleep_ns / 1e9)

    result = HealthCheckResult(status=outcome.status, tries=tries, output=outcome.output, name=spec.name)
    if outcome.status == OK:
        return result, None
    message = f'health check "{spec.name}" status "{STATUS_NAMES.get(outcome.status, "UNKNOWN")}"'
    if outcome.detail:
        message += f": {outcome.detail}"
    return result, message


def _safe_default_name(check: Mapping[str, Any]) -> str:
    from ccm.healthcheck.nagios import default_name

    return default_name(str(check.get("command") or ""))


def _log_goss(log: Any, report: Any, final: bool) -> None:
    """Per-test lines (DEBUG passes, ERROR failures on the last attempt), then goss' verdict."""
    for r in report.results:
        if r.failed and final:
            log.error(r.text)
        elif not r.failed:
            log.debug(r.text)
    if report.failed:
        if final:
            log.error("Health check failed", failed=len(report.failed), msg=report.summary)
    else:
        log.debug("Health check passed", result=report.summary, msg=report.summary)


def run_checks(manager: "RunManager", props: Any, checks: List[Mapping[str, Any]],
               user_log: Any) -> Tuple[List[HealthCheckResult], List[str]]:
    """Run every check in order; one result per check, one error per non-OK check."""
    results: List[HealthCheckResult] = []
    errors: List[str] = []
    for check in checks:
        result, error = run_check(manager, props, check, user_log)
        results.append(result)
        if error:
            errors.append(error)
    return results, errors
