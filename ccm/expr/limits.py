"""Bounds on what one expression may produce: string and collection sizes, regex time.

What: ``MAX_STRING`` characters for a string built by ``repeat``/``replace``,
``MAX_ITEMS`` items for a range (``1..n``), and regular expressions that cannot run away.

Regular expressions: upstream evaluates ``matches`` with Go's RE2 (linear time). Python's
``re`` backtracks, so ``^(a+)+$`` takes exponential time. Two guards, cheapest first:

* ``check_pattern`` rejects, when the pattern is compiled, an unbounded quantifier applied
  to a group that itself holds a quantifier (``(a+)+``, ``(a*)*``, ``(\\w+\\s?)*``): the
  classic catastrophic shape, refused with a message naming the pattern;
* ``bounded_search`` runs a search under a ``MAX_REGEX_SECONDS`` interval timer when on
  the main thread (``_sre`` checks for signals while matching), so a shape the static
  check misses (overlapping alternations) still fails in about a second.

We did not add an RE2 binding: runtime dependencies are fixed, and a pure-Python
Thompson NFA would be slow for every ordinary pattern.
"""
from __future__ import annotations

import re
import signal
import threading

import importlib
import sys

from ccm.expr.errors import ExprError
from ccm.typing_guard import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing import Any, Callable, Optional

# Python 3.11+ moved the regex parser (and deprecated the old name)
_sre_parse: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")

T = TypeVar("T")

MAX_STRING = 16 << 20
MAX_ITEMS = 1_000_000
MAX_REGEX_SECONDS = 1.0


class LimitError(ExprError):
    """An expression would produce more than ccm allows, or a regex ran too long."""

    def __str__(self) -> str:
        return f"{self.message} (in expression '{self.expr}')" if self.expr else self.message


def check_string_size(func: str, size: int) -> None:
    if size > MAX_STRING:
        raise LimitError(f"{func}: result of {size} characters exceeds the limit of {MAX_STRING}")


def check_items(func: str, count: int) -> None:
    if count > MAX_ITEMS:
        raise LimitError(f"{func}: result of {count} items exceeds the limit of {MAX_ITEMS}")


def _has_repeat(items: Any) -> bool:
    for op, av in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if av[1] > 1:
                return True
            if _has_repeat(av[2]):
                return True
        elif name == "SUBPATTERN":
            if _has_repeat(av[-1]):
                return True
        elif name == "BRANCH":
            if any(_has_repeat(alt) for alt in av[1]):
                return True
    return False


def _nested(items: Any) -> bool:
    for op, av in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, body = av
            if hi > 1 and _has_repeat(body):
                return True
            if _nested(body):
                return True
        elif name == "SUBPATTERN":
            if _nested(av[-1]):
                return True
        elif name == "BRANCH":
            if any(_nested(alt) for alt in av[1]):
                return True
        elif name in ("ASSERT", "ASSERT_NOT"):
            if _nested(av[1]):
                return True
    return False


def check_pattern(pattern: str) -> None:
    """Raise ``LimitError`` for a nested quantifier that can backtrack exponentially."""
    try:
        parsed = _sre_parse.parse(pattern)
    except re.error:
        return  # the compile step reports syntax errors in its own words
    if _nested(list(parsed)):
        raise LimitError(f"regular expression `{pattern}` nests a quantifier inside a repeated group, "
                         f"which can take exponential time; rewrite it without nested repetition")


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def bounded(run: Callable[[], T], pattern: str, size: int) -> T:
    """``run()`` (regular-expression work on a ``size``-character text) under the
    ``MAX_REGEX_SECONDS`` timer when on the main thread; ``LimitError`` when it runs over."""
    if threading.current_thread() is not threading.main_thread():
        return run()
    try:
        previous = signal.signal(signal.SIGALRM, _alarm)
    except ValueError:  # pragma: no cover - not the main interpreter
        return run()
    old_timer = signal.setitimer(signal.ITIMER_REAL, MAX_REGEX_SECONDS)
    try:
        return run()
    except _Timeout:
        raise LimitError(f"regular expression `{pattern}` ran longer than "
                         f"{MAX_REGEX_SECONDS:g}s on a {size}-character string") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_timer[0]:
            signal.setitimer(signal.ITIMER_REAL, *old_timer)


def bounded_search(compiled: "re.Pattern[str]", text: str) -> Optional["re.Match[str]"]:
    return bounded(lambda: compiled.search(text), compiled.pattern, len(text))
