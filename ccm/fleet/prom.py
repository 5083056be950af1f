"""``ccm report fleet --prometheus``: the fleet's state as gauges for a textfile collector (pure).

What: ``textfile(rows, malformed)`` returns the Prometheus text format (0.0.4):
``choria_ccm_fleet_hosts{outcome}`` (every outcome, zeros included),
``choria_ccm_fleet_label_hosts{label,value,outcome}`` (per label value and outcome) and
``choria_ccm_fleet_malformed_reports``. Guarantees: label values escaped as the format
requires (backslash, double quote, new line); lines sorted, so the output of an unchanged
fleet is byte-identical. Not: writing the file (redirect, then rename).
"""
from __future__ import annotations
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, Iterable, List, Tuple

    from ccm.fleet.view import Row

OUTCOMES = ("ok", "changed", "failed", "stale")


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def textfile(rows: Iterable[Row], malformed: int = 0) -> str:
    per_outcome: Dict[str, int] = {o: 0 for o in OUTCOMES}
    per_label: Dict[Tuple[str, str, str], int] = {}
    for row in rows:
        per_outcome[row.outcome] = per_outcome.get(row.outcome, 0) + 1
        for key, value in row.host.labels.items():
            per_label[(key, value, row.outcome)] = per_label.get((key, value, row.outcome), 0) + 1
    lines: List[str] = [
        "# HELP choria_ccm_fleet_hosts Hosts by the outcome of their last ccm run",
        "# TYPE choria_ccm_fleet_hosts gauge",
    ]
    lines += [f"choria_ccm_fleet_hosts{{outcome=\"{o}\"}} {per_outcome[o]}" for o in OUTCOMES]
    lines += ["# HELP choria_ccm_fleet_label_hosts Hosts by label value and the outcome of their last ccm run",
              "# TYPE choria_ccm_fleet_label_hosts gauge"]
    lines += [f"choria_ccm_fleet_label_hosts{{label=\"{escape(k)}\",value=\"{escape(v)}\",outcome=\"{o}\"}} {n}"
              for (k, v, o), n in sorted(per_label.items())]
    lines += ["# HELP choria_ccm_fleet_malformed_reports Reports in the stream that could not be read",
              "# TYPE choria_ccm_fleet_malformed_reports gauge",
              f"choria_ccm_fleet_malformed_reports {malformed}"]
    return "\n".join(lines) + "\n"
