"""A mapping that is computed on first access.

Facts cost a psutil import and a gather; most resources never look at them (a file whose
content has no template does not), so the manager hands out a lazy view.
"""
from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, Optional

    _StrMapping = Mapping[str, Any]
else:
    _StrMapping = Mapping


class LazyMapping(_StrMapping):
    def __init__(self, loader: Callable[[], Dict[str, Any]]):
        self._loader = loader
        self._value: Optional[Dict[str, Any]] = None

    def resolve(self) -> Dict[str, Any]:
        if self._value is None:
            self._value = self._loader()
        return self._value

    def __getitem__(self, key: str) -> Any:
        return self.resolve()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.resolve())

    def __len__(self) -> int:
        return len(self.resolve())

    def __repr__(self) -> str:
        return f"LazyMapping({'unresolved' if self._value is None else self._value!r})"
