"""Decoding like Go's yaml.v3: ``Loader`` (duplicate keys refused, positions recorded),
the scalar constructors (``parse_go_int``; only ``true``/``false`` are booleans, dates stay
text, integers keep their text as ``TextInt``), ``YAMLLoadError`` and the bounds.

See ``ccm.yamlio`` for the guarantees; callers import from there.
"""
from __future__ import annotations

import re

import yaml

from ccm.model.errors import CCMError
from ccm.model.textint import TextInt
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

    Positions = Dict[int, Tuple[int, int]]


MAX_DEPTH = 100
MAX_ALIAS_NODES = 1_000_000


# libyaml's C parser and emitter when PyYAML was built with them (its declared flag)
_Base = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
_Dumper = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper


class YAMLLoadError(CCMError, yaml.YAMLError):
    """A YAML document was rejected: syntax, duplicate key, depth or alias bound."""

    def __init__(self, message: str, *, source: str = "", line: int = 0, column: int = 0):
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.line:
            return f"{self.source}: {self.message}" if self.source else self.message
        where = f"{self.source}:{self.line}:{self.column}" if self.source else \
            f"line {self.line} column {self.column}"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self._render()


def _mark(node_or_mark: Any) -> Tuple[int, int]:
    mark = node_or_mark.start_mark if isinstance(node_or_mark, yaml.Node) else node_or_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


class Loader(_Base):  # type: ignore[misc,valid-type]
    source = ""
    positions: Optional[Positions] = None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: Dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    continue  # reported by the constructor ("unhashable key")
                first = seen.get(key)
                if first is not None:
                    line, col = _mark(key_node)
                    raise YAMLLoadError(f"duplicate key \"{key}\" (first defined on line {_mark(first)[0]})",
                                        source=self.source, line=line, column=col)
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        obj = super().construct_object(node, deep=deep)
        if self.positions is not None and isinstance(obj, (dict, list)):
            self.positions.setdefault(id(obj), _mark(node))
        return obj


_DROP = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
         "tag:yaml.org,2002:timestamp"}
Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                             re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:int",
                             re.compile(r"^[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$"),
                             list("-+0123456789"))
Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def parse_go_int(text: str) -> int:
    """Go ``strconv.ParseInt(text, 0, 64)`` (a leading 0 means octal; ``_`` allowed)."""
    s = text.replace("_", "")
    sign = 1
    if s[:1] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if len(s) > 1 and s[0] == "0" and (s[1].isascii() and s[1].isdigit()):
        try:
            return sign * int(s, 8)
        except ValueError:
            return sign * int(s, 10)
    return sign * int(s, 0)


def _construct_int(loader: Any, node: Any) -> Any:
    text = str(loader.construct_scalar(node))
    if len(text) > 80:   # beyond int64/uint64 (and Python's digit limit): yaml.v3 keeps the text
        return text
    try:
        value = parse_go_int(text)
    except (ValueError, IndexError):   # only reachable through an explicit !!int tag
        line, col = _mark(node)
        raise YAMLLoadError(f"cannot decode {text!r} as an integer", source=loader.source,
                            line=line, column=col) from None
    if not -(1 << 63) <= value < (1 << 64):
        return text
    return TextInt(value, text)


def _construct_float(loader: Any, node: Any) -> float:
    text = str(loader.construct_scalar(node)).replace("_", "").lower()
    if text.endswith("inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text.endswith("nan"):
        return float("nan")
    try:
        return float(text)
    except ValueError:   # only reachable through an explicit !!float tag
        line, col = _mark(node)
        raise YAMLLoadError(f"cannot decode {text!r} as a float", source=loader.source,
                            line=line, column=col) from None


def _construct_bool(loader: Any, node: Any) -> bool:
    text = str(loader.construct_scalar(node))
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    line, col = _mark(node)
    raise YAMLLoadError(f"cannot decode {text!r} as a boolean", source=loader.source,
                        line=line, column=col)


Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _wrap(exc: yaml.YAMLError, source: str, text: str) -> YAMLLoadError:
    if isinstance(exc, YAMLLoadError):
        return exc
    mark: Any = None
    problem: Any = None
    context: Any = None
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem, context = exc.problem, exc.context
    if isinstance(exc, yaml.reader.ReaderError):
        pos = exc.position
        before = text[:pos] if isinstance(text, str) else ""
        line = before.count("\n") + 1
        col = pos - (before.rfind("\n") + 1) + 1
        char = exc.character
        code = f"#x{ord(char):04x}" if isinstance(char, str) else f"#x{char:02x}"
        return YAMLLoadError(f"unacceptable character {code}: special characters are not allowed",
                             source=source, line=line, column=col)
    if problem is None:
        return YAMLLoadError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, source=source)
    message = f"{problem} ({context})" if context else str(problem)
    line, col = _mark(mark)
    return YAMLLoadError(message, source=source, line=line, column=col)
