"""Evaluate goss rules natively: observe each resource, match each attribute, count.

What: ``evaluate(rules, ctx) -> GossReport``; one ``TestResult`` per attribute test with
goss' wording (``File: /etc/motd: mode: doesn't match, expect: "0600" found: "0644"``).
Guarantees: a resource that cannot be observed fails its tests with the reason, never
passes; a type or attribute unknown at run time (templates can produce those) fails too.
Not: goss itself; see ``schema.py`` for exactly what is supported.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ccm.healthcheck.goss import matchers as M
from ccm.healthcheck.goss import network, system
from ccm.healthcheck.goss.schema import TYPES, GossType
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass
class GossContext:
    """What evaluation needs from outside: a command runner and provider status lookups."""

    runner: Any = None
    # (resource type, name) -> ResourceState via ccm's own providers (service, package)
    provider_status: Optional[Callable[[str, str], Any]] = None
    proc_root: str = "/proc"


@dataclass
class TestResult:
    resource: str      # "File"
    ident: str         # "/etc/motd"
    attribute: str     # "mode"
    outcome: str       # pass | fail | skip
    text: str          # goss-style line

    @property
    def failed(self) -> bool:
        return self.outcome == FAIL


@dataclass
class GossReport:
    results: List[TestResult] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def count(self) -> int:
        return len(self.results)

    @property
    def failed(self) -> List[TestResult]:
        return [r for r in self.results if r.failed]

    @property
    def summary(self) -> str:
        return f"Count: {self.count}, Failed: {len(self.failed)}, Duration: {self.duration_s:.3f}s"

    @property
    def output(self) -> str:
        """Each failed test, then goss' summary line."""
        return "\n".join([r.text for r in self.failed] + [self.summary])


class ObserveError(Exception):
    pass


# --- observers: target + options -> observed attributes ---------------------------------
# Each returns a dict of attribute -> value (a callable for values read on demand), or
# None when the resource does not exist.

def _file(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    state = system.file_state(target)
    if state is None:
        return None
    state["contents"] = state["contains"] = lambda: system.file_contents(target)
    for algo in ("md5", "sha256", "sha512"):
        state[algo] = (lambda a=algo: system.file_digest(target, a))
    return state


def _port(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    proto, port = system.parse_port_ident(target)
    ips = system.listening_ips(proto, port, ctx.proc_root)
    return {"listening": bool(ips), "ip": ips}


def _process(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    return {"running": system.process_running(target, ctx.proc_root)}


def _provider_state(ctx: GossContext, type_name: str, name: str) -> Any:
    if ctx.provider_status is None:
        raise ObserveError(f"no {type_name} providers available")
    try:
        return ctx.provider_status(type_name, name)
    except Exception as exc:  # provider selection or status failure: report, don't pass
        raise ObserveError(f"could not get {type_name} status: {exc}") from None


def _service(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    meta = _provider_state(ctx, "service", target).metadata
    return {"running": bool(meta.get("running")), "enabled": bool(meta.get("enabled"))}


_ABSENT = ("", "absent", "purged")


def _package(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    state = _provider_state(ctx, "package", target)
    version = str(state.metadata.get("version") or "")
    installed = state.ensure not in _ABSENT and version not in _ABSENT
    return {"installed": installed, "versions": [version] if installed else []}


def _user(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    return system.user_state(target)


def _group(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    return system.group_state(target)


def _mount(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    return system.mount_state(target, ctx.proc_root)


def _kernel_param(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    try:
        return {"value": system.kernel_param(target, ctx.proc_root)}
    except FileNotFoundError:
        raise ObserveError(f"kernel parameter {target} does not exist") from None


def _addr(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    ok, reason = network.reachable(target, attrs.get("timeout"), str(attrs.get("local-address") or ""))
    return {"reachable": ok, "_reason": reason}


def _dns(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    try:
        addrs = network.resolve(target, attrs.get("timeout"))
    except network.NetworkError as exc:
        raise ObserveError(str(exc)) from None
    return {"resolvable": bool(addrs), "addrs": addrs}


def _http(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    try:
        resp = network.http_request(target, attrs)
    except network.NetworkError as exc:
        raise ObserveError(str(exc)) from None
    return {"status": resp.status, "body": resp.body, "headers": resp.header_text}


def _command(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    if ctx.runner is None:
        raise ObserveError("no command runner available")
    timeout = float(attrs.get("timeout") or 10000) / 1000.0
    res = ctx.runner.run(["/bin/sh", "-c", target], cwd="/", timeout=timeout)
    if res.timed_out:
        raise ObserveError(f"command execution timed out after {timeout:g}s")
    if res.error and res.exit_code == -1 and not res.error.startswith("signal:"):
        raise ObserveError(res.error)
    return {"exit-status": res.exit_code, "stdout": res.stdout, "stderr": res.stderr}


def _matching(target: str, attrs: Dict[str, Any], ctx: GossContext) -> Optional[Dict[str, Any]]:
    return {"matches": attrs.get("content")}


OBSERVERS: Dict[str, Callable[[str, Dict[str, Any], GossContext], Optional[Dict[str, Any]]]] = {
    "file": _file, "port": _port, "process": _process, "service": _service, "package": _package,
    "user": _user, "group": _group, "mount": _mount, "kernel-param": _kernel_param, "addr": _addr,
    "dns": _dns, "http": _http, "command": _command, "matching": _matching,
}

# The attribute that says whether the resource exists; others are skipped when it decided.
EXISTENCE = {"file": "exists", "user": "exists", "group": "exists", "mount": "exists"}


# --- evaluation --------------------------------------------------------------------------

def _compare(spec: GossType, attr: str, expected: Any, actual: Any) -> bool:
    if attr in spec.readers:
        ok, _ = M.reader_matches(expected, M.to_string(actual))
        return ok
    if attr == "mode" and not isinstance(expected, (dict, list)):
        try:
            return int(M.to_string(expected), 8) == int(str(actual), 8)
        except ValueError:
            return False
    if attr in ("md5", "sha256", "sha512") and isinstance(expected, str):
        return expected.strip().lower() == str(actual).lower()
    return M.matches(expected, actual)


def _found(spec: GossType, attr: str, expected: Any, actual: Any) -> str:
    if attr in spec.readers and not isinstance(expected, dict):
        patterns = expected if isinstance(expected, (list, tuple)) else [expected]
        return "patterns not found: " + M.describe(M.failed_patterns(list(patterns), M.to_string(actual)))
    return "found: " + M.show(actual)


def _shown(spec: GossType, ident: str) -> str:
    """The resource as printed: credentials in URLs are masked."""
    if spec.key == "http" and "@" in ident:
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(ident)
        if parts.password is not None:
            netloc = f"{parts.username}:******@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
            return urlunsplit(parts._replace(netloc=netloc))
    return ident


def _resource_tests(spec: GossType, ident: str, attrs: Dict[str, Any], ctx: GossContext) -> List[TestResult]:
    target = str(attrs.get(spec.ident) or ident) if spec.ident else ident
    ident = _shown(spec, ident)
    label = f"{spec.title}: {ident}"
    if attrs.get("title"):
        label += f" ({attrs['title']})"
    tests = [(a, v) for a, v in attrs.items() if a in spec.tests]
    if not tests:
        return []

    def result(attr: str, outcome: str, text: str) -> TestResult:
        return TestResult(spec.title, ident, attr, outcome, f"{label}: {attr}: {text}")

    if attrs.get("skip") is True:
        return [result(a, SKIP, "skipped") for a, _ in tests]
    unknown = [a for a in attrs if a not in spec.tests and a not in spec.options and a != spec.ident
               and a not in ("title", "meta", "skip")]
    try:
        if unknown:
            raise ObserveError(f"unsupported attribute(s) {', '.join(unknown)}")
        observed = OBSERVERS[spec.key](target, attrs, ctx)
    except (ObserveError, OSError, ValueError) as exc:
        return [result(a, FAIL, f"Error: {exc}") for a, _ in tests]

    out: List[TestResult] = []
    exists_attr = EXISTENCE.get(spec.key)
    decided_missing = False
    if observed is None:
        observed = {exists_attr: False} if exists_attr else {}
        decided_missing = exists_attr in attrs
    for attr, expected in tests:
        if attr not in observed:
            if decided_missing:
                out.append(result(attr, SKIP, "skipped"))
            else:
                missing = exists_attr and observed.get(exists_attr) is False
                what = "does not exist" if missing else "could not be observed"
                out.append(result(attr, FAIL, f"Error: {spec.key} {target} {what}"))
            continue
        try:
            actual = observed[attr]
            if callable(actual):
                actual = actual()
            ok = _compare(spec, attr, expected, actual)
        except (OSError, ValueError) as exc:  # MatcherError is a ValueError
            out.append(result(attr, FAIL, f"Error: {exc}"))
            continue
        if ok:
            out.append(result(attr, PASS, f"matches expectation: {M.describe(expected)}"))
        else:
            text = f"doesn't match, expect: {M.describe(expected)} {_found(spec, attr, expected, actual)}"
            if observed.get("_reason"):
                text += f" ({observed['_reason']})"
            out.append(result(attr, FAIL, text))
    return out


def evaluate(rules: Dict[str, Any], ctx: GossContext) -> GossReport:
    """Run every test in ``rules`` (already rendered and parsed) and report."""
    started = time.monotonic()
    report = GossReport()
    for type_key, entries in rules.items():
        spec = TYPES.get(str(type_key))
        if spec is None:
            report.results.append(TestResult(str(type_key), "", "", FAIL,
                                             f'{type_key}: Error: unsupported goss resource type "{type_key}"'))
            continue
        for ident, attrs in (entries or {}).items():
            report.results.extend(_resource_tests(spec, str(ident), attrs or {}, ctx))
    report.duration_s = time.monotonic() - started
    return report
