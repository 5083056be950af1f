"""At most N repairs per minute per resource, then exponential back-off (pure; time given).

``admit(ref, now)``: a re-apply of ``ref`` may run now, or not before a time;
``record(ref, now)``: it repaired something (a re-apply that found no drift, a service
poll, never counts). After ``limit`` repairs within a minute the next one waits ``base * 2**(step-1)`` seconds
(capped at ``cap``); the repair after each wait runs, and drifting again within the
minute doubles the wait. A minute without repairs starts over. Each new step is
returned once, for the caller to report.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Deque, Dict, Optional, Set, Tuple

REPAIRS_PER_MINUTE = 5
BASE_DELAY = 2.0
MAX_DELAY = 300.0
WINDOW = 60.0


@dataclass
class _State:
    times: Deque[float] = field(default_factory=deque)
    step: int = 0
    released: int = 0      # the step whose one repair after its wait already ran
    not_before: float = 0.0


class Backoff:
    def __init__(self, limit: int = REPAIRS_PER_MINUTE, base: float = BASE_DELAY, cap: float = MAX_DELAY):
        self.limit = limit
        self.base = base
        self.cap = cap
        self._state: Dict[str, _State] = {}

    def admit(self, ref: str, now: float) -> Tuple[bool, float, Optional[int]]:
        """-> (run now, not before, the new back-off step to report or None)."""
        st = self._state.setdefault(ref, _State())
        while st.times and now - st.times[0] >= WINDOW:
            st.times.popleft()
        if now < st.not_before:
            return False, st.not_before, None
        if st.step and st.released < st.step:
            st.released = st.step
            return True, now, None
        if len(st.times) >= self.limit:
            st.step += 1
            st.not_before = now + min(self.base * 2 ** (st.step - 1), self.cap)
            return False, st.not_before, st.step
        if not st.times:
            st.step = st.released = 0
        return True, now, None

    def record(self, ref: str, now: float) -> None:
        self._state.setdefault(ref, _State()).times.append(now)

    def step(self, ref: str) -> int:
        st = self._state.get(ref)
        return st.step if st is not None else 0

    def forget(self, keep: Set[str]) -> None:
        for ref in [r for r in self._state if r not in keep]:
            del self._state[ref]
