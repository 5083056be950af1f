"""The per-run cache behind provider prefetching (``ccm.model.provider.RunCache``).

What: created by the engine for one top-level run, knowing the names of every resource
of the manifest by type; providers batch their status queries through ``load``. Dropped
after the run (an agent is long-running: nothing is kept from one run to the next),
cleared after every resource that changed something, and by providers after their own
changes. Thread-safe: one lock, held while a loader runs, so a batch is queried once.
"""
from __future__ import annotations

from _thread import RLock   # threading.RLock's C implementation, without importing threading

from ccm.model.resource import is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple


class RunCache:
    def __init__(self, names: Iterable[Tuple[str, str]] = ()):
        self._names = names   # sorted by type when a provider first asks (file-only runs never do)
        self._expected: Dict[str, List[str]] = {}
        self._sorted = False
        self._lock = RLock()
        self._data: Dict[str, Any] = {}
        self._kept: Dict[str, Any] = {}   # run_state: not dropped by invalidate

    @classmethod
    def for_manifest(cls, manifest: Any) -> "RunCache":
        return cls((e.props.type_name, e.props.name) for e in manifest.resources)

    def expected(self, type_name: str) -> Sequence[str]:
        with self._lock:
            if not self._sorted:
                by_type: Dict[str, Dict[str, None]] = {}
                for kind, name in self._names:
                    if isinstance(name, str) and name and not is_templated(name):
                        by_type.setdefault(kind, {})[name] = None
                self._expected = {t: list(n) for t, n in by_type.items()}
                self._names, self._sorted = (), True
            return tuple(self._expected.get(type_name, ()))

    def load(self, key: str, loader: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._data:
                self._data[key] = loader()
            return self._data[key]

    def run_state(self, key: str, factory: Callable[[], Any]) -> Any:
        with self._lock:
            value = self._kept.get(key)
            if value is None:
                value = self._kept[key] = factory()
            return value

    def invalidate(self) -> None:
        with self._lock:
            self._data.clear()
