"""Provider contracts.

A ``Provider`` is anything with a ``name``; each resource type widens it into its own
capability protocol. A ``ProviderFactory`` is the registration unit, and the base class
that declares a factory's optional capabilities. ``WriteSink`` is where providers write
files (the run's sink, ``ccm.model.run``).
"""
from __future__ import annotations

from ccm.model.resource import Properties
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Callable, ContextManager, Mapping, Optional, Sequence


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


class ProviderFactory:
    """The base every provider factory inherits: the registration unit of a provider
    (``ccm.registry.Registry.register`` refuses anything else), with its optional
    capabilities declared here, off, so the registry and the flow read them instead of
    probing. A factory switches one on by setting the class attribute:

    * ``manageable_is_constant``: ``is_manageable`` gives the same answer for every
      resource, host state and facts, so the registry may remember which factory it chose
      for the type instead of asking again per resource.
    * ``split_probe``: ``is_usable(props)`` (no facts) and ``priority(facts, props)``
      answer together what ``is_manageable`` answers; when every factory of a type has it,
      the registry asks for priorities only when more than one factory is usable (so a
      lone usable provider never makes a run gather facts).
    * ``provider_per_run``: a provider from ``new`` keeps nothing per resource, so the
      apply flow makes one per run (``ccm.resources.base.RunFlow``).
    * ``prefetches``: its providers are ``Prefetching``: the flow hands each the run's
      cache (when the run has one).
    * ``stages_writes``: its providers are ``StagingWrites``: the flow hands each the run's
      write sink (``ccm.model.run.RunSink``).
    """

    type_name: str
    name: str
    manageable_is_constant = False
    split_probe = False
    provider_per_run = False
    prefetches = False
    stages_writes = False

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        raise NotImplementedError

    def is_usable(self, props: Properties) -> bool:
        """``split_probe`` factories: whether this host can run the provider at all."""
        raise NotImplementedError

    def priority(self, facts: Mapping[str, Any], props: Properties) -> int:
        """``split_probe`` factories: the priority of a usable provider (lowest wins)."""
        raise NotImplementedError

    def new(self, runner: Any, log: Any) -> Any:
        raise NotImplementedError


class AlwaysManageable(ProviderFactory):
    """A factory whose provider manages every resource of its type on every host: it
    answers ``(True, 1)`` and says so (``manageable_is_constant``)."""

    manageable_is_constant = True

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(True, 1)


class RunCache(Protocol):
    """Answers shared by the providers of one run (Puppet's prefetch); lives for one run.

    The providers of a factory declaring ``prefetches`` are handed the run's cache (by the
    shared flow, ``ccm.resources.base``, ``Prefetching.use_run_cache``) and may answer
    ``status`` from one batched query (``load``). The apply flow drops every answer after any resource changed
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
    """A provider of a ``prefetches`` factory: answers ``status`` from the run's batch."""

    def use_run_cache(self, cache: RunCache) -> None: ...


class StagedFile(Protocol):
    """A file a sink holds, written but not yet in place: what its rename will publish."""

    stat: Any        # os.stat_result of the staged file (owner, mode, size, mtime), or None
    checksum: str    # sha256 of its bytes


class WriteSink(Protocol):
    """Where a provider writes a file's new content: the run's sink (``RunSink``).

    ``stage`` yields a binary file; when the block ends without an exception its bytes
    become ``path``'s content, atomically (old or new content, never a part), either at
    once or when the sink commits (a batching sink). Until then ``staged(path)`` describes
    the held file (what the rename will publish), else it is None. An exception in the
    block leaves ``path`` untouched.
    """

    def stage(self, path: str, *, mode: int, uid: Optional[int] = None,
              gid: Optional[int] = None) -> ContextManager[Any]: ...

    def staged(self, path: str) -> Optional[StagedFile]: ...


class StagingWrites(Protocol):
    """A provider of a ``stages_writes`` factory: writes files through the run's sink."""

    def use_write_sink(self, sink: WriteSink) -> None: ...
