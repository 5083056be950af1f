"""``ccm agent [--config FILE] [--context NAME]``: run the agent until SIGTERM/SIGINT.

Signals: SIGHUP re-reads the manifest set and external data now; SIGTERM and SIGINT
stop the workers and exit 0 (within 15 s): a running command's process group gets
SIGTERM, SIGKILL after 2 s (at once on a second signal), its resource is recorded as
interrupted and no later resource starts (``ccm.interrupt``, as ``ccm apply`` does).
``--context`` (or ``NATS_CONTEXT``) overrides the file's ``nats_context`` only when
given: the file's value is honoured otherwise (upstream's flag default always won).
"""
from __future__ import annotations

import os
import select
import signal

from ccm.cli.common import ArgumentParser
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List

def parser() -> ArgumentParser:
    from ccm.agent.config import DEFAULT_PATH

    p = ArgumentParser(prog="ccm agent", description="Run the agent: apply manifests continuously")
    p.add_argument("--config", default=DEFAULT_PATH, metavar="FILE",
                   help=f"agent configuration (default {DEFAULT_PATH})")
    p.add_argument("--context", default=os.environ.get("NATS_CONTEXT") or None,
                   help="NATS context (overrides nats_context; env NATS_CONTEXT)")
    p.add_argument("--check", action="store_true", help="validate the configuration and exit")
    return p

def run(argv: List[str]) -> int:

    from ccm import interrupt
    from ccm import log as ccmlog
    from ccm.agent.agent import Agent
    from ccm.agent.config import load_config
    from ccm.agent.log import make_logger

    args = parser().parse_args(argv)
    cfg = load_config(args.config)
    if args.check:
        print(f"{args.config}: configuration ok")
        return 0
    log = make_logger(cfg.log_level, debug=ccmlog.user_level() == ccmlog.DEBUG,
                      info=ccmlog.internal_level() == ccmlog.INFO)
    agent = Agent(cfg, log, nats_context=args.context)

    # Handlers only record the signal: the main thread acts on it, so a handler never
    # takes a lock the interrupted code might hold.
    received: List[int] = []
    rfd, wfd = os.pipe()
    os.set_blocking(rfd, False)
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: received.append(signum))
    agent.start()
    try:
        while not agent.stop_event.is_set():
            select.select([rfd], [], [], 5.0)
            try:
                os.read(rfd, 512)
            except BlockingIOError:
                pass
            while received:
                signum = received.pop(0)
                if signum == signal.SIGHUP:
                    log.info("Reloading the manifest set and external data", signal="SIGHUP")
                    agent.reload()
                else:
                    if not agent.stop_event.is_set():
                        log.warn("Shutting down", signal=signal.Signals(signum).name)
                        agent.stop()
                    # as `ccm apply` does: the running command's group gets TERM, then KILL
                    # after a grace period (at once on a second signal), and its resource is
                    # recorded as interrupted; nothing is left running without its agent
                    interrupt.interrupt_run(signum)
    finally:
        if not agent.shutdown(timeout=12.0):
            log.warn("Exiting while a resource is still running")
        signal.set_wakeup_fd(-1)
        os.close(rfd)
        os.close(wfd)
    return 0
