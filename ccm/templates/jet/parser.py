"""Jet parsing: lexed items -> statement trees (if, range, try, block, yield, assignments);
the expressions inside the actions are parsed by ``exprparser``."""
from __future__ import annotations


from ccm.templates.jet.exprparser import _KEYWORDS, _ExprParser
from ccm.templates.jet.lexer import _IDENT, _OP, _Src, _Tok
from ccm.templates.jet.nodes import (
    _Assign,
    _Block,
    _Chain,
    _CtxField,
    _Ident,
    _If,
    _Include,
    _Index,
    _Node,
    _Output,
    _Range,
    _Text,
    _Try,
    _Yield,
)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple


class _Parser:
    """Turns lexed items into a statement tree."""

    def __init__(self, src: _Src, items: List[Tuple[str, Any, int]]):
        self.src = src
        self.items = items
        self.i = 0
        self.blocks: Dict[str, _Block] = {}

    def parse(self) -> List[Any]:
        body, stop = self.parse_list(())
        if stop is not None:
            kw, _, pos = stop
            raise self.src.parse_error(f"unexpected '{kw}'", pos)
        return body

    def parse_list(self, stops: Sequence[str]) -> Tuple[List[Any], Optional[Tuple[str, _ExprParser, int]]]:
        """Statements until an action starting with a keyword in ``stops``."""
        out: List[Any] = []
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
        orelse: Optional[List[Any]] = None
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
        orelse: Optional[List[Any]] = None
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
        catch: Optional[List[Any]] = None
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
