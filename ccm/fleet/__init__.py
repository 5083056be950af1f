"""Fleet reports over NATS JetStream: every host publishes a small report after each run,
any host with a context reads the fleet's state (issue 28).

What: ``document`` (pure: the report of one run, from its events and summary),
``subjects`` (instance token, manifest id, subjects, the token and label checks),
``queue`` (reports that could not be delivered, under the state directory), ``wire``
(a small synchronous NATS client: the fast path of publishing), ``publish``
(``ReportPublisher.finished(result, context)``: the one entry point of a run), ``config``
(the agent's ``report:`` key), ``stream`` (``CCM_REPORTS``: init, reads, watch), ``view``
(pure: host rows, filters, text), ``html`` and ``prom`` (the page and the textfile).
Guarantees: importing this package imports nothing; ``nats`` is imported by the readers
and by the reference publisher only, never by a steady publish over the fast path.
Not: run bookkeeping (``ccm.lastrun``), registration (``ccm.registration``).
"""
from __future__ import annotations

SUBJECT_PREFIX = "choria.ccm.reports"
STREAM_SUBJECTS = [f"{SUBJECT_PREFIX}.>"]
CCM_REPORTS = "CCM_REPORTS"   # a stream name, not an environment variable (tests/unattended)
STREAM = CCM_REPORTS
KINDS = ("nats", "jetstream")
OUTCOME_HEADER = "Ccm-Outcome"   # a report's outcome (failed, changed, ok), set by the publisher
