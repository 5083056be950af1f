"""Parser: tokens to a small AST, with expr-lang operator precedence.

Precedence (low to high): ``|`` pipe 0, ``or ||`` 10, ``and &&`` 15,
comparisons/``in``/``matches``/``contains``/``startsWith``/``endsWith`` 20,
``..`` 25, ``+ -`` 30, ``* / %`` 60, unary ``- +`` 90 (``not !`` 50),
``** ^`` 100 (right-assoc), ``??`` 500; the ternary ``?:`` binds loosest.
Predicate arguments of the collection builtins are parsed as closures where
``#`` is the element and a leading ``.field`` means ``#.field``. Sequences ``a; b`` (the
last value wins), ``let x = v; body`` and ``if c { a } else { b }`` are statements at the
top, inside parentheses and inside braced predicates, as in expr-lang.
"""
from __future__ import annotations

from ccm.expr.errors import ExprError
from ccm.expr.lexer import Token, tokenize
from ccm.expr.nodes import (
    ArrayLit, Binary, Call, Closure, Conditional, Ident, Let, Literal, MapLit, Member, MethodCall, Node, Pointer,
    Sequence, Slice, Unary,
)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

# the node types are re-exported: the compiler and the template scanners read them from here
__all__ = [
    "ArrayLit", "Binary", "Call", "Closure", "Conditional", "Ident", "Let", "Literal", "MapLit", "Member",
    "MethodCall", "Node", "Parser", "Pointer", "Sequence", "Slice", "Unary", "parse",
]

BINARY = {
    "|": (0, False),
    "or": (10, False), "||": (10, False),
    "and": (15, False), "&&": (15, False),
    "==": (20, False), "!=": (20, False), "<": (20, False), ">": (20, False),
    "<=": (20, False), ">=": (20, False), "in": (20, False), "matches": (20, False),
    "contains": (20, False), "startsWith": (20, False), "endsWith": (20, False),
    "..": (25, False),
    "+": (30, False), "-": (30, False),
    "*": (60, False), "/": (60, False), "%": (60, False),
    "**": (100, True), "^": (100, True),
    "??": (500, False),
}
ORDERING = frozenset({"<", ">", "<=", ">="})
NEGATABLE = frozenset({"in", "contains", "matches", "startsWith", "endsWith"})
UNARY = {"not": 50, "!": 50, "-": 90, "+": 90}

# builtin name -> index of the argument that is a predicate (closure)
PREDICATE_ARG = {
    "all": 1, "any": 1, "none": 1, "one": 1, "filter": 1, "map": 1, "count": 1,
    "find": 1, "findIndex": 1, "findLast": 1, "findLastIndex": 1, "sum": 1,
    "groupBy": 1, "sortBy": 1, "reduce": 1,
}


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "end of expression"
    if tok.kind == "str":
        return f"token String({tok.value!r})"
    if tok.kind == "pointer":
        return f"token #{tok.value}"
    return f"token {tok.value!r}"


# operator words that a map literal takes as plain keys ({in: 1})
_WORD_OPERATORS = ("in", "not", "and", "or", "matches", "contains", "startsWith", "endsWith")


class Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.i = 0
        self.depth = 0  # closure nesting, 0 = outside any predicate

    # -- helpers -------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def peek_is(self, op: str) -> bool:
        tok = self.peek()
        return tok.kind == "op" and tok.value == op

    def error(self, message: str, pos: Optional[int] = None) -> ExprError:
        if pos is None:
            pos = self.tok.pos
        return ExprError(message, expr=self.source, column=pos + 1, compile_error=True)

    def unexpected(self) -> ExprError:
        return self.error(f"unexpected {_describe(self.tok)}")

    def is_op(self, value: str) -> bool:
        tok = self.tok
        return tok.kind == "op" and tok.value == value

    def expect(self, value: str) -> Token:
        if not self.is_op(value):
            raise self.unexpected()
        tok = self.tok
        self.i += 1
        return tok

    # -- grammar -------------------------------------------------------
    def parse(self) -> Node:
        if self.tok.kind == "eof":
            raise self.error("unexpected end of expression")
        node = self.sequence()
        if self.tok.kind != "eof":
            raise self.unexpected()
        return node

    def is_word(self, word: str) -> bool:
        tok = self.tok
        return tok.kind == "ident" and tok.value == word

    def sequence(self) -> Node:
        """Expressions separated by ``;`` (a trailing ``;`` at the end is allowed)."""
        pos = self.tok.pos
        items = [self.expression(0)]
        while self.is_op(";"):
            self.i += 1
            if self.tok.kind == "eof":
                break
            items.append(self.expression(0))
        return items[0] if len(items) == 1 else Sequence(items, pos)

    def let(self) -> Node:
        self.i += 1
        name_tok = self.tok
        if name_tok.kind != "ident":
            raise self.unexpected()
        self.i += 1
        self.expect("=")
        value = self.expression(0)
        self.expect(";")
        return Let(name_tok.value, value, self.sequence(), name_tok.pos)

    def if_else(self) -> Node:
        """``if cond { a } else { b }`` (also ``else if``)."""
        pos = self.tok.pos
        self.i += 1
        cond = self.expression(0)
        self.expect("{")
        then = self.sequence()
        self.expect("}")
        if not self.is_word("else"):
            raise self.unexpected()
        self.i += 1
        if self.is_word("if"):
            other = self.if_else()
        else:
            self.expect("{")
            other = self.sequence()
            self.expect("}")
        return Conditional(cond, then, other, pos)

    def expression(self, precedence: int) -> Node:
        if precedence == 0 and self.tok.kind == "ident":
            if self.is_word("let") and self.peek().kind == "ident":
                return self.let()
            if self.is_word("if") and not self.peek_is("("):
                return self.if_else()
        left = self.primary()
        previous = ""
        while self.tok.kind == "op":
            tok = self.tok
            op, negate, width = tok.value, False, 1
            if op == "not":
                nxt = self.peek()
                if not (nxt.kind == "op" and nxt.value in NEGATABLE):
                    raise self.error(f"unexpected {_describe(nxt)}", nxt.pos)
                op, negate, width = nxt.value, True, 2
            info = BINARY.get(op)
            if info is None or info[0] < precedence:
                break
            self.i += width
            if op == "|":
                name_tok = self.tok
                if name_tok.kind != "ident":
                    raise self.unexpected()
                self.i += 1
                left = self.call(name_tok, [left])
                previous = op
                continue
            if previous == "??" and op != "??":
                raise self.error(f"Operator ({op}) and coalesce expressions (??) cannot be mixed. "
                                 "Wrap either by parentheses.", tok.pos)
            prec, right_assoc = info
            if op in ORDERING:
                left = self.comparison(left, tok)
            else:
                right = self.expression(prec if right_assoc else prec + 1)
                left = Binary(op, left, right, tok.pos, negate)
            previous = op
        if precedence == 0:
            left = self.conditional(left)
        return left

    def comparison(self, left: Node, tok: Token) -> Node:
        """``a < b <= c`` means ``a < b && b <= c`` (expr-lang chains orderings)."""
        root: Optional[Node] = None
        while True:
            right = self.expression(BINARY[tok.value][0] + 1)
            node = Binary(tok.value, left, right, tok.pos)
            root = node if root is None else Binary("&&", root, node, tok.pos)
            left = right
            tok = self.tok
            if not (tok.kind == "op" and tok.value in ORDERING):
                return root
            self.i += 1

    def conditional(self, node: Node) -> Node:
        while self.is_op("?"):
            pos = self.tok.pos
            self.i += 1
            if self.is_op(":"):  # elvis: a ?: b
                self.i += 1
                other = self.expression(0)
                node = Binary("?:", node, other, pos)
                continue
            then = self.expression(0)
            self.expect(":")
            other = self.expression(0)
            node = Conditional(node, then, other, pos)
        return node

    def primary(self) -> Node:
        tok = self.tok
        if tok.kind == "op" and tok.value in UNARY:
            self.i += 1
            operand = self.expression(UNARY[tok.value])
            return Unary(tok.value, operand, tok.pos)
        if tok.kind == "op" and tok.value == "(":
            self.i += 1
            node = self.sequence()
            self.expect(")")
            return self.postfix(node)
        return self.postfix(self.secondary())

    def secondary(self) -> Node:
        tok = self.tok
        kind = tok.kind
        if kind == "num" or kind == "str":
            self.i += 1
            return Literal(tok.value, tok.pos)
        if kind == "ident":
            self.i += 1
            name = tok.value
            if self.is_op("("):
                return self.call(tok, [])
            if name == "true":
                return Literal(True, tok.pos)
            if name == "false":
                return Literal(False, tok.pos)
            if name == "nil":
                return Literal(None, tok.pos)
            return Ident(name, tok.pos)
        if kind == "pointer":
            if self.depth == 0:
                raise self.error("cannot use pointer accessor outside predicate")
            if tok.value not in ("", "index", "acc"):
                raise self.error(f"unknown pointer #{tok.value}")
            self.i += 1
            return Pointer(tok.value, self.depth, tok.pos)
        if kind == "op":
            if tok.value == "[":
                return self.array()
            if tok.value == "{":
                return self.map_literal()
            if tok.value == "." and self.depth > 0:
                # ".field" inside a predicate is "#.field"; postfix() consumes the dot
                return Pointer("", self.depth, tok.pos)
        raise self.unexpected()

    def array(self) -> Node:
        start = self.expect("[").pos
        items: List[Node] = []
        while not self.is_op("]"):
            items.append(self.expression(0))
            if not self.is_op("]"):
                self.expect(",")
        self.i += 1
        return ArrayLit(items, start)

    def map_literal(self) -> Node:
        start = self.expect("{").pos
        pairs: List[Tuple[Node, Node]] = []
        while not self.is_op("}"):
            tok = self.tok
            if tok.kind in ("ident", "str", "num") or (tok.kind == "op" and tok.value in _WORD_OPERATORS):
                key: Node = Literal(tok.value, tok.pos)
                self.i += 1
            elif self.is_op("("):
                self.i += 1
                key = self.expression(0)
                self.expect(")")
            else:
                raise self.unexpected()
            self.expect(":")
            pairs.append((key, self.expression(0)))
            if not self.is_op("}"):
                self.expect(",")
        self.i += 1
        return MapLit(pairs, start)

    def call(self, name_tok: Token, args: List[Node]) -> Node:
        self.expect("(")
        name = name_tok.value
        predicate_index = PREDICATE_ARG.get(name)
        while not self.is_op(")"):
            if len(args) == predicate_index:
                args.append(self.predicate())
            else:
                args.append(self.expression(0))
            if not self.is_op(")"):
                self.expect(",")
        self.i += 1
        return Call(name, args, name_tok.pos)

    def predicate(self) -> Node:
        pos = self.tok.pos
        self.depth += 1
        try:
            if self.is_op("{"):
                self.i += 1
                body = self.sequence()
                self.expect("}")
            else:
                body = self.expression(0)
                if self.is_op(";"):
                    raise self.error("wrap predicate with brackets { and }")
            return Closure(body, self.depth, pos)
        finally:
            self.depth -= 1

    def postfix(self, node: Node) -> Node:
        while self.tok.kind == "op":
            tok = self.tok
            if tok.value in (".", "?."):
                optional = tok.value == "?."
                self.i += 1
                if optional and self.is_op("["):
                    node = self.index(node, optional=True)
                    continue
                name_tok = self.tok
                if name_tok.kind not in ("ident", "op") or (name_tok.kind == "op" and not name_tok.value.isalpha()):
                    raise self.unexpected()
                self.i += 1
                if self.is_op("("):
                    self.i += 1
                    args: List[Node] = []
                    while not self.is_op(")"):
                        args.append(self.expression(0))
                        if not self.is_op(")"):
                            self.expect(",")
                    self.i += 1
                    node = MethodCall(node, name_tok.value, args, optional, name_tok.pos)
                else:
                    node = Member(node, Literal(name_tok.value, name_tok.pos), optional, name_tok.pos)
            elif tok.value == "[":
                node = self.index(node, optional=False)
            else:
                break
        return node

    def index(self, node: Node, optional: bool) -> Node:
        pos = self.expect("[").pos
        if self.is_op(":"):
            self.i += 1
            hi = None if self.is_op("]") else self.expression(0)
            self.expect("]")
            return Slice(node, None, hi, optional, pos)
        key = self.expression(0)
        if self.is_op(":"):
            self.i += 1
            hi = None if self.is_op("]") else self.expression(0)
            self.expect("]")
            return Slice(node, key, hi, optional, pos)
        self.expect("]")
        return Member(node, key, optional, pos)


def parse(source: str) -> Node:
    """Parse ``source`` into an AST; raises a compile ``ExprError``."""
    return Parser(source).parse()
