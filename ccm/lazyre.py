"""Regular expressions compiled at their first use.

What: ``LazyPattern(pattern, flags)`` stands where a module would keep ``re.compile(...)``
and offers the same matching methods; ``re`` (which imports ``enum`` and compiles the
pattern, ~2 ms per process) is imported when one of them is first called, so a run that
never needs the pattern never pays for it (issue 16).

Not: a cache of arbitrary patterns (``re`` has one); one object, one pattern.
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    import re
    from typing import Any, Iterator, List, Optional


class LazyPattern:
    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: Optional[re.Pattern[str]] = None

    def compiled(self) -> re.Pattern[str]:
        found = self._compiled
        if found is None:
            import re

            found = self._compiled = re.compile(self.pattern, self.flags)
        return found

    def match(self, string: str, *args: Any) -> Optional[re.Match[str]]:
        return self.compiled().match(string, *args)

    def fullmatch(self, string: str, *args: Any) -> Optional[re.Match[str]]:
        return self.compiled().fullmatch(string, *args)

    def search(self, string: str, *args: Any) -> Optional[re.Match[str]]:
        return self.compiled().search(string, *args)

    def finditer(self, string: str, *args: Any) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, *args)

    def findall(self, string: str, *args: Any) -> List[Any]:
        return self.compiled().findall(string, *args)

    def sub(self, repl: Any, string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"
