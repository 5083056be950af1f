"""Jet parsing: token lists -> expression and statement trees."""
from __future__ import annotations


from ccm.templates.jet.lexer import _FIELD, _IDENT, _NUM, _OP, _STR, _Src, _Tok
from ccm.templates.jet.nodes import (
    _Assign,
    _Binary,
    _Block,
    _Call,
    _Chain,
    _Ctx,
    _CtxField,
    _Hole,
    _Ident,
    _If,
    _Include,
    _Index,
    _Lit,
    _Node,
    _Output,
    _Pipe,
    _Range,
    _Slice,
    _Ternary,
    _Text,
    _Try,
    _Unary,
    _Yield,
)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

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


class _Parser:
    """Turns lexed items into a statement tree."""

    def __init__(self, src: _Src, items: List[Tuple[str, Any, int]]):
        self.src = src
        self.items = items
        self.i = 0
        self.blocks: Dict[str, _Block] = {}

    def parse(self) -> list:
        body, stop = self.parse_list(())
        if stop is not None:
            kw, _, pos = stop
            raise self.src.parse_error(f"unexpected '{kw}'", pos)
        return body

    def parse_list(self, stops: Sequence[str]) -> Tuple[list, Optional[Tuple[str, _ExprParser, int]]]:
        """Statements until an action starting with a keyword in ``stops``."""
        out: list = []
        while self.i < len(self.items):
            kind, val, pos = self.items[self.i]
            self.i += 1
            if kind == "text":
                out.append(_Text(val))
                continue
            toks: List[_Tok] = val[0]
            if not toks:
                raise self.src.parse_error("missing value for command", pos)
            p = _ExprParser(self.src, toks, val[1])
            head = toks[0]
            kw = head.val if head.kind == _IDENT and head.val in _KEYWORDS else None
            if kw in ("end", "else", "catch"):
                p.next()
                if kw not in stops:
                    raise self.src.parse_error(f"unexpected '{kw}'", head.pos)
                return out, (kw, p, head.pos)
            if kw is None:
                out.append(self.simple(p))
                continue
            p.next()
            if kw == "if":
                out.append(self.parse_if(p, head.pos))
            elif kw == "range":
                out.append(self.parse_range(p, head.pos))
            elif kw == "try":
                out.append(self.parse_try(p, head.pos))
            elif kw == "include":
                name = p.expression()
                ctx = None if p.done() else p.expression()
                p.expect_done("include")
                out.append(_Include(name, ctx, head.pos))
            elif kw == "block":
                out.append(self.parse_block(p, head.pos))
            elif kw == "yield":
                out.append(self.parse_yield(p, head.pos))
            elif kw == "return":
                p.pipeline()  # only meaningful for exec(); evaluated for errors, not output
            else:
                raise self.src.parse_error(f"'{kw}' is not supported", head.pos)
        if stops:
            raise self.src.parse_error(f"unexpected EOF (missing '{stops[0]}')", len(self.src.text))
        return out, None

    def simple(self, p: _ExprParser) -> Any:
        assign = self.maybe_assign(p, "assignment")
        if assign is not None:
            p.expect_done("assignment")
            return assign
        expr = p.pipeline()
        p.expect_done("action")
        return _Output(expr)

    def maybe_assign(self, p: _ExprParser, context: str) -> Optional[_Assign]:
        """Parse ``a, b := x, y`` / ``a = x`` if the action is an assignment."""
        depth = 0
        has = False
        for t in p.toks[p.i:]:
            if t.kind == _OP and t.val in ("(", "["):
                depth += 1
            elif t.kind == _OP and t.val in (")", "]"):
                depth -= 1
            elif depth == 0 and t.kind == _OP and t.val in (":=", "="):
                has = True
                break
            elif depth == 0 and t.kind == _OP and t.val in (";", "|", "?"):
                break
        if not has:
            return None
        start = p.peek()
        assert start is not None
        targets = [p.postfix(allow_call=False)]
        while p.at_op(","):
            p.next()
            targets.append(p.postfix(allow_call=False))
        op = p.next()
        let = op.val == ":="
        for target in targets:
            if let and not isinstance(target, _Ident):
                raise self.src.parse_error("unexpected node type in variable declaration", target.pos)
            if not isinstance(target, (_Ident, _Chain, _CtxField)):
                raise self.src.parse_error("unexpected node in assign", target.pos)
        values = [p.expression()]
        while p.at_op(","):
            p.next()
            values.append(p.expression())
        comma_ok = len(targets) == 2 and len(values) == 1 and isinstance(values[0], _Index)
        if not comma_ok and len(targets) != len(values):
            raise self.src.parse_error(f"parsing {context}: unexpected number of operands", op.pos)
        return _Assign(targets, values, let, comma_ok, start.pos)

    def parse_if(self, p: _ExprParser, pos: int) -> _If:
        setup = None
        if any(t.is_op(";") for t in p.toks):
            setup = self.maybe_assign(p, "if")
            p.expect_op(";", "if")
        cond = p.expression()
        p.expect_done("if")
        body, stop = self.parse_list(("end", "else"))
        assert stop is not None
        kw, sp, spos = stop
        orelse: Optional[list] = None
        if kw == "else":
            if not sp.done() and sp.peek().is_ident("if"):  # type: ignore[union-attr]
                sp.next()
                orelse = [self.parse_if(sp, spos)]
            else:
                sp.expect_done("else")
                orelse, stop2 = self.parse_list(("end",))
                assert stop2 is not None
                stop2[1].expect_done("end")
        else:
            sp.expect_done("end")
        return _If(cond, body, orelse, pos, setup)

    def parse_range(self, p: _ExprParser, pos: int) -> _Range:
        names: List[_Node] = []
        let = True
        if any(t.kind == _OP and t.val in (":=", "=") for t in p.toks):
            names.append(p.postfix(allow_call=False))
            if p.at_op(","):
                p.next()
                names.append(p.postfix(allow_call=False))
            op = p.next()
            if not (op.is_op(":=") or op.is_op("=")):
                p.unexpected(op, "range", "':=' or '='")
            let = op.val == ":="
            for n in names:
                if not isinstance(n, (_Ident, _Chain, _CtxField)) or (let and not isinstance(n, _Ident)):
                    raise self.src.parse_error("unexpected node type in range assignment", n.pos)
        expr = p.expression()
        p.expect_done("range")
        body, stop = self.parse_list(("end", "else"))
        assert stop is not None
        orelse: Optional[list] = None
        if stop[0] == "else":
            stop[1].expect_done("else")
            orelse, stop2 = self.parse_list(("end",))
            assert stop2 is not None
            stop2[1].expect_done("end")
        else:
            stop[1].expect_done("end")
        return _Range(names, let, expr, body, orelse, pos)

    def parse_try(self, p: _ExprParser, pos: int) -> _Try:
        p.expect_done("try")
        body, stop = self.parse_list(("end", "catch"))
        assert stop is not None
        err_name = None
        catch: Optional[list] = None
        if stop[0] == "catch":
            sp = stop[1]
            if not sp.done():
                t = sp.next()
                if t.kind != _IDENT:
                    sp.unexpected(t, "catch", "identifier")
                err_name = t.val
            sp.expect_done("catch")
            catch, stop2 = self.parse_list(("end",))
            assert stop2 is not None
            stop2[1].expect_done("end")
        else:
            stop[1].expect_done("end")
        return _Try(body, err_name, catch)

    def parse_block(self, p: _ExprParser, pos: int) -> _Block:
        t = p.next()
        if t.kind != _IDENT:
            p.unexpected(t, "block", "block name")
        params: List[Tuple[str, Optional[_Node]]] = []
        p.expect_op("(", "block")
        while not p.at_op(")"):
            n = p.next()
            if n.kind != _IDENT:
                p.unexpected(n, "block parameters", "identifier")
            default = None
            if p.at_op("="):
                p.next()
                default = p.expression()
            params.append((n.val, default))
            if not p.at_op(")"):
                p.expect_op(",", "block parameters")
        p.next()
        ctx = None if p.done() else p.expression()
        p.expect_done("block")
        body, stop = self.parse_list(("end",))
        assert stop is not None
        stop[1].expect_done("end")
        block = _Block(t.val, params, ctx, body, pos, invoke=True)
        if t.val in self.blocks:
            raise self.src.parse_error(f"block {t.val!r} is already defined", t.pos)
        self.blocks[t.val] = block
        return block

    def parse_yield(self, p: _ExprParser, pos: int) -> _Yield:
        t = p.next()
        if t.kind != _IDENT:
            p.unexpected(t, "yield", "block name")
        args: List[Tuple[Optional[str], _Node]] = []
        p.expect_op("(", "yield")
        while not p.at_op(")"):
            a = p.peek()
            b = p.peek(1)
            name = None
            if a is not None and a.kind == _IDENT and b is not None and b.is_op("="):
                p.next()
                p.next()
                name = a.val
            args.append((name, p.expression()))
            if not p.at_op(")"):
                p.expect_op(",", "yield arguments")
        p.next()
        ctx = None if p.done() else p.expression()
        p.expect_done("yield")
        return _Yield(t.val, args, ctx, pos)
