"""Interrupted runs stay safe: SIGINT, SIGTERM and SIGHUP during ``apply``/``ensure``.

What: while ``guard()`` is active, those signals do not raise into whatever the main thread
is doing (an atomic write, a session-store append): the handler only records the signal
and stops the commands that are running (their whole process group: SIGTERM, then
SIGKILL after a grace period). The runner refuses to start new commands, the apply loop
records the interrupted resource as failed ("interrupted by SIGTERM") and starts no
later one, and the command exits 128+signal (130, 143, 129) after printing what it has.

Not: a way to survive SIGKILL (nothing is); temp files left by that are swept elsewhere.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
KILL_GRACE = 2.0

_received: Optional[int] = None


def received() -> Optional[int]:
    """The signal number that interrupted this run, if any."""
    return _received


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def message() -> str:
    """``interrupted by SIGTERM`` (empty when not interrupted)."""
    return f"interrupted by {signal_name(_received)}" if _received is not None else ""


def exit_code() -> int:
    return 128 + _received if _received is not None else 0


def _handler(signum: int, frame: Any) -> None:
    global _received
    first = _received is None
    if first:
        _received = signum
    from ccm import runner   # already imported by guard(): no import work in a handler

    runner.stop_running_commands(signal.SIGTERM if first else signal.SIGKILL)
    if first:
        timer = threading.Timer(KILL_GRACE, runner.stop_running_commands, args=(signal.SIGKILL,))
        timer.daemon = True
        timer.start()


@contextmanager
def guard() -> Iterator[None]:
    """Handle SIGINT/SIGTERM/SIGHUP as described above for the duration of the block.

    Only the main thread can install handlers; elsewhere (an agent's worker) this is a no-op.
    """
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import ccm.runner  # noqa: F401  (the handler uses it)

    _received = None
    saved: Dict[signal.Signals, Any] = {}
    for sig in SIGNALS:
        saved[sig] = signal.signal(sig, _handler)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def reset() -> None:
    """Forget a recorded signal (tests and long-lived agents between runs)."""
    global _received
    _received = None
