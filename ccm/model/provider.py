"""Provider contracts.

A ``Provider`` is anything with a ``name``; each resource type widens it into its own
capability protocol. A ``ProviderFactory`` is the registration unit.
"""
from __future__ import annotations

from ccm.model.resource import Properties
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Sequence


class Manageable(tuple[bool, int]):
    """Whether a factory can manage a resource on this host (``usable``) and its
    ``priority`` (the lowest usable one is chosen): upstream's ``(bool, int)`` pair, a
    tuple with named fields (unpacked, indexed, compared and hashed as the pair)."""

    __slots__ = ()

    def __new__(cls, usable: bool, priority: int = 1) -> Manageable:
        return tuple.__new__(cls, (usable, priority))

    @property
    def usable(self) -> bool:
        return self[0]

    @property
    def priority(self) -> int:
        return self[1]

    def __getnewargs__(self) -> tuple[bool, int]:   # copy and pickle through __new__
        return (self[0], self[1])

    def __repr__(self) -> str:
        return f"Manageable(usable={self[0]!r}, priority={self[1]!r})"


class Provider(Protocol):
    name: str


class ProviderFactory(Protocol):
    """Optional attribute ``manageable_is_constant = True``: ``is_manageable`` gives the
    same answer for every resource, host state and facts, so the registry may remember
    which factory it chose for the type instead of asking again per resource.

    Optional split probe, ``is_usable(props) -> bool`` (no facts) and ``priority(facts,
    props) -> int``, answering together what ``is_manageable`` answers: when every
    factory of a type has it, the registry asks for priorities only when more than one
    factory is usable (so a lone usable provider never makes a run gather facts).

    Optional attribute ``provider_per_run = True``: a provider from ``new`` keeps nothing
    per resource, so the apply flow makes one per run (``ccm.resources.base.RunFlow``) and
    hands it each resource's write batch (``use_write_batch(batch or None)``)."""

    type_name: str
    name: str

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable: ...

    def new(self, runner: Any, log: Any) -> Provider: ...


class RunCache(Protocol):
    """Answers shared by the providers of one run (Puppet's prefetch); lives for one run.

    Optional capability: a provider with ``use_run_cache(cache)`` is handed the run's cache
    (by the shared flow, ``ccm.resources.base``) and may answer ``status`` from one batched
    query (``load``). The apply flow drops every answer after any resource changed
    something, and providers call ``invalidate`` after their own changes, so a status
    re-read after an action is always fresh.
    """

    def expected(self, type_name: str) -> Sequence[str]:
        """The (rendered) resource names of ``type_name`` this run will ask about, in order."""
        ...

    def load(self, key: str, loader: Callable[[], Any]) -> Any:
        """The value cached under ``key``; ``loader()`` computes it once (thread-safe)."""
        ...

    def run_state(self, key: str, factory: Callable[[], Any]) -> Any:
        """A provider's own bookkeeping for the whole run under ``key``, made once by
        ``factory()`` and kept when ``invalidate`` drops the cached answers."""
        ...

    def invalidate(self) -> None: ...


class Prefetching(Protocol):
    """The optional capability: a provider that answers ``status`` from the run's batch."""

    def use_run_cache(self, cache: RunCache) -> None: ...
