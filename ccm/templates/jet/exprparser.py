"""Jet expression parsing: one action's tokens -> an expression tree (operators, calls, pipes)."""
from __future__ import annotations


from ccm.templates.jet.lexer import _FIELD, _IDENT, _NUM, _OP, _STR, _Src, _Tok
from ccm.templates.jet.nodes import (
    _Binary,
    _Call,
    _Chain,
    _Ctx,
    _CtxField,
    _Hole,
    _Ident,
    _Index,
    _Lit,
    _Node,
    _Pipe,
    _Slice,
    _Ternary,
    _Unary,
)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

_KEYWORDS = {"if", "else", "end", "range", "try", "catch", "include", "block", "yield",
             "return", "import", "extends", "content"}


class _ExprParser:
    def __init__(self, src: _Src, toks: List[_Tok], end_pos: int):
        self.src, self.toks, self.i, self.end_pos = src, toks, 0, end_pos

    # token helpers
    def peek(self, k: int = 0) -> Optional[_Tok]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise self.src.parse_error("unexpected end of action", self.end_pos)
        self.i += 1
        return t

    def at_op(self, op: str) -> bool:
        t = self.peek()
        return t is not None and t.is_op(op)

    def expect_op(self, op: str, context: str) -> _Tok:
        t = self.peek()
        if t is None or not t.is_op(op):
            self.unexpected(t, context, f"'{op}'")
        return self.next()

    def unexpected(self, t: Optional[_Tok], context: str, expected: str) -> None:
        if t is None:
            raise self.src.parse_error(f"parsing {context}: unexpected end of action (expected {expected})",
                                       self.end_pos)
        raise self.src.parse_error(f"parsing {context}: unexpected token '{t.val}' (expected {expected})", t.pos)

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def expect_done(self, context: str) -> None:
        if not self.done():
            t = self.peek()
            assert t is not None
            raise self.src.parse_error(f"parsing {context}: unexpected token '{t.val}' (expected end of action)",
                                       t.pos)

    # grammar
    def pipeline(self) -> _Node:
        t0 = self.peek()
        pos = t0.pos if t0 else self.end_pos
        first = self.expression()
        if self.at_op(":"):
            self.next()
            first = _Call(first, self.arg_list(), pos)
        cmds: List[Tuple[_Node, Optional[List[_Node]], int]] = []
        while self.at_op("|"):
            bar = self.next()
            callee = self.postfix(allow_call=False)
            args: Optional[List[_Node]] = None
            if self.at_op("("):
                self.next()
                args = self.call_args()
            elif self.at_op(":"):
                self.next()
                args = self.arg_list()
            cmds.append((callee, args, bar.pos))
        return _Pipe(first, cmds, pos) if cmds else first

    def arg_list(self) -> List[_Node]:
        args = [self.argument()]
        while self.at_op(","):
            self.next()
            args.append(self.argument())
        return args

    def call_args(self) -> List[_Node]:
        args: List[_Node] = []
        if self.at_op(")"):
            self.next()
            return args
        while True:
            args.append(self.argument())
            if self.at_op(","):
                self.next()
                continue
            self.expect_op(")", "call expression")
            return args

    def argument(self) -> _Node:
        t = self.peek()
        if t is not None and t.is_ident("_"):
            nxt = self.peek(1)
            if nxt is None or (nxt.kind == _OP and nxt.val in (",", ")", "|")):
                self.next()
                return _Hole(t.pos)
        return self.expression()

    def expression(self) -> _Node:
        cond = self.logical_or()
        if self.at_op("?"):
            q = self.next()
            yes = self.expression()
            self.expect_op(":", "ternary expression")
            no = self.expression()
            return _Ternary(cond, yes, no, q.pos)
        return cond

    def logical_or(self) -> _Node:
        left = self.logical_and()
        while self.at_op("||"):
            t = self.next()
            left = _Binary("||", left, self.logical_and(), t.pos)
        return left

    def logical_and(self) -> _Node:
        left = self.comparison()
        while self.at_op("&&"):
            t = self.next()
            left = _Binary("&&", left, self.comparison(), t.pos)
        return left

    def comparison(self) -> _Node:
        left = self.additive()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("==", "!=", "<", ">", "<=", ">="):
                self.next()
                left = _Binary(t.val, left, self.additive(), t.pos)
            else:
                return left

    def additive(self) -> _Node:
        left = self.multiplicative()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("+", "-"):
                self.next()
                left = _Binary(t.val, left, self.multiplicative(), t.pos)
            else:
                return left

    def multiplicative(self) -> _Node:
        left = self.unary()
        while True:
            t = self.peek()
            if t is not None and t.kind == _OP and t.val in ("*", "/", "%"):
                self.next()
                left = _Binary(t.val, left, self.unary(), t.pos)
            else:
                return left

    def unary(self) -> _Node:
        t = self.peek()
        if t is not None and t.kind == _OP and t.val in ("!", "-", "+"):
            self.next()
            return _Unary(t.val, self.unary(), t.pos)
        return self.postfix()

    def postfix(self, allow_call: bool = True) -> _Node:
        node = self.primary()
        while True:
            t = self.peek()
            if t is None:
                return node
            if t.kind == _FIELD:
                names = []
                while True:
                    t = self.peek()
                    if t is None or t.kind != _FIELD:
                        break
                    names.append(self.next().val)
                if isinstance(node, _CtxField):
                    node = _CtxField(node.names + names, node.pos)
                elif isinstance(node, _Chain):
                    node = _Chain(node.base, node.names + names, node.pos)
                else:
                    node = _Chain(node, names, node.pos)
            elif t.is_op("["):
                self.next()
                lo: Optional[_Node] = None
                if not self.at_op(":"):
                    lo = self.expression()
                if self.at_op(":"):
                    self.next()
                    hi = None if self.at_op("]") else self.expression()
                    self.expect_op("]", "slice expression")
                    node = _Slice(node, lo, hi, t.pos)
                else:
                    self.expect_op("]", "index expression")
                    assert lo is not None
                    node = _Index(node, lo, t.pos)
            elif t.is_op("(") and allow_call:
                self.next()
                node = _Call(node, self.call_args(), node.pos)
            else:
                return node

    def primary(self) -> _Node:
        t = self.next()
        if t.kind == _NUM or t.kind == _STR:
            return _Lit(t.val, t.pos)
        if t.kind == _FIELD:
            return _CtxField([t.val], t.pos)
        if t.kind == _IDENT:
            if t.val == "true":
                return _Lit(True, t.pos)
            if t.val == "false":
                return _Lit(False, t.pos)
            if t.val == "nil":
                return _Lit(None, t.pos)
            if t.val in _KEYWORDS:
                raise self.src.parse_error(f"unexpected keyword '{t.val}'", t.pos)
            return _Ident(t.val, t.pos)
        if t.is_op("."):
            return _Ctx(t.pos)
        if t.is_op("("):
            inner = self.expression()
            self.expect_op(")", "parenthesized expression")
            return inner
        self.unexpected(t, "expression", "operand")
        raise AssertionError("unreachable")
