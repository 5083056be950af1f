"""Helpers of the fleet tests: report bodies made by the publishing code's own document builder,
and a subprocess environment whose context points at a test server."""
from __future__ import annotations

import json
import os
import time
from typing import Dict, Optional, Tuple

from ccm.fleet import document, subjects
from ccm.model.events import SessionSummary, TransactionEvent


def report(hostname: str, outcome: str = "ok", *, labels: Optional[Dict[str, str]] = None,
           source: str = "/etc/ccm/site.yaml", age: float = 0.0, error: str = "it broke",
           resource: str = "/etc/motd") -> Tuple[str, bytes]:
    """(subject, body) of a report of ``hostname`` whose run ended ``age`` seconds ago."""
    events = [TransactionEvent("file", "/etc/stable")]
    if outcome == "changed":
        events.append(TransactionEvent("file", resource, changed=True))
    if outcome == "failed":
        events.append(TransactionEvent("file", resource, failed=True, errors=[error]))
    end = int((time.time() - age) * 1e9)
    instance = subjects.instance_token(hostname)
    doc = document.build(events, SessionSummary.build(events), instance=instance, hostname=hostname,
                         labels=labels or {}, source=source, sha256="0" * 64, start_ns=end - 10**9, end_ns=end,
                         exit_code=1 if outcome == "failed" else 0, noop=False)
    return subjects.report_subject(instance, subjects.manifest_id(source)), json.dumps(doc).encode()


def make_env(tmp_path, urls: str, state: str) -> Dict[str, str]:
    from natsfixture import write_context

    cfg = str(tmp_path / "config")
    write_context(cfg, "CCM", {"url": urls})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "CCM_"))}
    env.update(XDG_CONFIG_HOME=cfg, CCM_CACHE_DIR=str(tmp_path / "cache"), CCM_STATE_DIR=state)
    if "CCM_LOCK_DIR" in os.environ:
        env["CCM_LOCK_DIR"] = os.environ["CCM_LOCK_DIR"]
    return env
