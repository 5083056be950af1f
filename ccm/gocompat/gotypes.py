"""Values that carry their Go type, so ``%T``, Sprig's ``typeOf``/``kindOf`` and Go's
argument checks see what upstream's Go values would be.

Plain Python data maps to Go's decoded types (``int``, ``float64``, ``string``, ``bool``,
``[]interface {}``, ``map[string]interface {}``); a function that returns another Go type
returns one of these subclasses (``Int64`` from Sprig's ``add``, ``StringList`` from
``splitList`` ...), or a ``GoValue`` subclass (times, durations, versions). Each behaves
exactly like its Python base. Standard library only.
"""
from __future__ import annotations

from typing import Any

__all__ = ["GoValue", "Int64", "StringList", "IntList", "StringMap", "type_name", "kind_name"]


class GoValue:
    """Base of values that know their Go type (``GO_TYPE``) and reflect kind (``GO_KIND``)."""

    __slots__ = ()
    GO_TYPE = "interface {}"
    GO_KIND = "interface"


class Int64(int, GoValue):
    """A Go ``int64`` (Sprig's integer math returns these)."""

    __slots__ = ()
    GO_TYPE = "int64"
    GO_KIND = "int64"


class StringList(list, GoValue):
    """A Go ``[]string``."""

    __slots__ = ()
    GO_TYPE = "[]string"
    GO_KIND = "slice"


class IntList(list, GoValue):
    """A Go ``[]int``."""

    __slots__ = ()
    GO_TYPE = "[]int"
    GO_KIND = "slice"


class StringMap(dict, GoValue):
    """A Go ``map[string]string``."""

    __slots__ = ()
    GO_TYPE = "map[string]string"
    GO_KIND = "map"


def type_name(v: Any) -> str:
    """Go's ``%T`` of a value (``<nil>`` for nil)."""
    if isinstance(v, GoValue):
        return v.GO_TYPE
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (bytes, bytearray)):
        return "[]uint8"
    if isinstance(v, (list, tuple)):
        return "[]interface {}"
    if isinstance(v, dict):
        return "map[string]interface {}"
    if callable(v):
        return "func"
    return type(v).__name__


def kind_name(v: Any) -> str:
    """``reflect.ValueOf(v).Kind().String()`` (``invalid`` for nil)."""
    if isinstance(v, GoValue):
        return v.GO_KIND
    if v is None:
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple, bytes, bytearray)):
        return "slice"
    if isinstance(v, dict):
        return "map"
    if callable(v):
        return "func"
    return "struct"
