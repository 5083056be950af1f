"""Interrupted runs stay safe: SIGINT, SIGTERM and SIGHUP during ``apply``/``ensure``.

What: while ``guard()`` is active, those signals do not raise into whatever the main thread
is doing (an atomic write, a session-store append): the handler only records the signal
and stops the commands that are running (their whole process group: SIGTERM, then
SIGKILL after a grace period). The runner refuses to start new commands, the apply loop
records the interrupted resource as failed ("interrupted by SIGTERM") and starts no
later one, and the command exits 128+signal (130, 143, 129) after printing what it has.

Not: a way to survive SIGKILL (nothing is); temp files left by that are swept elsewhere.

Handlers are installed through ``_signal`` (what ``signal.signal`` calls, without the
``signal`` module's enum classes) and the runner is looked up in ``sys.modules``: a run
that started no command never imports ``ccm.runner``, and has nothing to stop.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    import signal as _signal   # the same functions and constants, as the type checker knows them
    from typing import Any, Dict, Iterator, Optional
else:
    import _signal

SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
KILL_GRACE = 2.0

# The signal number that interrupted this run, if any (``received()``; the apply loop reads
# the attribute itself, twice per resource).
signal_received: Optional[int] = None


def received() -> Optional[int]:
    """The signal number that interrupted this run, if any."""
    return signal_received


def signal_name(signum: int) -> str:
    import signal

    return signal.Signals(signum).name


def message() -> str:
    """``interrupted by SIGTERM`` (empty when not interrupted)."""
    return f"interrupted by {signal_name(signal_received)}" if signal_received is not None else ""


def exit_code() -> int:
    return 128 + signal_received if signal_received is not None else 0


def _handler(signum: int, frame: Any) -> None:
    global signal_received
    first = signal_received is None
    if first:
        signal_received = signum
    runner = sys.modules.get("ccm.runner")   # no import work in a handler
    if runner is None:   # never imported: no command was started
        return
    runner.stop_running_commands(_signal.SIGTERM if first else _signal.SIGKILL)
    if first:
        import threading   # loaded by ccm.runner

        timer = threading.Timer(KILL_GRACE, runner.stop_running_commands, args=(_signal.SIGKILL,))
        timer.daemon = True
        timer.start()


def interrupt_run(signum: int) -> None:
    """What the handler does, for a process that handles its signals itself (the agent's
    main loop): record ``signum`` and stop the running commands (TERM, KILL after the
    grace period; a second call KILLs at once)."""
    _handler(signum, None)


@contextmanager
def guard() -> Iterator[None]:
    """Handle SIGINT/SIGTERM/SIGHUP as described above for the duration of the block.

    Only the main thread can install handlers; elsewhere (an agent's worker) this is a no-op.
    """
    global signal_received
    threading = sys.modules.get("threading")   # not loaded: no thread was started, this is the main one
    if threading is not None and threading.current_thread() is not threading.main_thread():
        yield
        return
    signal_received = None
    saved: Dict[int, Any] = {}
    for sig in SIGNALS:
        saved[sig] = _signal.signal(sig, _handler)
    try:
        yield
    finally:
        for signum, old in saved.items():
            _signal.signal(signum, old)


def reset() -> None:
    """Forget a recorded signal (tests and long-lived agents between runs)."""
    global signal_received
    signal_received = None
