"""goss-format health checks evaluated natively in Python (no goss binary needed).

Layout: ``schema.py`` (supported types/attributes, load-time ``validate_goss_rules``),
``matchers.py`` (goss matchers, pure), ``system.py`` and ``network.py`` (observations),
``evaluate.py`` (``evaluate(rules, ctx) -> GossReport``).
Importing this package pulls in only the pure schema and matchers; the evaluator (and
urllib/ssl with it) is imported when a check actually runs.
"""
from __future__ import annotations

from ccm.healthcheck.goss.schema import parse_rules, validate_goss_rules

__all__ = ["parse_rules", "validate_goss_rules"]
