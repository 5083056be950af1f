"""Jet execution: statements run against scopes, output collected; ``render_jet``."""
from __future__ import annotations

from collections.abc import Mapping

from ccm.gocompat.fmt import go_key_order, go_sprint
from ccm.gocompat.reflect import has_field
from ccm.templates.engine_util import signature as _signature
from ccm.templates.jet.builtins import _BUILTINS, _ISSET, _b_len
from ccm.templates.jet.lexer import _lex, _Src
from ccm.templates.jet.nodes import (
    _Assign,
    _Block,
    _Chain,
    _CtxField,
    _Ident,
    _If,
    _Include,
    _Node,
    _Output,
    _Range,
    _Text,
    _Try,
    _Yield,
)
from ccm.templates.jet.parser import _Parser
from ccm.templates.jet.values import MISSING, JetError, _go_type, _truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple


class _JetErrorValue:
    """The value bound by ``catch err``: ``err.Error()`` gives the message."""

    def __init__(self, message: str):
        self.message = message

    def Error(self) -> str:  # noqa: N802 - Jet/Go method name
        return self.message

    def __str__(self) -> str:
        return self.message


_MAX_DEPTH = 200


class _Runtime:
    def __init__(self, src: _Src, globals_: Mapping[str, Any], funcs: Mapping[str, Any],
                 ctx: Any, loader: Optional[Callable[[str], str]], left: str, right: str,
                 blocks: Dict[str, _Block]):
        self.src = src
        self.globals = globals_
        self.funcs = funcs
        self.ctx = ctx
        self.loader = loader
        self.left, self.right = left, right
        self.scopes: List[Dict[str, Any]] = [{}]
        self.out: List[str] = []
        self.blocks = dict(blocks)
        self.cache: Dict[str, Tuple[_Src, List[Any], Dict[str, _Block]]] = {}
        self.depth = 0
        self.signatures: Dict[Any, Any] = {}

    def error(self, reason: str, pos: int) -> JetError:
        return self.src.runtime_error(reason, pos)

    # names
    def resolve(self, name: str, pos: int) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.globals:
            return self.globals[name]
        if name in self.funcs:
            return self.funcs[name]
        if name in _BUILTINS:
            return _BUILTINS[name]
        raise self.error(f"identifier {name!r} not available in current or parent scope, global, "
                         f"or default variables", pos)

    def set_var(self, target: _Node, value: Any, let: bool) -> None:
        if isinstance(target, _Ident):
            if target.name == "_":
                return
            if let:
                self.scopes[-1][target.name] = value
                return
            for scope in reversed(self.scopes):
                if target.name in scope:
                    scope[target.name] = value
                    return
            raise self.error(f"identifier {target.name!r} is not available in the current scope", target.pos)
        if isinstance(target, _Chain):
            owner = _Chain(target.base, target.names[:-1], target.pos).eval(self) if len(target.names) > 1 \
                else target.base.eval(self)
        else:
            assert isinstance(target, _CtxField)
            owner = _CtxField(target.names[:-1], target.pos).eval(self) if len(target.names) > 1 else self.ctx
        key = target.names[-1]
        if isinstance(owner, dict):
            owner[key] = value
        elif owner is not None and owner is not MISSING and has_field(owner, key):
            setattr(owner, key, value)
        else:
            raise self.error(f"identifier {key!r} is not available in the current scope", target.pos)

    # calls
    def call(self, callee: _Node, arg_nodes: List[_Node], pos: int) -> Any:
        fn = callee.eval(self)
        name = callee.name if isinstance(callee, _Ident) else (
            callee.names[-1] if isinstance(callee, (_Chain, _CtxField)) else "function")
        if fn is _ISSET:
            if not arg_nodes:
                raise self.error("isset: requires at least 1 argument", pos)
            return all(self.isset(a) for a in arg_nodes)
        if not callable(fn):
            raise self.error(f"node {name!r} is not func kind ({_go_type(fn)})", pos)
        args = [a.eval(self) for a in arg_nodes]
        if fn is not _b_len:  # an invalid value reaches other functions as nil
            args = [None if a is MISSING else a for a in args]
        sig = _signature(fn, self.signatures)
        if sig is not None:
            try:
                sig.bind(*args)
            except TypeError:
                raise self.error(f"call expression: wrong number of arguments for {name} "
                                 f"({len(args)} given)", pos) from None
        try:
            result = fn(*args)
        except JetError:
            raise
        except RecursionError:
            raise self.error(f"{name}: recursion too deep", pos) from None
        except Exception as exc:  # a template function failed: abort with its message
            raise self.error(str(exc) or type(exc).__name__, pos) from exc
        # A Python function returning None is a Go function with no result:
        # nothing is printed (write() and friends).
        return MISSING if result is None else result

    def isset(self, node: _Node) -> bool:
        try:
            value = node.eval(self)
        except JetError:
            return False
        return value is not None and value is not MISSING

    # execution
    def run(self, body: List[Any]) -> None:
        self.scopes.append({})
        try:
            for stmt in body:
                self.execute(stmt)
        finally:
            self.scopes.pop()

    def execute(self, stmt: Any) -> None:
        if isinstance(stmt, _Text):
            self.out.append(stmt.text)
        elif isinstance(stmt, _Output):
            v = stmt.expr.eval(self)
            if v is not MISSING:
                self.out.append(go_sprint(v))
            else:
                self.refuse_missing_data(stmt.expr)
        elif isinstance(stmt, _Assign):
            self.assign(stmt)
        elif isinstance(stmt, _If):
            self.exec_if(stmt)
        elif isinstance(stmt, _Range):
            self.exec_range(stmt)
        elif isinstance(stmt, _Try):
            self.exec_try(stmt)
        elif isinstance(stmt, _Include):
            self.exec_include(stmt)
        elif isinstance(stmt, _Block):
            if stmt.invoke:
                self.exec_block(self.blocks.get(stmt.name, stmt), [], stmt.ctx, stmt.pos)
        elif isinstance(stmt, _Yield):
            block = self.blocks.get(stmt.name)
            if block is None:
                raise self.error(f"unresolved block {stmt.name!r}!!", stmt.pos)
            self.exec_block(block, stmt.args, stmt.ctx, stmt.pos)
        else:  # pragma: no cover
            raise AssertionError(stmt)

    def assign(self, stmt: _Assign) -> None:
        if stmt.comma_ok:
            value = stmt.values[0].eval(self)
            self.set_var(stmt.targets[0], value, stmt.let)
            self.set_var(stmt.targets[1], value is not MISSING, stmt.let)
            return
        values = [v.eval(self) for v in stmt.values]
        for target, value in zip(stmt.targets, values):
            self.set_var(target, value, stmt.let)

    def refuse_missing_data(self, expr: Any) -> None:
        """``[[ Data.prot ]]`` for a key missing from Data/Facts: a typo must not reach a file
        as an empty string (tests such as ``[[ if isset(Data.x) ]]`` still see it as missing)."""
        from ccm.model.errors import did_you_mean
        from ccm.templates.jet.nodes import _Chain, _Ident

        if not isinstance(expr, _Chain) or not isinstance(expr.base, _Ident):
            return
        if expr.base.name not in ("Data", "Facts", "data", "facts"):
            return
        cur: Any = self.resolve(expr.base.name, expr.pos)
        walked = expr.base.name
        for name in expr.names[:-1]:
            if not isinstance(cur, Mapping) or name not in cur:
                return
            cur, walked = cur[name], f"{walked}.{name}"
        last = expr.names[-1]
        if isinstance(cur, Mapping):
            hint = did_you_mean(str(last), [k for k in cur if isinstance(k, str)])
            raise self.error(f"{walked} has no key {last!r}{hint}; a missing key is not rendered into a string",
                             expr.pos)

    def exec_if(self, stmt: _If) -> None:
        self.scopes.append({})
        try:
            if stmt.setup is not None:
                self.assign(stmt.setup)
            if _truth(stmt.cond.eval(self)):
                self.run(stmt.body)
            elif stmt.orelse is not None:
                self.run(stmt.orelse)
        finally:
            self.scopes.pop()

    def exec_range(self, stmt: _Range) -> None:
        seq = stmt.expr.eval(self)
        if isinstance(seq, dict):
            pairs: List[Tuple[Any, Any]] = [(k, seq[k]) for k in sorted(seq, key=go_key_order)]
        elif isinstance(seq, (list, tuple)):
            pairs = list(enumerate(seq))
        elif seq is MISSING:
            raise self.error("can't range over invalid value", stmt.pos)
        elif seq is None:
            raise self.error("cannot range over nil pointer/interface (interface {})", stmt.pos)
        else:
            raise self.error(f"value {go_sprint(seq)} (type {_go_type(seq)}) is not rangeable", stmt.pos)
        if not pairs:
            if stmt.orelse is not None:
                self.run(stmt.orelse)
            return
        saved = self.ctx
        self.scopes.append({})
        try:
            for key, value in pairs:
                if len(stmt.names) == 2:
                    self.set_var(stmt.names[0], key, stmt.let)
                    self.set_var(stmt.names[1], value, stmt.let)
                else:
                    if stmt.names:
                        self.set_var(stmt.names[0], key, stmt.let)
                    self.ctx = value
                self.run(stmt.body)
        finally:
            self.ctx = saved
            self.scopes.pop()

    def exec_try(self, stmt: _Try) -> None:
        mark = len(self.out)
        depth = len(self.scopes)
        saved = self.ctx
        try:
            self.run(stmt.body)
        except JetError as exc:
            del self.out[mark:]
            del self.scopes[depth:]
            self.ctx = saved
            if stmt.catch is not None:
                self.scopes.append({})
                try:
                    if stmt.err_name:
                        self.scopes[-1][stmt.err_name] = _JetErrorValue(str(exc))
                    self.run(stmt.catch)
                finally:
                    self.scopes.pop()

    def exec_include(self, stmt: _Include) -> None:
        name = stmt.name.eval(self)
        if not isinstance(name, str):
            raise self.error(f"unexpected expression type {_go_type(name)!r} in template yielding", stmt.pos)
        if self.loader is None:
            raise self.error(f"include: template {name!r} was not found: no template loader", stmt.pos)
        if name not in self.cache:
            try:
                text = self.loader(name)
            except JetError:
                raise
            except Exception as exc:
                raise self.error(f"include: template {name!r} was not found: {exc}", stmt.pos) from exc
            sub = _Src(text, name)
            parser = _Parser(sub, _lex(sub, self.left, self.right))
            self.cache[name] = (sub, parser.parse(), parser.blocks)
        sub, body, blocks = self.cache[name]
        ctx = stmt.ctx.eval(self) if stmt.ctx is not None else self.ctx
        self.enter(stmt.pos)
        saved_src, saved_ctx, saved_blocks = self.src, self.ctx, self.blocks
        self.src, self.ctx = sub, ctx
        self.blocks = dict(self.blocks)
        self.blocks.update(blocks)
        try:
            self.run(body)
        finally:
            self.src, self.ctx, self.blocks = saved_src, saved_ctx, saved_blocks
            self.depth -= 1

    def exec_block(self, block: _Block, args: List[Tuple[Optional[str], _Node]],
                   ctx_node: Optional[_Node], pos: int) -> None:
        scope: Dict[str, Any] = {}
        positional = [n for n, _ in block.params]
        for i, (name, node) in enumerate(args):
            key = name if name is not None else (positional[i] if i < len(positional) else None)
            if key is None:
                raise self.error(f"too many arguments for block {block.name!r}", pos)
            scope[key] = node.eval(self)
        for name, default in block.params:
            if name not in scope:
                scope[name] = default.eval(self) if default is not None else False
        ctx = ctx_node.eval(self) if ctx_node is not None else self.ctx
        self.enter(pos)
        saved = self.ctx
        self.scopes.append(scope)
        self.ctx = ctx
        try:
            self.run(block.body)
        finally:
            self.ctx = saved
            self.scopes.pop()
            self.depth -= 1

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.depth -= 1
            raise self.error(f"exceeded maximum template depth ({_MAX_DEPTH})", pos)


def render_jet(source: str, variables: Mapping[str, Any], *,
               functions: Optional[Mapping[str, Callable[..., Any]]] = None,
               left: str = "[[", right: str = "]]", context: Any = None,
               loader: Optional[Callable[[str], str]] = None,
               name: str = "template") -> str:
    """Render the Jet template ``source``.

    ``variables`` are the global names (callables among them act as functions),
    ``functions`` more callables, ``context`` the value of ``.``, ``loader`` maps
    an ``include`` path to template text. Raises ``JetError``.
    """
    if not left or not right:
        raise JetError("delimiters must not be empty", template=name)
    src = _Src(source, name)
    parser = _Parser(src, _lex(src, left, right))
    body = parser.parse()
    rt = _Runtime(src, variables or {}, functions or {}, context, loader, left, right, parser.blocks)
    rt.run(body)
    return "".join(rt.out)
