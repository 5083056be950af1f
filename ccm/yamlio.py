"""YAML in and out, decoding scalars the way upstream's Go yaml.v3 does.

PyYAML implements YAML 1.1: ``yes``/``on`` are booleans, ``1:30`` is sexagesimal and
dates become ``datetime``. Upstream reads YAML with yaml.v3 into plain values: only
``true``/``false`` are booleans, dates stay strings, and integers parse like Go's
``strconv.ParseInt(s, 0, 64)`` (``0x``/``0o``/``0b`` prefixes, a leading ``0`` is octal).

yaml.v3 decodes an integer-looking scalar into a *string* field as its literal text, so
``mode: 0644`` is the string ``"0644"`` there. Our integers remember their text
(``TextInt``) so string-typed properties get exactly what was written. Uses libyaml when
present. This is the only YAML loader in ccm: manifests, Hiera data, facts files, config
and set files all come through ``load``.

Hostile input is bounded here, before anything walks the value:

* duplicate mapping keys are an error naming the key and both lines (yaml.v3 rejects
  them too; PyYAML silently keeps the last);
* nesting deeper than ``MAX_DEPTH`` is an error, raised by our composer as the collection
  starts (libyaml's C composer recurses and would crash the process with SIGSEGV at
  ~40,000 levels);
* alias expansion ("billion laughs") is counted on the node graph before construction:
  more than ``MAX_ALIAS_NODES`` nodes produced by aliases is an error, found in
  milliseconds because each node is counted once;
* every syntax error is a ``YAMLLoadError`` rendered ``FILE:LINE:COLUMN: message``.

Memory: libyaml's parser feeds a composer of ours (``StreamLoader``) that builds each item
of a plain sequence into Python values as soon as the item is complete, and drops its
nodes, whenever the item has no anchor or alias (nothing can refer back into it). So a
10,000-resource manifest never holds PyYAML's whole node graph (two ``Mark`` objects and
a node per scalar), only the values and the nodes of items that anchors or aliases tie
together. Values and positions are exactly those of composing the whole graph first, and
a document fails exactly when it would have (an item whose early build fails keeps its
error, raised when the document is built; with two or more construction errors the one
reported may differ, as the order of building does).
"""
from __future__ import annotations

import re

import yaml

from ccm.model.errors import CCMError
from ccm.model.textint import TextInt  # made here; ccm.yamlio.TextInt stays its public name
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    Positions = Dict[int, Tuple[int, int]]

MAX_DEPTH = 100
MAX_ALIAS_NODES = 1_000_000


_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
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
        raise YAMLLoadError(f"cannot decode {text!r} as an integer", source=getattr(loader, "source", ""),
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
        raise YAMLLoadError(f"cannot decode {text!r} as a float", source=getattr(loader, "source", ""),
                            line=line, column=col) from None


def _construct_bool(loader: Any, node: Any) -> bool:
    text = str(loader.construct_scalar(node))
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    line, col = _mark(node)
    raise YAMLLoadError(f"cannot decode {text!r} as a boolean", source=getattr(loader, "source", ""),
                        line=line, column=col)


Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"


class _Built(yaml.Node):
    """A sequence item already made into Python values while composing (nodes dropped),
    or the error that building it raised (raised again when the document is built)."""

    id = "built"

    def __init__(self, value: Any, error: Optional[BaseException] = None) -> None:
        super().__init__("", value, None, None)
        self.error = error


class StreamLoader(Loader):
    """``Loader`` with libyaml's parser and our composer, which builds sequence items early.

    An item (a mapping or sequence inside a plain ``!!seq``) is constructed as soon as its
    end event arrives when composing it saw no anchor and no alias (so nothing else refers
    to its nodes) and it is not under a merge key (``<<`` reads nodes); the item's nodes
    are then dropped and a ``_Built`` stands in. Nesting deeper than ``MAX_DEPTH`` is
    refused here, as each collection starts, with the mark of that collection.
    """

    # PyYAML's composer, over libyaml's events when present (CParser composes in C otherwise)
    get_single_node = yaml.composer.Composer.get_single_node
    compose_document = yaml.composer.Composer.compose_document
    compose_scalar_node = yaml.composer.Composer.compose_scalar_node

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.anchors: Dict[str, Any] = {}
        self._refs = 0        # anchors and aliases seen so far
        self._no_build = 0    # > 0 while composing the value of a merge key
        self._depth = 0
        self._alive: List[Any] = []   # with positions: every value built early, until the end

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            self._refs += 1
            if event.anchor not in self.anchors:   # libyaml's composer's words
                raise yaml.composer.ComposerError(None, None, "found undefined alias", event.start_mark)
            return self.anchors[event.anchor]
        event = self.peek_event()
        if event.anchor is not None:
            self._refs += 1
            if event.anchor in self.anchors:
                raise yaml.composer.ComposerError("found duplicate anchor; first occurrence",
                                                  self.anchors[event.anchor].start_mark,
                                                  "second occurrence", event.start_mark)
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if self._depth >= MAX_DEPTH:
                line, col = _mark(event.start_mark)
                raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", source=self.source,
                                    line=line, column=col)
            self._depth += 1
            try:
                return yaml.composer.Composer.compose_node(self, parent, index)
            finally:
                self._depth -= 1
        return yaml.composer.Composer.compose_node(self, parent, index)

    def _start(self, kind: Any, anchor: Any) -> Any:
        """The node of the collection whose start event is next (PyYAML's composer's way)."""
        start_event = self.get_event()
        tag = start_event.tag
        if tag is None or tag == "!":
            tag = self.resolve(kind, None, start_event.implicit)
        node = kind(tag, [], start_event.start_mark, None, flow_style=start_event.flow_style)
        if anchor is not None:
            self.anchors[anchor] = node
        return node

    def compose_sequence_node(self, anchor: Any) -> Any:
        node = self._start(yaml.SequenceNode, anchor)
        build = node.tag == _SEQ and not self._no_build
        index = 0
        while not self.check_event(yaml.SequenceEndEvent):
            refs = self._refs
            item = self.compose_node(node, index)
            if build and refs == self._refs and isinstance(item, (yaml.MappingNode, yaml.SequenceNode)):
                item = self._build(item)
            node.value.append(item)
            index += 1
        node.end_mark = self.get_event().end_mark
        return node

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = self._start(yaml.MappingNode, anchor)
        while not self.check_event(yaml.MappingEndEvent):
            key = self.compose_node(node, None)
            merge = key.tag == _MERGE
            self._no_build += merge
            try:
                value = self.compose_node(node, key)
            finally:
                self._no_build -= merge
            node.value.append((key, value))
        node.end_mark = self.get_event().end_mark
        return node

    def _build(self, node: Any) -> Any:
        try:
            return _Built(self.construct_object(node, deep=True))
        except Exception as exc:   # the constructor may have changed the nodes (merge keys)
            return _Built(None, exc)
        finally:   # nothing outside this item refers to its nodes
            built: Dict[Any, Any] = self.constructed_objects
            if self.positions is not None:   # ids stay unique while the document is built
                self._alive.extend(built.values())
            self.constructed_objects: Dict[Any, Any] = {}
            self.recursive_objects: Dict[Any, Any] = {}
            self.state_generators: List[Any] = []
            self.deep_construct = False

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if type(node) is _Built:
            if node.error is not None:
                raise node.error
            return node.value
        return super().construct_object(node, deep=deep)


def _check_aliases(root: Any, source: str) -> None:
    """Refuse documents whose aliases would expand to more than ``MAX_ALIAS_NODES`` nodes."""
    sizes: Dict[int, int] = {}
    unique = [0]

    def size(node: Any) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        unique[0] += 1
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        sizes[id(node)] = total
        return total

    expanded = size(root)
    if expanded - unique[0] > MAX_ALIAS_NODES:
        raise YAMLLoadError(f"aliases expand to {expanded} nodes, more than the limit of "
                            f"{MAX_ALIAS_NODES}", source=source, line=1, column=1)


def _wrap(exc: yaml.YAMLError, source: str, text: str) -> YAMLLoadError:
    if isinstance(exc, YAMLLoadError):
        return exc
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
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
    context = getattr(exc, "context", None)
    message = f"{problem} ({context})" if context else str(problem)
    line, col = _mark(mark)
    return YAMLLoadError(message, source=source, line=line, column=col)


def load(text: Any, *, source: str = "", positions: Optional[Positions] = None) -> Any:
    """Decode one YAML document; ``YAMLLoadError`` names ``source``, line and column.

    With ``positions`` (a dict), every mapping and sequence built is recorded there as
    ``id(obj) -> (line, column)`` (1-based); see ``line_of``.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YAMLLoadError(f"invalid UTF-8 at byte offset {exc.start}", source=source) from None
    try:
        loader = StreamLoader(text)
        loader.source = source
        loader.positions = positions
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if "*" in text:
                _check_aliases(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _wrap(exc, source, text) from None
    except RecursionError:
        raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", source=source) from None
    except (KeyError, ValueError, TypeError, IndexError, OverflowError) as exc:  # an explicit tag's constructor
        raise YAMLLoadError(f"cannot decode the document: {exc}", source=source) from None


def check_depth(value: Any, source: str = "") -> Any:
    """``value`` (parsed JSON) unless it nests deeper than ``MAX_DEPTH`` (iterative walk)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", source=source)
        todo.extend((child, depth + 1) for child in children)
    return value


def line_of(positions: Positions, obj: Any) -> int:
    """The 1-based line where ``obj`` (a mapping or sequence from ``load``) starts, or 0."""
    return positions.get(id(obj), (0, 0))[0]


_CACHE_PREFIX = "yaml-"
_CACHE_KEEP = 32
_CACHE_MIN_BYTES = 16 * 1024   # below this, parsing is cheaper than the cache round trip


def load_cached(text: str, *, source: str = "") -> Any:
    """``load`` for large documents parsed again and again (manifests on every cron run).

    The parsed value is kept in ccm's private cache (``ccm.cache``) keyed by the sha256 of
    the text, so an unchanged manifest is not re-parsed: PyYAML builds several Python
    objects per node, a pickle load builds only the result. Any cache problem means parsing.
    """
    if len(text) < _CACHE_MIN_BYTES:
        return load(text, source=source)
    import hashlib
    import pickle

    from ccm import cache

    name = _CACHE_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()
    raw = cache.read(name)
    if raw is not None:
        try:
            return pickle.loads(raw)  # noqa: S301 - written by us into our private 0700 cache
        except Exception:
            pass
    value = load(text, source=source)
    try:
        data = pickle.dumps(value, protocol=4)
    except Exception:
        return value
    cache.write(name, data, keep=_CACHE_KEEP, prefix=_CACHE_PREFIX)
    return value


class Dumper(_Dumper):  # type: ignore[misc,valid-type]
    pass


Dumper.add_representer(TextInt, lambda d, v: d.represent_int(int(v)))


def dump(value: Any, *, sort_keys: bool = True) -> str:
    return yaml.dump(value, Dumper=Dumper, sort_keys=sort_keys, default_flow_style=False,
                     allow_unicode=True, width=1 << 16)


YAMLError = yaml.YAMLError
