"""The expression language's syntax tree: what ``ccm.expr.parser`` builds and
``ccm.expr.compiler`` turns into Python."""
from __future__ import annotations
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional, Tuple



class Node:
    __slots__ = ("pos",)
    pos: int


class Literal(Node):
    __slots__ = ("value",)

    def __init__(self, value: Any, pos: int) -> None:
        self.value, self.pos = value, pos


class Ident(Node):
    __slots__ = ("name",)

    def __init__(self, name: str, pos: int) -> None:
        self.name, self.pos = name, pos


class Pointer(Node):
    """``#`` (name ``""``), ``#index`` or ``#acc`` inside closure ``depth``."""
    __slots__ = ("name", "depth")

    def __init__(self, name: str, depth: int, pos: int) -> None:
        self.name, self.depth, self.pos = name, depth, pos


class Member(Node):
    __slots__ = ("obj", "key", "optional")

    def __init__(self, obj: Node, key: Node, optional: bool, pos: int) -> None:
        self.obj, self.key, self.optional, self.pos = obj, key, optional, pos


class Slice(Node):
    __slots__ = ("obj", "lo", "hi", "optional")

    def __init__(self, obj: Node, lo: Optional[Node], hi: Optional[Node], optional: bool, pos: int) -> None:
        self.obj, self.lo, self.hi, self.optional, self.pos = obj, lo, hi, optional, pos


class MethodCall(Node):
    __slots__ = ("obj", "name", "args", "optional")

    def __init__(self, obj: Node, name: str, args: List[Node], optional: bool, pos: int) -> None:
        self.obj, self.name, self.args, self.optional, self.pos = obj, name, args, optional, pos


class Call(Node):
    __slots__ = ("name", "args")

    def __init__(self, name: str, args: List[Node], pos: int) -> None:
        self.name, self.args, self.pos = name, args, pos


class Closure(Node):
    __slots__ = ("body", "depth")

    def __init__(self, body: Node, depth: int, pos: int) -> None:
        self.body, self.depth, self.pos = body, depth, pos


class Unary(Node):
    __slots__ = ("op", "operand")

    def __init__(self, op: str, operand: Node, pos: int) -> None:
        self.op, self.operand, self.pos = op, operand, pos


class Binary(Node):
    __slots__ = ("op", "left", "right", "negate")

    def __init__(self, op: str, left: Node, right: Node, pos: int, negate: bool = False) -> None:
        self.op, self.left, self.right, self.pos, self.negate = op, left, right, pos, negate


class Conditional(Node):
    __slots__ = ("cond", "then", "other")

    def __init__(self, cond: Node, then: Node, other: Node, pos: int) -> None:
        self.cond, self.then, self.other, self.pos = cond, then, other, pos


class Let(Node):
    """``let name = value; body``: ``name`` is ``value`` inside ``body``."""
    __slots__ = ("name", "value", "body")

    def __init__(self, name: str, value: Node, body: Node, pos: int) -> None:
        self.name, self.value, self.body, self.pos = name, value, body, pos


class Sequence(Node):
    """``a; b; c``: each evaluated in turn, the last one's value is the result."""
    __slots__ = ("items",)

    def __init__(self, items: List[Node], pos: int) -> None:
        self.items, self.pos = items, pos


class ArrayLit(Node):
    __slots__ = ("items",)

    def __init__(self, items: List[Node], pos: int) -> None:
        self.items, self.pos = items, pos


class MapLit(Node):
    __slots__ = ("pairs",)

    def __init__(self, pairs: List[Tuple[Node, Node]], pos: int) -> None:
        self.pairs, self.pos = pairs, pos
