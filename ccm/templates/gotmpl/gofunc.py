"""Go functions with typed parameters, as text/template calls them (Sprig's functions).

A ``GoFunc`` declares its Go parameter types in a short spec (``"is"`` is
``func(int, string)``, ``"s*a"`` is ``func(string, ...interface{})``). Before the call the
executor converts each argument as text/template does: a literal must suit the parameter
(``expected integer; found "x"``), a run-time value must have the parameter's Go type
(``wrong type for value; expected string; got int``), a missing value only suits a
parameter that can be nil (``invalid value; expected string``).

``Row`` is one line of the Sprig table: a name, its implementation, its spec, the name of
its ``must`` variant and what the plain variant returns instead of failing (Sprig's plain
functions swallow some errors: ``toJson`` gives ``""``, ``regexMatch`` gives false).
"""
from __future__ import annotations


from ccm.gocompat.gotypes import GoValue, StringMap, type_name
from ccm.gocompat.time import GoTime
from ccm.templates.gotmpl.values import MISSING, FuncError
from typing import NamedTuple
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

# spec letter -> Go type name
TYPES = {"s": "string", "i": "int", "u": "uint32", "f": "float64", "b": "bool", "a": "interface {}",
         "m": "map[string]interface {}", "t": "time.Time", "l": "[]interface {}"}
_NILABLE = frozenset("aml")
_LITERAL_KINDS = ("string", "number", "bool", "nil")


class ArgError(Exception):
    """An argument does not suit its parameter; ``index`` is its position."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


class GoFunc:
    """A callable with Go parameter types; ``convert`` checks and converts arguments."""

    __slots__ = ("name", "fn", "params", "variadic", "lenient")

    def __init__(self, name: str, fn: Callable[..., Any], spec: str,
                 lenient: Optional[Callable[[FuncError, Tuple[Any, ...]], Any]] = None) -> None:
        self.name = name
        self.fn = fn
        self.variadic = spec[spec.index("*") + 1] if "*" in spec else ""
        self.params = spec.split("*")[0]
        self.lenient = lenient

    def arity_error(self, count: int) -> Optional[str]:
        want = len(self.params)
        if self.variadic:
            return None if count >= want else f"want at least {want} got {count}"
        return None if count == want else f"want {want} got {count}"

    def convert(self, values: List[Any], literals: List[Optional[Tuple[str, str]]]) -> List[Any]:
        """The arguments as the Go function receives them; raises ``ArgError``."""
        out = []
        for i, value in enumerate(values):
            code = self.params[i] if i < len(self.params) else self.variadic
            lit = literals[i] if i < len(literals) else None
            try:
                out.append(_literal(code, value, lit) if lit is not None else _runtime(code, value))
            except FuncError as err:
                raise ArgError(str(err), i) from None
        return out

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except FuncError as err:
            if self.lenient is None:
                raise
            return self.lenient(err, args)

    def __repr__(self) -> str:
        return f"GoFunc({self.name})"


def literal_of(kind: str, val: Any, text: str) -> Optional[Tuple[str, str]]:
    """What ``convert`` needs to know about a literal operand (None for other operands)."""
    return (kind, text) if kind in _LITERAL_KINDS else None


def _literal(code: str, value: Any, lit: Tuple[str, str]) -> Any:
    kind, text = lit
    if kind == "nil":
        if code in _NILABLE:
            return {} if code == "m" else None
        raise FuncError(f"cannot assign nil to {TYPES[code]}")
    if code == "a":
        return value
    if code == "s":
        if kind == "string":
            return value
        raise FuncError(f"expected string; found {text}")
    if code in "iu":
        if kind == "number" and (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            if code == "u" and not 0 <= value < 1 << 32:
                raise FuncError(f"{text} overflows uint32")
            return int(value)
        raise FuncError(f"expected {'unsigned ' if code == 'u' else ''}integer; found {text}")
    if code == "f":
        if kind == "number":
            return float(value)
        raise FuncError(f"expected float; found {text}")
    if code == "b":
        if kind == "bool":
            return value
        raise FuncError(f"expected bool; found {text}")
    raise FuncError(f"can't handle {text} for arg of type {TYPES[code]}")


def _runtime(code: str, value: Any) -> Any:
    if value is MISSING or value is None:
        if code == "a":
            return None
        if code in _NILABLE:
            return {} if code == "m" else None
        raise FuncError(f"invalid value; expected {TYPES[code]}")
    if code == "a":
        return value
    # a Go int is any Python int but a bool or another Go integer type (int64, time.Month);
    # YAML's integers arrive as int subclasses that remember their text
    plain_int = isinstance(value, int) and not isinstance(value, (bool, GoValue))
    ok = {
        "s": isinstance(value, str),
        "i": plain_int,
        "u": plain_int and 0 <= value < 1 << 32,
        "f": isinstance(value, float) and not isinstance(value, GoValue),
        "b": isinstance(value, bool),
        "m": isinstance(value, dict) and not isinstance(value, StringMap),
        "t": isinstance(value, GoTime),
        "l": isinstance(value, list) and not isinstance(value, GoValue),
    }[code]
    if not ok:
        raise FuncError(f"wrong type for value; expected {TYPES[code]}; got {type_name(value)}")
    return value


class Row(NamedTuple):
    """One function of the Sprig table."""
    name: str
    fn: Callable[..., Any]
    spec: str
    must: Optional[str] = None
    lenient: Optional[Callable[[FuncError, Tuple[Any, ...]], Any]] = None
    aliases: Tuple[str, ...] = ()


def returns(value: Any) -> Callable[[FuncError, Tuple[Any, ...]], Any]:
    """A ``lenient`` handler: the plain variant returns ``value`` instead of failing."""
    return lambda err, args: value


def table(rows: Iterable[Row]) -> Dict[str, GoFunc]:
    """Name -> GoFunc for every row, its aliases and its ``must`` variant."""
    out: Dict[str, GoFunc] = {}
    for r in rows:
        for name in (r.name,) + r.aliases:
            out[name] = GoFunc(name, r.fn, r.spec, r.lenient)
        if r.must:
            out[r.must] = GoFunc(r.must, r.fn, r.spec)
    return out


def refused(name: str, reason: str) -> Row:
    """A Sprig function ccm does not offer: calling it fails with a message naming it."""
    def fn(*args: Any) -> Any:
        raise FuncError(f"{name} is not supported by ccm: {reason}")
    return Row(name, fn, "*a")
