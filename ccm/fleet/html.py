"""``ccm report fleet --html FILE``: one self-contained page of the fleet's state (pure).

What: ``page(rows, counts, ...)`` returns an HTML5 document: a summary bar (hosts, ok,
changed, failed, stale, as numbers and as a proportional bar), then one static table
row per host sorted by outcome (failed, stale, changed, ok; newest first within each),
with its labels, last run, age, counts and every failed resource with its error.
Guarantees: inline CSS only; no script, no external reference of any kind (a
``Content-Security-Policy`` of ``default-src 'none'`` says so to the browser too); every
text shown passes ``html.escape``; plain semantic markup (headings, a table, lists),
so a text browser shows the same content. Not: sorting by JavaScript.
"""
from __future__ import annotations

from html import escape

from ccm.fleet.view import RANK, SHOWN_COUNTS, Row, age_text
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Mapping, Optional

OUTCOMES = ("failed", "stale", "changed", "ok")
CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1d232a;background:#fff}
h1{font-size:1.4em;margin:0 0 .2em}
.meta{color:#5a636e;margin:0 0 1em}
.summary{display:flex;flex-wrap:wrap;gap:.6em;margin:0 0 .6em;padding:0;list-style:none}
.summary li{padding:.35em .8em;border-radius:4px;background:#eef1f4;font-weight:600}
.bar{display:flex;height:14px;border-radius:3px;overflow:hidden;background:#eef1f4;margin:0 0 1.2em}
.bar span{display:block;height:100%}
.failed{--c:#c62828}.stale{--c:#8d6e63}.changed{--c:#ef8f00}.ok{--c:#2e7d32}
.summary li.failed,.summary li.stale,.summary li.changed,.summary li.ok{background:var(--c);color:#fff}
.bar span{background:var(--c)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.35em .6em;border-bottom:1px solid #dde2e7}
th{background:#f6f8fa;position:sticky;top:0}
td.nowrap{white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.outcome{font-weight:700;color:var(--c)}
tr.failed td:first-child{border-left:4px solid var(--c)}
tr.stale td:first-child{border-left:4px solid var(--c)}
tr.changed td:first-child{border-left:4px solid var(--c)}
tr.ok td:first-child{border-left:4px solid var(--c)}
ul{margin:0;padding-left:1.1em}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.92em}
.err{color:#8e1b1b}
.none{color:#5a636e}
"""


def _failed_items(row: Row) -> str:
    items = []
    for run in sorted(row.host.runs.values(), key=lambda r: -r.end_ts):
        if run.error:
            items.append(f"<li><code>manifest</code>: <span class=\"err\">{escape(run.error)}</span></li>")
        for resource, outcome, error in run.resources:
            if outcome == "failed":
                items.append(f"<li><code>{escape(resource)}</code>: <span class=\"err\">{escape(error)}</span></li>")
    return f"<ul>{''.join(items)}</ul>" if items else "<span class=\"none\">none</span>"


def _row(row: Row) -> str:
    h = row.host
    labels = ", ".join(f"{escape(k)}={escape(v)}" for k, v in sorted(h.labels.items())) or "-"
    last = max(h.runs.values(), key=lambda r: r.end_ts).end if h.runs else ""
    nums = "".join(f"<td class=\"num\">{h.total(k)}</td>" for k in SHOWN_COUNTS)
    css = escape(row.outcome)
    return (f"<tr class=\"{css}\"><td>{escape(h.hostname)}</td><td class=\"outcome\">{css}</td><td>{labels}</td>"
            f"<td class=\"nowrap\"><time>{escape(last)}</time></td><td>{escape(age_text(row.age))}</td>{nums}"
            f"<td>{_failed_items(row)}</td></tr>")


def page(rows: List[Row], counts: Mapping[str, int], *, generated: str, stale: Optional[str] = None,
         title: str = "ccm fleet report") -> str:
    ordered = sorted(rows, key=lambda r: (RANK.get(r.outcome, 9), -r.host.last, r.host.hostname))
    total = max(1, counts.get("hosts", 0))
    summary = "".join(f"<li class=\"{o}\">{o}: {counts.get(o, 0)}</li>" for o in OUTCOMES)
    bar = "".join(f"<span class=\"{o}\" style=\"width:{100.0 * counts.get(o, 0) / total:.3f}%\" "
                  f"title=\"{o}: {counts.get(o, 0)}\"></span>" for o in OUTCOMES if counts.get(o, 0))
    meta = f"Generated {escape(generated)} from the CCM_REPORTS stream"
    if stale:
        meta += f"; hosts without a report for {escape(stale)} are stale"
    if counts.get("malformed"):
        meta += f"; {counts['malformed']} malformed report(s) skipped"
    heads = "".join(f"<th>{h}</th>" for h in ("Host", "Outcome", "Labels", "Last run", "Age"))
    heads += "".join(f"<th>{k.capitalize()}</th>" for k in SHOWN_COUNTS) + "<th>Failed resources</th>"
    body = "\n".join(_row(r) for r in ordered) or (
        f"<tr><td colspan=\"{6 + len(SHOWN_COUNTS)}\" class=\"none\">No matching reports</td></tr>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<p class="meta">{meta}</p>
<ul class="summary" aria-label="summary">
<li>hosts: {counts.get("hosts", 0)}</li>{summary}
</ul>
<div class="bar" aria-hidden="true">{bar}</div>
<table>
<thead><tr>{heads}</tr></thead>
<tbody>
{body}
</tbody>
</table>
</body>
</html>
"""
