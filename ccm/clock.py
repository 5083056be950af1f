"""What stamps a new event, state or session: the wall clock and KSUID ids.

What: ``now_ns()`` (nanoseconds since the epoch), ``new_ksuid()`` (an upstream-compatible
KSUID: 4 bytes of seconds since 2014-05-13 and 16 random bytes, 27 base62 digits), its
two halves for callers that draw an id now and encode it later (``draw_ksuid()``: the time
in nanoseconds and the random part; ``ksuid_text(drawn)``), and ``is_ksuid``. The model's
value classes read no clock and draw
no ids: their makers (providers, session stores, ``ccm.resources.flowevents``) take them
from here.

Guarantees: every KSUID's random part is handed out once per process; a forked child
never reuses its parent's (the pool is dropped in the child); encoding is deterministic.
Not: a monotonic clock (durations use ``time.monotonic_ns``).
"""
from __future__ import annotations

import os
import time

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

    Drawn = Tuple[int, bytes]   # (nanoseconds since the epoch, 16 random bytes)

now_ns = time.time_ns

_KSUID_EPOCH = 1_400_000_000
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_RANDOM: List[bytes] = []   # the random parts of KSUIDs to come, 16 bytes each


def _forget_pool() -> None:
    del _RANDOM[:]


os.register_at_fork(after_in_child=_forget_pool)   # a forked child must not reuse our bytes

_pooled = [0]   # chunks made so far


def random16() -> bytes:
    """16 random bytes, popped from a pool made by one getrandom() call: ``list.pop`` is
    atomic, so no lock (threads that find the pool empty each refill it). The first pools
    are small (a run of a few resources needs few), later ones 256 chunks."""
    while True:
        try:
            return _RANDOM.pop()
        except IndexError:
            count = 256 if _pooled[0] >= 64 else 16
            _pooled[0] += count
            pool = os.urandom(16 * count)
            _RANDOM.extend([pool[i:i + 16] for i in range(0, 16 * count, 16)])


pooled_random16 = _RANDOM.pop   # random16() while the pool lasts (IndexError when empty), without its call


def draw_ksuid() -> Drawn:
    """The time (now, in nanoseconds: also a timestamp for what the id names) and the
    random part of a new KSUID, to encode with ``ksuid_text`` when it is needed."""
    try:
        chunk = pooled_random16()
    except IndexError:
        chunk = random16()
    return (time.time_ns(), chunk)


# Two digits per divmod (14 steps, not 27) once a process has encoded enough ids to pay for
# the 3,844-entry table; a run that encodes a few ids is cheaper digit by digit.
_PAIRS: List[str] = []
_PAIRS_AFTER = 32
_encoded = [0]


def _base62(n: int) -> str:
    out = []
    pairs = _PAIRS
    if not pairs:
        _encoded[0] += 1
        if _encoded[0] <= _PAIRS_AFTER:
            while n:
                n, r = divmod(n, 62)
                out.append(_B62[r])
            return "".join(reversed(out))
        pairs.extend(a + b for a in _B62 for b in _B62)
    while n:
        n, r = divmod(n, 3844)
        out.append(pairs[r])
    return "".join(reversed(out))


def ksuid_text(drawn: Drawn) -> str:
    """The KSUID of a drawn time and random part."""
    return _ksuid(drawn[0] // 1_000_000_000, drawn[1])


def new_ksuid(ts: Optional[float] = None) -> str:
    """A new KSUID (``ts``: its time in seconds instead of now)."""
    return _ksuid(int(time.time() if ts is None else ts), random16())


def _ksuid(seconds: int, random16: bytes) -> str:
    n = ((seconds - _KSUID_EPOCH) & 0xFFFFFFFF) << 128 | int.from_bytes(random16, "big")   # Go's uint32()
    return _base62(n).rjust(28, "0")[-27:]   # 20 bytes < 62**27: digit 28 is 0


def is_ksuid(text: str) -> bool:
    return isinstance(text, str) and len(text) == 27 and all(c in _B62 for c in text)
