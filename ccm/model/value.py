"""Value classes without ``@dataclass``: equality and repr by a declared field tuple.

What: ``ValueObject`` gives a plain class what ``@dataclass(eq=True)`` generated for it
(``__eq__`` over the fields in ``_value_fields``, ``__repr__`` over those or
``_repr_fields``, in order, and no hash), so the classes a plain ``ccm apply`` builds at import time skip dataclasses'
class construction (issue 16). Each class still writes its own typed ``__init__``.

``FrozenValueObject`` adds what ``frozen=True`` gave: no assignment after ``__init__`` (which
sets its fields with ``object.__setattr__``), a hash over the fields, and copy/pickle
through ``__init__``.

Not: a dataclass replacement in general (no ordering, no ``replace``, no fields()).
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, ClassVar, Optional, Tuple


class ValueObject:
    __slots__ = ()
    _value_fields: ClassVar[Tuple[str, ...]] = ()
    _repr_fields: ClassVar[Optional[Tuple[str, ...]]] = None   # when repr shows fewer

    __hash__ = None  # type: ignore[assignment]  # compared by value, as the dataclasses were

    def _values(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._value_fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._repr_fields or self._value_fields)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, ValueObject)
        return self._values() == other._values()


class FrozenValueObject(ValueObject):
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:   # copy and pickle through __init__
        return (self.__class__, self._values())

    def __hash__(self) -> int:  # type: ignore[override]  # frozen: hashable, unlike ValueObject
        return hash(self._values())
