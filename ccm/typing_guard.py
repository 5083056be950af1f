"""Typing in ccm: one rule, and why ``typing`` is not imported when ccm runs.

Why: importing ``typing`` (with the ``re``, ``enum``, ``collections`` ... it pulls in)
costs a ``ccm apply`` several milliseconds of every cron run on a minimal host (issue 16
measured it), and annotations are never evaluated (``from __future__ import annotations``
everywhere), so only the type checker reads them. pip kept the same rule in
``pip._internal.utils.typing`` while it supported Python 2.

The rule, for every module of ccm (``tests/test_architecture.py`` enforces it)::

    from ccm.typing_guard import TYPE_CHECKING          # never ``TYPE_CHECKING = False``
    if TYPE_CHECKING:
        from typing import Any, Dict, Optional          # typing's names: here only

* ``typing`` is imported under ``if TYPE_CHECKING:`` only; names from it appear in
  annotations and in other ``if TYPE_CHECKING:`` lines (type aliases are defined there:
  one definition, for the checker), never in a run-time expression.
* What must exist at run time comes from here or from ``collections.abc``: a protocol's
  base is ``ccm.typing_guard.Protocol``, a generic class's ``Generic`` and its
  ``TypeVar``; ``isinstance`` tests use ``collections.abc`` (``Mapping`` ...).
* One exception: ``typing.NamedTuple`` builds a class at run time and has no stand-in; a
  module may import it at run time when it is not on the plain apply path below.

mypy reads the ``if TYPE_CHECKING:`` branch of this module (typing's own classes); the
interpreter the other one: ``Protocol`` is a plain class marked ``_is_protocol`` as typing
marks it (a class that names a protocol as a base to implement it is not marked),
``Generic[T]`` and ``SomeGeneric[X]`` resolve to the class itself and keep their
arguments (``__orig_bases__[i].__args__`` of a subclass, as with typing), ``TypeVar`` is
its name. Not: a checker; nothing here validates a protocol, and ``isinstance`` against
one is not supported.

The budget: what a steady ``ccm apply`` of a plain file manifest imports beyond a bare
``python3 -S``; ``tests/test_architecture.py`` runs one and compares with these lists (a
new import on the path fails it: add the module here, with the reason it must be there).
Such a run of one file costs about 79 M instructions, 85 k more per file (callgrind, the
pyz on ``/usr/bin/python3`` 3.11), about 1.2x the interpreter running a plain loop that
does the same work (``bench/bench_speed.py``, N=1). ``ccm.tmplcache`` is on it for the
names the property renderer and the manager test a template environment against; it
imports nothing that is not on the path already.

ccm modules:
    ccm ccm.apply ccm.apply.batch ccm.apply.engine ccm.apply.manifest ccm.apply.plancache
    ccm.apply.runcache ccm.buildinfo ccm.cache ccm.cli ccm.cli.apply_cmd ccm.cli.fastargs
    ccm.cli.main ccm.cli.setup ccm.clock ccm.data ccm.data.dotenv ccm.digest ccm.fsafe
    ccm.fsafe.paths ccm.fsafe.writes
    ccm.gocompat ccm.gocompat.rfc3339 ccm.interrupt ccm.lazymap ccm.lazyre ccm.locks ccm.log
    ccm.manager ccm.model ccm.model.durations ccm.model.errors ccm.model.events ccm.model.kinds
    ccm.model.manager ccm.model.provider ccm.model.resource ccm.model.run ccm.model.runner ccm.model.value
    ccm.readfile ccm.redact ccm.registry ccm.remote ccm.report ccm.resources ccm.resources.base
    ccm.resources.file ccm.resources.file.logic ccm.resources.file.observation
    ccm.resources.file.posix ccm.resources.file.steady ccm.resources.flowevents
    ccm.resources.ownership ccm.resources.properties ccm.session ccm.tmplcache ccm.typing_guard

standard library modules (a Python may load fewer; ``_sha2`` is 3.12's ``_sha256``):
    __future__ _collections _collections_abc _functools _heapq _operator _sha2 _sha256 _stat
    collections collections.abc contextlib errno fcntl functools genericpath grp heapq
    importlib importlib._bootstrap importlib._bootstrap_external itertools keyword operator
    os os.path posixpath pwd reprlib stat types warnings
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Tuple
    from typing import Generic as Generic, Protocol as Protocol, TypeVar as TypeVar
else:
    class _Alias:
        """``cls[args]``: a base that resolves to ``cls`` and keeps ``args``."""

        __slots__ = ("__origin__", "__args__")

        def __init__(self, origin: type, args: Tuple[Any, ...]) -> None:
            self.__origin__ = origin
            self.__args__ = args

        def __mro_entries__(self, bases: Tuple[Any, ...]) -> Tuple[type, ...]:
            return (self.__origin__,)

        def __repr__(self) -> str:
            names = ", ".join(a.__qualname__ if isinstance(a, type) else repr(a) for a in self.__args__)
            return f"{self.__origin__.__qualname__}[{names}]"

    class Generic:
        """A class generic over type parameters (see the module docstring)."""

        __slots__ = ()

        def __class_getitem__(cls, params: Any) -> _Alias:
            return _Alias(cls, params if isinstance(params, tuple) else (params,))

    class Protocol:
        """A structural interface: subclasses naming ``Protocol`` as a base are protocols."""

        __slots__ = ()
        _is_protocol = True

        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            cls._is_protocol = Protocol in cls.__bases__

    def TypeVar(name: str, *constraints: Any, **options: Any) -> str:  # noqa: N802 - typing's name
        """A type parameter, for ``Generic[...]``: at run time only its name."""
        return name
