"""goss matchers, evaluated natively: plain values, arrays and the advanced matchers.

What: ``matches(expected, actual)`` decides one goss attribute test, ``matches_patterns``
applies goss' line patterns (``foo``, ``!foo``, ``/re/``, ``!/re/``) to reader-style
attributes (file contents, command output, HTTP body and headers), and ``describe``
renders an expectation for failure messages.
Guarantees: pure, no I/O; the same coercions goss documents (numeric and string
transforms, a string seen as a one-element or line array).
Not: gomega's full catalogue; ``semver-constraint`` and ``gjson`` are rejected at load.
"""
from __future__ import annotations

import json
import re

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set, Tuple

STRING_MATCHERS = ("have-prefix", "have-suffix", "contain-substring", "match-regexp")
NUMERIC_MATCHERS = ("gt", "ge", "lt", "le")
LIST_ARG_MATCHERS = ("and", "or", "contain-elements", "consist-of")
MATCHER_NAMES = frozenset(STRING_MATCHERS + NUMERIC_MATCHERS + LIST_ARG_MATCHERS + (
    "not", "equal", "contain-element", "have-len", "have-key", "have-key-with-value"))


class MatcherError(ValueError):
    """A matcher was malformed (only reachable when validation was skipped by templates)."""


def is_matcher(value: Any) -> bool:
    return isinstance(value, dict)


def describe(expected: Any) -> str:
    """Compact JSON of an expectation, as goss prints it (``[true]``, ``{"gt":1}``)."""
    try:
        return json.dumps(expected, separators=(",", ":"), sort_keys=False, default=str)
    except (TypeError, ValueError):
        return repr(expected)


def show(actual: Any) -> str:
    if isinstance(actual, str) and "\n" in actual:
        actual = lines_of(actual)
    return describe(actual)


# --- coercions (goss "transforms") -------------------------------------------------

def to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "\n".join(to_string(v) for v in value)
    return str(value)


def to_number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def lines_of(text: str) -> List[str]:
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def to_list(value: Any) -> List[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return lines_of(value)
    if value is None:
        return []
    return [value]


def equal_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return to_string(expected).lower() == to_string(actual).lower()
    if isinstance(expected, (int, float)):
        n = to_number(actual)
        return n is not None and n == float(expected)
    if expected is None:
        return actual is None or actual == ""
    if isinstance(expected, (list, tuple)):
        seq = to_list(actual)
        return len(seq) == len(expected) and all(matches(e, a) for e, a in zip(expected, seq))
    return to_string(expected) == to_string(actual)


# --- matching ----------------------------------------------------------------------

def _bipartite(matchers: List[Any], elements: List[Any]) -> int:
    """Size of the largest assignment of matchers to distinct elements (gomega's rule)."""
    assigned: Dict[int, int] = {}  # element index -> matcher index

    def attempt(mi: int, seen: Set[int]) -> bool:
        for ei, el in enumerate(elements):
            if ei in seen or not matches(matchers[mi], el):
                continue
            seen.add(ei)
            if ei not in assigned or attempt(assigned[ei], seen):
                assigned[ei] = mi
                return True
        return False

    return sum(1 for mi in range(len(matchers)) if attempt(mi, set()))


def _string_matcher(name: str, arg: Any, actual: Any) -> bool:
    text = to_string(actual)
    want = to_string(arg)
    if name == "have-prefix":
        return text.startswith(want)
    if name == "have-suffix":
        return text.endswith(want)
    if name == "contain-substring":
        return want in text
    return _bounded_search(want, text)


def _bounded_search(pattern: str, text: str) -> bool:
    """``re.search`` with the expression language's guards (ccm.expr.limits)."""
    from ccm.expr import limits

    try:
        compiled = re.compile(pattern)
        limits.check_pattern(pattern)
        return limits.bounded_search(compiled, text) is not None
    except re.error as exc:
        raise MatcherError(f"invalid regular expression {pattern!r}: {exc}") from None
    except limits.LimitError as exc:
        raise MatcherError(str(exc)) from None


def _numeric_matcher(name: str, arg: Any, actual: Any) -> bool:
    got = to_number(actual)
    want = to_number(arg)
    if got is None or want is None:
        return False
    return {"gt": got > want, "ge": got >= want, "lt": got < want, "le": got <= want}[name]


def _advanced(name: str, arg: Any, actual: Any) -> bool:
    if name in STRING_MATCHERS:
        return _string_matcher(name, arg, actual)
    if name in NUMERIC_MATCHERS:
        return _numeric_matcher(name, arg, actual)
    if name == "equal":
        if isinstance(arg, (list, tuple)):
            seq = to_list(actual)
            return len(seq) == len(arg) and all(equal_scalar(e, a) for e, a in zip(arg, seq))
        return equal_scalar(arg, actual)
    if name == "not":
        return not matches(arg, actual)
    if name == "and":
        return all(matches(m, actual) for m in arg)
    if name == "or":
        return any(matches(m, actual) for m in arg)
    if name == "contain-element":
        return any(matches(arg, el) for el in to_list(actual))
    if name == "contain-elements":
        return _bipartite(list(arg), to_list(actual)) == len(arg)
    if name == "consist-of":
        elements = to_list(actual)
        return len(elements) == len(arg) and _bipartite(list(arg), elements) == len(arg)
    if name == "have-len":
        try:
            return len(actual if isinstance(actual, (dict, list, tuple)) else to_string(actual)) == int(arg)
        except (TypeError, ValueError):
            return False
    if name == "have-key":
        return isinstance(actual, dict) and any(matches(arg, k) for k in actual)
    if name == "have-key-with-value":
        if not isinstance(actual, dict):
            return False
        return all(k in actual and matches(v, actual[k]) for k, v in arg.items())
    raise MatcherError(f'unsupported goss matcher "{name}"')


def matches(expected: Any, actual: Any) -> bool:
    """Does ``actual`` (what the system shows) satisfy ``expected`` (the goss rule)?"""
    if isinstance(expected, dict):
        if len(expected) != 1:
            raise MatcherError(f"a matcher must have exactly one key, got {describe(expected)}")
        (name, arg), = expected.items()
        return _advanced(str(name), arg, actual)
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) and not isinstance(actual, str):
            return False
        return _bipartite(list(expected), to_list(actual)) == len(expected)
    return equal_scalar(expected, actual)


# --- reader attributes (line patterns) ---------------------------------------------

def _pattern_hit(pattern: str, line: str) -> bool:
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        return _bounded_search(pattern[1:-1], line)
    return pattern in line


def failed_patterns(patterns: List[Any], text: str) -> List[str]:
    """goss' io.Reader rule: each pattern must hit some line (``!`` = no line may hit).

    Returns the patterns that were not satisfied (empty when all passed).
    """
    lines = lines_of(text) or [""]
    missed = []
    for raw in patterns:
        pattern = to_string(raw)
        negate = pattern.startswith("!")
        body = pattern[1:] if negate else pattern
        if body.startswith("\\!"):
            body = body[1:]   # "\\!foo" looks for a literal "!foo"
        hit = any(_pattern_hit(body, line) for line in lines)
        if hit == negate:
            missed.append(pattern)
    return missed


def reader_matches(expected: Any, text: str) -> Tuple[bool, str]:
    """Check a reader attribute; returns (ok, what failed)."""
    if isinstance(expected, dict):
        ok = matches(expected, lines_of(text))
        return ok, "" if ok else describe(expected)
    patterns = expected if isinstance(expected, (list, tuple)) else [expected]
    missed = failed_patterns(list(patterns), text)
    return not missed, "patterns not found: " + describe(missed) if missed else ""
