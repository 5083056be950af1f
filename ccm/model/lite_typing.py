"""Run-time stand-ins for ``typing.Protocol`` and ``typing.Generic``.

What: importing ``typing`` (and the ``re``, ``enum`` ... it pulls in) costs a plain
``ccm apply`` several milliseconds per process (issue 16), while type checkers are the only
readers of protocols and type parameters. Modules on that path declare them as::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import Protocol
    else:
        from ccm.model.lite_typing import Protocol

so mypy sees typing's classes and the interpreter these: a ``Protocol`` subclass is a plain
class marked ``_is_protocol`` (as typing marks it; a class that names a protocol as its
base to implement it is not marked), ``Generic[T]`` and ``SomeGeneric[X]`` are aliases that
record their arguments (``__orig_bases__[i].__args__`` of a subclass, as with typing) and
resolve to the class itself.

Not: a checker. Nothing here validates or enforces a protocol (typing's do not either,
without ``runtime_checkable``); ``isinstance`` against a protocol is not supported.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Tuple


class _Alias:
    """``cls[args]``: a base that resolves to ``cls`` and keeps ``args``."""

    __slots__ = ("__origin__", "__args__")

    def __init__(self, origin: type, args: Tuple[Any, ...]) -> None:
        self.__origin__ = origin
        self.__args__ = args

    def __mro_entries__(self, bases: Tuple[Any, ...]) -> Tuple[type, ...]:
        return (self.__origin__,)

    def __repr__(self) -> str:
        names = ", ".join(getattr(a, "__qualname__", None) or repr(a) for a in self.__args__)
        return f"{self.__origin__.__qualname__}[{names}]"


class Generic:
    """A class generic over type parameters (their names: see the module docstring)."""

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
