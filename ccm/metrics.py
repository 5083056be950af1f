"""Prometheus metrics of ccm runs, under upstream's exact names (``choria_ccm_*``).

What: ``Metrics`` implements the manager's metrics sink (``observe(metric, seconds,
**labels)``, ``inc(metric, **labels)``, ``record_event(event)``) and renders the Prometheus
text format itself (``exposition()``), so counters keep their upstream names with no
``_total`` suffix and no ``_created`` samples. ``serve`` exposes ``/metrics`` over HTTP
(the agent's ``monitor_port`` server, ``ccm.agent.monitor``); ``write_textfile`` writes the
node_exporter textfile-collector
format atomically (``ccm apply --metrics-file``).
Guarantees: standard library only (``prometheus_client`` is never imported: its text
writer renames counters' HELP/TYPE lines to ``*_total``, which would break upstream's
names; tests use its parser to check the format). Thread-safe; a bad observation is dropped
and logged, never raised into a run.
Every label value passes through ``ccm.redact`` (URL user info, ``# @sensitive`` values)
when it is recorded: ``/metrics`` is readable by any local user, and a manifest source or
an exec's name may hold ``https://user:password@...``.
Not: the no-op sink used when metrics are off (``ccm.manager.NoopMetrics``).
"""
from __future__ import annotations

import math
import os
from _thread import allocate_lock

from ccm.log import internal
from ccm.model.value import FrozenValueObject
from ccm.redact import redact_url, scrub_known
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

log = internal("ccm.metrics")

COUNTER, SUMMARY, GAUGE = "counter", "summary", "gauge"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class MetricDef(FrozenValueObject):
    """One metric of the table: compared by value and hashable, never changed (a plain
    class: ``--metrics-file`` runs skip dataclasses' class building, issue 16)."""

    __slots__ = ("key", "name", "kind", "labels", "help")
    _value_fields = __slots__
    key: str                   # what callers pass to observe()/inc()
    name: str                  # exposed name
    kind: str                  # counter | summary | gauge
    labels: Tuple[str, ...]
    help: str

    def __init__(self, key: str, name: str, kind: str, labels: Tuple[str, ...], help: str) -> None:
        set_ = object.__setattr__
        set_(self, "key", key)
        set_(self, "name", name)
        set_(self, "kind", kind)
        set_(self, "labels", labels)
        set_(self, "help", help)


def _d(key: str, name: str, kind: str, labels: str, help_text: str) -> MetricDef:
    return MetricDef(key, "choria_ccm_" + name, kind, tuple(labels.split()), help_text)


# The spec's table, in its order. ``key`` is the short name used by observe()/inc().
DEFINITIONS: Tuple[MetricDef, ...] = (
    _d("manifest_apply", "manifest_apply_duration_seconds", SUMMARY, "source",
       "Time taken to apply a manifest"),
    _d("resource_apply", "resource_apply_duration_seconds", SUMMARY, "type provider name",
       "Time taken to apply a resource"),
    _d("resource_state_total", "resource_state_total_count", COUNTER, "type name",
       "Total number of resource events recorded"),
    _d("resource_state_noop", "resource_state_noop_count", COUNTER, "type name",
       "Number of resources that would have changed in noop mode"),
    _d("resource_state_changed", "resource_state_changed_count", COUNTER, "type name",
       "Number of resources that changed"),
    _d("resource_state_skipped", "resource_state_skipped_count", COUNTER, "type name",
       "Number of resources that were skipped"),
    _d("resource_state_refreshed", "resource_state_refreshed_count", COUNTER, "type name",
       "Number of resources that were refreshed"),
    _d("resource_state_failed", "resource_state_failed_count", COUNTER, "type name",
       "Number of resources that failed"),
    _d("resource_state_error", "resource_state_error_count", COUNTER, "type name",
       "Number of resources that reported errors"),
    _d("resource_state_stable", "resource_state_stable_count", COUNTER, "type name",
       "Number of resources that were stable"),
    _d("healthcheck", "healthcheck_duration_seconds", SUMMARY, "type name check",
       "Time taken by each health check attempt"),
    _d("healthcheck_status", "healthcheck_status_count", COUNTER, "type name status check",
       "Final status of each health check"),
    _d("facts_gather", "facts_gather_duration_seconds", SUMMARY, "",
       "Time taken to gather facts"),
    _d("agent_apply", "agent_apply_duration_seconds", SUMMARY, "manifest",
       "Time taken by each agent manifest apply"),
    _d("agent_healthcheck", "agent_healthcheck_duration_seconds", SUMMARY, "manifests",
       "Time taken by each agent health check run"),
    _d("agent_healthcheck_remediations", "agent_healthcheck_remediations_count", COUNTER, "manifest",
       "Number of applies triggered by critical health checks"),
    _d("agent_data_resolve", "agent_data_resolve_duration_seconds", SUMMARY, "",
       "Time taken to resolve external data"),
    _d("agent_data_resolve_error", "agent_data_resolve_error_count", COUNTER, "url",
       "Number of failed external data resolutions"),
    _d("agent_facts_resolve", "agent_facts_resolve_duration_seconds", SUMMARY, "",
       "Time taken to resolve facts in the agent"),
    _d("agent_facts_resolve_error", "agent_facts_resolve_error_count", COUNTER, "",
       "Number of failed fact resolutions in the agent"),
    _d("agent_manifest_fetch", "agent_manifest_fetch_count", COUNTER, "manifest",
       "Number of remote manifest downloads"),
    _d("agent_manifest_fetch_error", "agent_manifest_fetch_error_count", COUNTER, "manifest",
       "Number of failed remote manifest checks or downloads"),
    # ours, for monitoring cron/timer runs (alert on a stale timestamp or a non-zero code)
    _d("last_run_timestamp", "last_run_timestamp_seconds", GAUGE, "",
       "Unix time at which the last ccm apply finished"),
    _d("last_run_exit_code", "last_run_exit_code", GAUGE, "",
       "Exit code of the last ccm apply"),
    # ours: a manifest that does not load (broken YAML, invalid resources); the last good one is kept
    _d("agent_manifest_load_error", "agent_manifest_load_error_count", COUNTER, "manifest",
       "Number of agent manifest loads or validations that failed"),
    # ours: the agent's drift watch (issue 29)
    _d("agent_drift", "agent_drift_total", COUNTER, "manifest type",
       "Number of watched resources found drifted (repaired, or reported in noop)"),
    _d("agent_watched_paths", "agent_watched_paths", GAUGE, "manifest",
       "Number of managed paths the agent watches for drift"),
)

BY_KEY: Dict[str, MetricDef] = {d.key: d for d in DEFINITIONS}
BY_NAME: Dict[str, MetricDef] = {d.name: d for d in DEFINITIONS}


def outcome(event: Any) -> str:
    """The one outcome counter an event increments: noop > changed > skipped > refreshed >
    failed > error > stable."""
    if event.noop:
        return "noop"
    if event.changed:
        return "changed"
    if event.skipped:
        return "skipped"
    if event.refreshed:
        return "refreshed"
    if event.failed:
        return "failed"
    if event.errors:
        return "error"
    return "stable"


# --- text format -------------------------------------------------------------------------

def format_value(v: float) -> str:
    """Go's float formatting as Prometheus clients write it (``1``, ``0.25``, ``+Inf``)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels_text(names: Tuple[str, ...], values: Tuple[str, ...]) -> str:
    """Label pairs sorted by name, as client_golang writes them."""
    if not names:
        return ""
    return "{" + ",".join(f'{n}="{_escape_label(v)}"' for n, v in sorted(zip(names, values))) + "}"


class Metrics:
    """In-process metric store with upstream's names, types and labels."""

    enabled = True

    def __init__(self) -> None:
        self._lock = allocate_lock()
        # metric name -> label values -> value (counter) or [sum, count] (summary)
        self._values: Dict[str, Dict[Tuple[str, ...], Any]] = {d.name: {} for d in DEFINITIONS}
        for d in DEFINITIONS:
            if not d.labels and d.kind != GAUGE:  # label-less metrics are always exposed, as client_golang does
                self._values[d.name][()] = 0.0 if d.kind == COUNTER else [0.0, 0]

    # --- recording --------------------------------------------------------------------

    def _label_values(self, d: MetricDef, labels: Dict[str, Any]) -> Tuple[str, ...]:
        return tuple("" if labels.get(n) is None else scrub_known(redact_url(str(labels.get(n)))) for n in d.labels)

    def _def(self, key: str, kind: str) -> Optional[MetricDef]:
        d = BY_KEY.get(key) or BY_NAME.get(key)
        if d is None or d.kind != kind:
            log.warning("unknown metric", extra={"kv": {"metric": key, "kind": kind}})
            return None
        return d

    def observe(self, metric: str, seconds: float, **labels: Any) -> None:
        """Add one observation to the summary ``metric`` (short key or full name)."""
        d = self._def(metric, SUMMARY)
        if d is None:
            return
        key = self._label_values(d, labels)
        with self._lock:
            cell = self._values[d.name].setdefault(key, [0.0, 0])
            cell[0] += float(seconds)
            cell[1] += 1

    def inc(self, metric: str, amount: float = 1.0, **labels: Any) -> None:
        """Increment the counter ``metric`` (short key or full name)."""
        d = self._def(metric, COUNTER)
        if d is None:
            return
        key = self._label_values(d, labels)
        with self._lock:
            self._values[d.name][key] = self._values[d.name].get(key, 0.0) + amount

    def set(self, metric: str, value: float, **labels: Any) -> None:
        """Set the gauge ``metric`` (short key or full name); unset gauges are not exposed."""
        d = self._def(metric, GAUGE)
        if d is None:
            return
        with self._lock:
            self._values[d.name][self._label_values(d, labels)] = float(value)

    def record_event(self, event: Any) -> None:
        """Count a recorded transaction event: the total, one outcome, and the final
        status of each of its health checks."""
        name = event.alias or event.name
        self.inc("resource_state_total", type=event.type, name=name)
        self.inc("resource_state_" + outcome(event), type=event.type, name=name)
        for result in event.health_checks:
            self.inc("healthcheck_status", type=event.type, name=event.name,
                     status=result.status_name, check=result.name)

    # --- reading ------------------------------------------------------------------------

    def value(self, metric: str, **labels: Any) -> Any:
        """A counter's value or a summary's ``(sum, count)`` (0 / (0, 0) when unseen)."""
        d = BY_KEY.get(metric) or BY_NAME[metric]
        with self._lock:
            v = self._values[d.name].get(self._label_values(d, labels))
        if d.kind == SUMMARY:
            return (v[0], v[1]) if v else (0.0, 0)
        return v or 0.0

    def samples(self) -> List[Tuple[MetricDef, List[Tuple[Tuple[str, ...], Any]]]]:
        with self._lock:
            return [(d, sorted((k, list(v) if isinstance(v, list) else v) for k, v in self._values[d.name].items()))
                    for d in sorted(DEFINITIONS, key=lambda d: d.name)]

    def exposition(self) -> str:
        """All metrics in the Prometheus text format (version 0.0.4). Labelled metrics
        nobody has touched are left out, as Prometheus client libraries do."""
        lines: List[str] = []
        for d, series in self.samples():
            if not series:
                continue
            lines.append(f"# HELP {d.name} {_escape_help(d.help)}")
            lines.append(f"# TYPE {d.name} {d.kind}")
            for key, v in series:
                labels = _labels_text(d.labels, key)
                if d.kind in (COUNTER, GAUGE):
                    lines.append(f"{d.name}{labels} {format_value(v)}")
                else:
                    lines.append(f"{d.name}_sum{labels} {format_value(v[0])}")
                    lines.append(f"{d.name}_count{labels} {format_value(v[1])}")
        return "\n".join(lines) + "\n"


# --- exposure --------------------------------------------------------------------------------

def serve(metrics: Metrics, port: int, host: str = "127.0.0.1") -> Any:
    """Serve ``/metrics`` on ``host:port`` from a daemon thread (the agent monitor's
    bounded server, ``ccm.agent.monitor.serve_routes``).

    Returns the server; ``server.server_address`` has the bound port (pass 0 to pick one)
    and ``server.shutdown()`` stops it.
    """
    from ccm.agent.monitor import serve_routes

    return serve_routes({"/metrics": lambda: (metrics.exposition().encode(), CONTENT_TYPE)},
                        port, host, name="ccm-metrics")


def write_textfile(metrics: Metrics, path: str) -> None:
    """Write the node_exporter textfile-collector format to ``path`` atomically: a
    temporary file in the same directory (not ending in ``.prom``, so the collector never
    reads a partial file) renamed over ``path``; no temporary file is left behind."""
    from ccm import fsafe
    from ccm.model.errors import CCMError

    try:
        with fsafe.atomic_replace(os.path.abspath(path), mode=0o644) as fh:
            fh.write(metrics.exposition().encode("utf-8"))
    except OSError as exc:
        raise CCMError(f"cannot write metrics file {path}: {exc.strerror or exc}") from None
