"""The streaming composer of ``ccm.yamlio``: ``StreamLoader`` builds each plain sequence
item into values as soon as it is complete and refuses nesting past ``MAX_DEPTH``;
``check_aliases`` bounds what aliases expand to, on the node graph, before construction.

See ``ccm.yamlio`` for the guarantees; callers import from there.
"""
from __future__ import annotations

import yaml

from ccm.yamlio.decode import MAX_ALIAS_NODES, MAX_DEPTH, Loader, YAMLLoadError, _mark
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    Positions = Dict[int, Tuple[int, int]]


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
