"""A mapping that is computed on first access.

Facts cost a psutil import and a gather; most resources never look at them (a file whose
content has no template does not), so the manager hands out a lazy view. ``probe(path)``
reads one value of the tree; its owner may answer it without computing the whole mapping
(the manager does for a fact with a cheap source of its own: the platform family).
"""
from __future__ import annotations

from collections.abc import Mapping

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, Optional, Tuple


def value_at(tree: Any, path: Tuple[str, ...]) -> Any:
    """The value at ``path`` in nested mappings; None where there is none."""
    for key in path:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(key)
    return tree


class LazyMapping(Mapping[str, "Any"]):   # "Any": typing is for the type checker only
    def __init__(self, loader: Callable[[], Dict[str, Any]],
                 probe: Optional[Callable[[Tuple[str, ...]], Any]] = None):
        self._loader = loader
        self._value: Optional[Dict[str, Any]] = None
        self._probe = probe

    def probe(self, path: Tuple[str, ...]) -> Any:
        """``value_at(self, path)``, through the owner's ``probe`` while unresolved."""
        if self._value is None and self._probe is not None:
            return self._probe(path)
        return value_at(self.resolve(), path)

    @property
    def resolved(self) -> bool:
        """Whether the mapping has been computed."""
        return self._value is not None

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
