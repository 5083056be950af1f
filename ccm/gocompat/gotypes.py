"""Values that carry their Go type, so ``%T``, Sprig's ``typeOf``/``kindOf`` and Go's
argument checks see what upstream's Go values would be.

Plain Python data maps to Go's decoded types (``int``, ``float64``, ``string``, ``bool``,
``[]interface {}``, ``map[string]interface {}``); a function that returns another Go type
returns one of these subclasses (``Int64`` from Sprig's ``add``, ``StringList`` from
``splitList`` ...), or a ``GoValue`` subclass (times, durations, versions). Each behaves
exactly like its Python base. Standard library only.
"""
from __future__ import annotations
from collections.abc import Mapping

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Tuple


__all__ = ["GoValue", "Int64", "StringList", "IntList", "StringMap", "type_name", "kind_name"]


class GoValue:
    """Base of values that know their Go type (``GO_TYPE``) and reflect kind (``GO_KIND``).

    ``json_value()`` is what Go's ``encoding/json`` writes for it (times as RFC 3339
    text, durations as nanoseconds ...); the int, list and map subclasses below are
    encoded as their Python bases and never asked.
    """

    __slots__ = ()
    GO_TYPE = "interface {}"
    GO_KIND = "interface"

    def json_value(self) -> Any:
        raise ValueError(f"json: unsupported type: {self.GO_TYPE}")


class Int64(int, GoValue):
    """A Go ``int64`` (Sprig's integer math returns these)."""

    __slots__ = ()
    GO_TYPE = "int64"
    GO_KIND = "int64"


class StringList(list[str], GoValue):
    """A Go ``[]string``."""

    __slots__ = ()
    GO_TYPE = "[]string"
    GO_KIND = "slice"


class IntList(list[int], GoValue):
    """A Go ``[]int``."""

    __slots__ = ()
    GO_TYPE = "[]int"
    GO_KIND = "slice"


class StringMap(dict[str, str], GoValue):
    """A Go ``map[string]string``."""

    __slots__ = ()
    GO_TYPE = "map[string]string"
    GO_KIND = "map"


# plain Python values and the Go (type, kind) they decode from, in the order they are tried
_PLAIN = ((bool, "bool", "bool"), (int, "int", "int"), (float, "float64", "float64"), (str, "string", "string"),
          ((bytes, bytearray), "[]uint8", "slice"), ((list, tuple), "[]interface {}", "slice"),
          (Mapping, "map[string]interface {}", "map"))


def _go_type(v: Any) -> Tuple[str, str]:
    if isinstance(v, GoValue):
        return v.GO_TYPE, v.GO_KIND
    if v is None:
        return "<nil>", "invalid"
    for cls, go_type, kind in _PLAIN:
        if isinstance(v, cls):
            return go_type, kind
    if callable(v):
        return "func", "func"
    return type(v).__name__, "struct"


def type_name(v: Any) -> str:
    """Go's ``%T`` of a value (``<nil>`` for nil)."""
    return _go_type(v)[0]


def kind_name(v: Any) -> str:
    """``reflect.ValueOf(v).Kind().String()`` (``invalid`` for nil)."""
    return _go_type(v)[1]
