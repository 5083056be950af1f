"""``ccm agent [--config FILE] [--context NAME]``: run the agent until SIGTERM/SIGINT.

Signals: SIGHUP re-reads the manifest set and external data now; SIGTERM and SIGINT
let the running resource finish, stop the workers and exit 0 (within 15 s).
``--context`` (or ``NATS_CONTEXT``) overrides the file's ``nats_context`` only when
given: the file's value is honoured otherwise (upstream's flag default always won).
"""
from __future__ import annotations

import os
import signal
from typing import Any, List

from ccm.cli.common import ArgumentParser

def parser() -> ArgumentParser:
    from ccm.agent.config import DEFAULT_PATH

    p = ArgumentParser(prog="ccm agent", description="Run the agent: apply manifests continuously")
    p.add_argument("--config", default=DEFAULT_PATH, metavar="FILE", help=f"agent configuration (default {DEFAULT_PATH})")
    p.add_argument("--context", default=os.environ.get("NATS_CONTEXT") or None,
                   help="NATS context (overrides nats_context; env NATS_CONTEXT)")
    return p

def run(argv: List[str]) -> int:

    from ccm import log as ccmlog
    from ccm.agent.agent import Agent
    from ccm.agent.config import load_config
    from ccm.agent.log import make_logger

    args = parser().parse_args(argv)
    cfg = load_config(args.config)
    level = ccmlog._state["user_level"]
    log = make_logger(cfg.log_level, debug=level == ccmlog.DEBUG,
                      info=ccmlog._state["internal_level"] == ccmlog.INFO)
    agent = Agent(cfg, log, nats_context=args.context)

    def on_stop(signum: int, _frame: Any) -> None:
        if not agent.stop_event.is_set():
            log.warn("Shutting down", signal=signal.Signals(signum).name)
        agent.stop()

    def on_hup(_signum: int, _frame: Any) -> None:
        log.info("Reloading the manifest set and external data (SIGHUP)")
        agent.reload()

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_hup)
    agent.start()
    while not agent.stop_event.wait(1.0):
        pass
    if not agent.shutdown(timeout=12.0):
        log.warn("Exiting while a resource is still running")
    return 0
