"""The agent's fixed periods and its retry policy.

What: the 30 s apply floor, the 2 minute fact floor, the 30 s remote-source check and
the "TwentySec" jittered back-off table (agent.md), all multiplied by one scale factor.
``CCM_AGENT_TEST_TIMESCALE`` (a float in (0, 1], default 1) exists **for tests only**:
it shrinks every fixed period at once so the suites can exercise the floors in seconds
instead of minutes. Production hosts never set it.
"""
from __future__ import annotations

import os
import random
import threading

from ccm.typing_guard import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing import Callable, Optional

T = TypeVar("T")

MIN_INTERVAL = 30.0           # apply interval floor (seconds)
DEFAULT_INTERVAL = 300.0
DEFAULT_SET_INTERVAL = 180.0  # seed 004: the set moves at the reconciler's speed
MIN_FACT_INTERVAL = 120.0
SOURCE_CHECK_INTERVAL = 30.0  # http(s)/obj:// change checks
LOCAL_CHECK_INTERVAL = 1.0    # stat() of a local manifest
MAX_TRIES_BEFORE_FALLBACK = 10

# milliseconds, attempt n (1-based) sleeps table[min(n, len-1)] jittered to [0.5v, 1.5v)
TWENTY_SEC = (500, 750, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 5500, 5750, 6000, 6500,
              7000, 7500, 8000, 8500, 9000, 9500, 10000, 10500, 10750, 11000, 11500, 12000, 12500,
              13000, 13500, 14000, 14500, 15000, 15500, 15750, 16000, 16500, 17000, 17500, 18000,
              18500, 19000, 19500, 20000)


def timescale() -> float:
    """The test-only factor applied to every fixed period (1.0 unless a test set it)."""
    raw = os.environ.get("CCM_AGENT_TEST_TIMESCALE", "")
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        return 1.0
    return value if 0 < value <= 1 else 1.0


def scaled(seconds: float) -> float:
    return seconds * timescale()


def backoff_delay(attempt: int, rng: Optional[random.Random] = None) -> float:
    """Seconds to sleep before retry ``attempt`` (1-based), jittered and scaled."""
    r = rng or random
    v = TWENTY_SEC[min(max(attempt, 1), len(TWENTY_SEC) - 1)]
    return scaled((v / 2 + r.randrange(0, v)) / 1000.0)


def retry(fn: Callable[[], T], *, stop: threading.Event, max_tries: int,
          on_error: Callable[[int, Exception], None]) -> T:
    """Call ``fn`` until it succeeds, at most ``max_tries`` times, sleeping the back-off
    between attempts (interrupted by ``stop``). Re-raises the last error."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn()
        except Exception as exc:  # every failure of a fact/data source is retried
            on_error(attempt, exc)
            if attempt >= max_tries or stop.is_set():
                raise
            if stop.wait(backoff_delay(attempt)):
                raise
