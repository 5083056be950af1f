"""Compiler: AST to a Python function, compiled once and cached.

Each expression becomes the source of one Python function ``_expr(env)`` that
calls the helpers of ``ccm.expr.runtime`` and the builtins directly (plain
dict member access and int arithmetic are inlined), so running a cached program
costs a small multiple of the equivalent hand-written Python (bench/bench_expr.py).
All user-supplied text reaches the generated source only as named constants,
never spliced in. Builtin names are bound at compile time; any other function
is looked up in the environment when called (``unknown function <name>``).
"""
from __future__ import annotations

import re
from functools import lru_cache

from ccm.expr import runtime as rt
from ccm.expr.builtins import BOOLEAN_BUILTINS, BUILTINS
from ccm.expr.validators import VALIDATORS
from ccm.expr.errors import ExprError
from ccm.expr.parser import (
    ArrayLit, Binary, Call, Closure, Conditional, Ident, Let, Literal, MapLit,
    Member, MethodCall, Node, Pointer, Sequence, Slice, Unary, parse,
)
from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, Union

    Link = Union[Member, Slice, MethodCall]

BUILTIN_FUNCTIONS: FrozenSet[str] = frozenset(BUILTINS)
# what a did-you-mean may offer: not the validator functions, which upstream has only
# inside @validate annotations (``is_duration`` is no hint for ``durations``)
SUGGESTED_FUNCTIONS: FrozenSet[str] = frozenset(n for n in BUILTINS if n not in VALIDATORS)

_UNDEF = object()  # marks a variable missing from the environment

_HELPERS: Dict[str, Any] = {
    "_UNDEF": _UNDEF,
    "_var": rt.variable, "_fn": rt.function, "_fetch": rt.fetch,
    "_slice": rt.slice_of, "_method": rt.call_method, "_truth": rt.truth, "_eq": rt.equal,
    "_add": rt.add, "_sub": rt.sub, "_mul": rt.mul, "_div": rt.div, "_mod": rt.mod,
    "_pow": rt.power, "_neg": rt.negate, "_pos": rt.plus, "_lt": rt.less, "_gt": rt.greater,
    "_le": rt.less_eq, "_ge": rt.greater_eq, "_in": rt.contains_in, "_contains": rt.str_contains,
    "_starts": rt.starts_with, "_ends": rt.ends_with, "_matches": rt.matches,
    "_range": rt.int_range, "_elvis": rt.elvis, "_letcheck": rt.let_check,
}
_HELPERS.update({f"_b_{name}": fn for name, fn in BUILTINS.items()})

_BOOL_OPS = frozenset({"==", "!=", "<", ">", "<=", ">=", "and", "&&", "or", "||", "in",
                       "matches", "contains", "startsWith", "endsWith"})
_ORDER_HELPERS = {"<": "_lt", ">": "_gt", "<=": "_le", ">=": "_ge"}
_STRING_HELPERS = {"contains": "_contains", "startsWith": "_starts", "endsWith": "_ends",
                   "matches": "_matches"}
_ARITH_HELPERS = {"-": "_sub", "*": "_mul", "/": "_div", "%": "_mod", "**": "_pow", "^": "_pow"}
_LOGICAL_FAMILIES = {"or": ("or", "||"), "||": ("or", "||"), "and": ("and", "&&"), "&&": ("and", "&&")}


def _arity(fn: Callable[..., Any]) -> Tuple[int, Optional[int]]:
    """(minimum, maximum or None) positional arguments of a plain Python function."""
    code = fn.__code__
    positional = code.co_argcount
    required = positional - len(fn.__defaults__ or ())
    takes_varargs = bool(code.co_flags & 0x04)  # CO_VARARGS
    return required, (None if takes_varargs else positional)


_ARITY = {name: _arity(fn) for name, fn in BUILTINS.items()}


def _is_number_literal(node: Node) -> bool:
    return isinstance(node, Literal) and type(node.value) in (int, float)


def _is_str_literal(node: Node) -> bool:
    return isinstance(node, Literal) and isinstance(node.value, str)


def _is_bool(node: Node) -> bool:
    if isinstance(node, Literal):
        return isinstance(node.value, bool)
    if isinstance(node, Unary):
        return node.op in ("not", "!")
    if isinstance(node, Binary):
        return node.op in _BOOL_OPS
    if isinstance(node, Call):
        return node.name in BOOLEAN_BUILTINS
    return False


class _CodeGen:
    def __init__(self, source: str, inline: bool = True) -> None:
        self.source = source
        self.inline = inline
        self.namespace: Dict[str, Any] = dict(_HELPERS)
        self._const_names: Dict[Tuple[type, Any], str] = {}
        self._temps = 0
        self.functions: Set[str] = set()
        self.variables: Dict[str, str] = {}  # variable name -> local holding env.get(name)
        self.scopes: List[Dict[str, str]] = []  # let-bound names -> their Python locals
        self.let_names: List[str] = []

    def error(self, message: str, node: Node) -> ExprError:
        return ExprError(message, expr=self.source, column=node.pos + 1, compile_error=True)

    def const(self, value: Any) -> str:
        key = (type(value), repr(value) if isinstance(value, float) else value)  # keeps -0.0
        name = self._const_names.get(key)
        if name is None:
            name = f"_k{len(self._const_names)}"
            self._const_names[key] = name
            self.namespace[name] = value
        return name

    def temp(self) -> str:
        self._temps += 1
        return f"_t{self._temps}"

    def boolean(self, node: Node) -> str:
        code = self.gen(node)
        return code if _is_bool(node) else f"_truth({code})"

    # -- nodes ---------------------------------------------------------
    def gen(self, node: Node, safe: bool = False) -> str:
        if isinstance(node, (Member, Slice, MethodCall)):
            return self.chain(node, safe)
        if isinstance(node, Binary):
            return self.binary(node, safe)
        method = _GENERATORS.get(type(node))
        if method is None:   # pragma: no cover - every parser node has a generator
            raise self.error(f"unsupported node {type(node).__name__}", node)
        return method(self, node)

    def literal(self, node: Literal) -> str:
        value = node.value
        if value is None or isinstance(value, bool):
            return repr(value)
        if type(value) is int:
            return f"({value!r})"
        return self.const(value)

    def ident(self, node: Ident) -> str:
        for scope in reversed(self.scopes):
            if node.name in scope:
                return scope[node.name]
        if node.name == "$env":
            return "env"
        local = self.variables.get(node.name)
        if local is None:
            local = self.variables[node.name] = f"_v{len(self.variables)}"
        return f"({local} if {local} is not _UNDEF else _var(env, {self.const(node.name)}))"

    def pointer(self, node: Pointer) -> str:
        prefix = {"": "_p", "index": "_i", "acc": "_a"}[node.name]
        return f"{prefix}{node.depth}"

    def closure(self, node: Closure) -> str:
        d = node.depth
        return f"(lambda _p{d}, _i{d}=0, _a{d}=None: {self.gen(node.body)})"

    def unary(self, node: Unary) -> str:
        if node.op in ("not", "!"):
            return f"(not {self.boolean(node.operand)})"
        if _is_number_literal(node.operand):
            value = node.operand.value  # type: ignore[attr-defined]  # a Literal, checked above
            return self.gen(Literal(-value if node.op == "-" else value, node.pos))
        return f"{'_neg' if node.op == '-' else '_pos'}({self.gen(node.operand)})"

    def conditional(self, node: Conditional) -> str:
        return f"({self.gen(node.then)} if {self.boolean(node.cond)} else {self.gen(node.other)})"

    def array(self, node: ArrayLit) -> str:
        return "[" + "".join(f"{self.gen(item)}, " for item in node.items) + "]"

    def sequence(self, node: Sequence) -> str:
        return "(" + "".join(f"{self.gen(item)}, " for item in node.items) + ")[-1]"

    def map_literal(self, node: MapLit) -> str:
        pairs = []
        for key, value in node.pairs:
            key_code = self.const(key.value) if isinstance(key, Literal) else self.gen(key)
            pairs.append(f"{key_code}: {self.gen(value)}")
        return "{" + ", ".join(pairs) + "}"

    def let(self, node: Let) -> str:
        """``let x = v; body`` as an assignment expression to a fresh local."""
        name = node.name
        if name in BUILTINS:
            raise self.error(f"cannot redeclare builtin {name}", node)
        if any(name in scope for scope in self.scopes):
            raise self.error(f"cannot redeclare variable {name}", node)
        value = self.gen(node.value)
        local = f"_l{len(self.let_names)}"
        self.let_names.append(name)
        self.scopes.append({name: local})
        try:
            body = self.gen(node.body)
        finally:
            self.scopes.pop()
        return f"(({local} := {value}), {body})[1]"

    def chain(self, node: Node, safe: bool) -> str:
        links: List[Link] = []
        while isinstance(node, (Member, Slice, MethodCall)):
            links.append(node)
            node = node.obj
        links.reverse()
        return self.links(self.gen(node, safe), links, 0, safe)

    def links(self, code: str, links: List[Link], start: int, safe: bool) -> str:
        for i in range(start, len(links)):
            link = links[i]
            if link.optional or safe:
                # a nil before an optional link ends the whole chain with nil
                tmp = self.temp()
                rest = self.links(self.link(tmp, link), links, i + 1, safe)
                return f"(None if ({tmp} := {code}) is None else {rest})"
            code = self.link(code, link)
        return code

    def link(self, code: str, link: Link) -> str:
        if isinstance(link, Member):
            key = link.key
            if isinstance(key, Literal) and isinstance(key.value, str) and not self.inline:
                return f"_fetch({code}, {self.const(key.value)})"
            if isinstance(key, Literal) and isinstance(key.value, str):
                # plain dicts inline (the common case); everything else via the helper
                tmp, name = self.temp(), self.const(key.value)
                return f"({tmp}.get({name}) if type({tmp} := {code}) is dict else _fetch({tmp}, {name}))"
            return f"_fetch({code}, {self.gen(key)})"
        if isinstance(link, Slice):
            lo = "None" if link.lo is None else self.gen(link.lo)
            hi = "None" if link.hi is None else self.gen(link.hi)
            return f"_slice({code}, {lo}, {hi})"
        assert isinstance(link, MethodCall)
        args = "".join(f", {self.gen(a)}" for a in link.args)
        return f"_method({code}, {self.const(link.name)}{args})"

    def call(self, node: Call) -> str:
        name = node.name
        self.functions.add(name)
        args = ", ".join(self.gen(a) for a in node.args)
        if name in BUILTINS:
            low, high = _ARITY[name]
            count = len(node.args)
            if count < low:
                raise self.error(f"not enough arguments to call {name}", node)
            if high is not None and count > high:
                raise self.error(f"too many arguments to call {name}", node)
            return f"_b_{name}({args})"
        return f"_fn(env, {self.const(name)})({args})"

    def binary(self, node: Binary, safe: bool) -> str:
        op = node.op
        if op in _LOGICAL_FAMILIES:
            return self.logical(node)
        if op in ("==", "!="):
            return self.equality(node)
        if op in _ORDER_HELPERS:
            return self.ordering(node)
        if op == "+" or op in _ARITH_HELPERS:
            return self.arithmetic(node)
        if op in _STRING_HELPERS:
            return self.string_op(node)
        return self.other_binary(node)

    def logical(self, node: Binary) -> str:
        # a flat "a and b and c" instead of nested parentheses keeps long
        # chains inside CPython's nesting limit
        family = _LOGICAL_FAMILIES[node.op]
        left = node.left
        operands: List[Node] = [node.right]
        while isinstance(left, Binary) and left.op in family:
            operands.append(left.right)
            left = left.left
        operands.append(left)
        joiner = " or " if family[0] == "or" else " and "
        return "(" + joiner.join(self.boolean(o) for o in reversed(operands)) + ")"

    def equality(self, node: Binary) -> str:
        left, right = node.left, node.right
        if isinstance(left, Literal) and left.value is None:
            code = f"({self.gen(right)} is None)"
        elif isinstance(right, Literal) and right.value is None:
            code = f"({self.gen(left)} is None)"
        elif _is_str_literal(left) or _is_str_literal(right):
            code = f"({self.gen(left)} == {self.gen(right)})"
        else:
            code = f"_eq({self.gen(left)}, {self.gen(right)})"
        return f"(not {code})" if node.op == "!=" else code

    def ordering(self, node: Binary) -> str:
        op, left, right = node.op, node.left, node.right
        if _is_number_literal(right) or _is_str_literal(right) or _is_number_literal(left) or _is_str_literal(left):
            # Python raises TypeError for mismatched kinds; run() rewords it
            return f"({self.gen(left)} {op} {self.gen(right)})"
        return f"{_ORDER_HELPERS[op]}({self.gen(left)}, {self.gen(right)})"

    def arithmetic(self, node: Binary) -> str:
        op, left, right = node.op, node.left, node.right
        if op == "+":
            if _is_str_literal(left) or _is_str_literal(right):
                return f"({self.gen(left)} + {self.gen(right)})"
            return self.int_fast_path("+", "_add", left, right)
        if op in ("-", "*"):
            return self.int_fast_path(op, _ARITH_HELPERS[op], left, right)
        return f"{_ARITH_HELPERS[op]}({self.gen(left)}, {self.gen(right)})"

    def string_op(self, node: Binary) -> str:
        op, right = node.op, node.right
        if op == "matches" and _is_str_literal(right):
            try:
                rt.regex(right.value)  # type: ignore[attr-defined]  # a Literal, checked above
            except ExprError as err:
                raise self.error(err.message, right) from None
        code = f"{_STRING_HELPERS[op]}({self.gen(node.left)}, {self.gen(right)})"
        return f"(not {code})" if node.negate else code

    def other_binary(self, node: Binary) -> str:
        op, left, right = node.op, node.left, node.right
        if op == "??":
            tmp = self.temp()
            return f"({self.gen(right)} if ({tmp} := {self.gen(left, safe=True)}) is None else {tmp})"
        if op == "?:":
            return f"_elvis({self.gen(left)}, {self.gen(right)})"
        if op == "in":
            code = f"_in({self.gen(left)}, {self.gen(right)})"
            return f"(not {code})" if node.negate else code
        if op == "..":
            return f"_range({self.gen(left)}, {self.gen(right)})"
        raise self.error(f"unknown operator {op}", node)  # pragma: no cover


    def int_fast_path(self, op: str, helper: str, left: Node, right: Node) -> str:
        """Inline int-with-int arithmetic; every other combination goes through ``helper``."""
        if not self.inline:
            return f"{helper}({self.gen(left)}, {self.gen(right)})"
        a, b = self.temp(), self.temp()
        return (f"({a} {op} {b} if type({a} := {self.gen(left)}) is type({b} := {self.gen(right)}) is int "
                f"else {helper}({a}, {b}))")


_GENERATORS: Dict[type, Callable[[_CodeGen, Any], str]] = {
    Literal: _CodeGen.literal, Ident: _CodeGen.ident, Pointer: _CodeGen.pointer, Call: _CodeGen.call,
    Closure: _CodeGen.closure, Unary: _CodeGen.unary, Conditional: _CodeGen.conditional,
    ArrayLit: _CodeGen.array, MapLit: _CodeGen.map_literal, Let: _CodeGen.let, Sequence: _CodeGen.sequence,
}


class Program:
    """A compiled expression. ``run(env)`` evaluates it against a variable mapping."""

    __slots__ = ("source", "function_names", "python_source", "_fn")

    def __init__(self, source: str, function_names: FrozenSet[str], python_source: str,
                 fn: Callable[[Mapping[str, Any]], Any]) -> None:
        self.source = source
        self.function_names = function_names
        self.python_source = python_source
        self._fn = fn

    def run(self, env: Mapping[str, Any]) -> Any:
        try:
            return self._fn(env)
        except ExprError as err:
            if err.expr is None:
                err.expr = self.source
            raise
        except CCMError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError,
                RecursionError, re.error) as err:
            raise ExprError(rt.translate_exception(err), expr=self.source) from err

    def __repr__(self) -> str:
        return f"Program({self.source!r})"


@lru_cache(maxsize=4096)
def compile_expr(source: str) -> Program:
    """Parse and compile ``source``; compiled programs are cached by source text."""
    try:
        tree = parse(source)
    except RecursionError:
        raise ExprError("expression is nested too deeply", expr=source, column=None,
                        compile_error=True) from None
    try:
        return _build(source, tree, inline=True)
    except _TooDeep:
        pass
    try:
        # inlined fast paths cost extra parentheses; CPython's parser allows ~200 levels
        return _build(source, tree, inline=False)
    except _TooDeep as err:
        raise ExprError(f"expression is nested too deeply: {err}", expr=source, column=None,
                        compile_error=True) from None


class _TooDeep(Exception):
    pass


def _build(source: str, tree: Node, inline: bool) -> Program:
    gen = _CodeGen(source, inline=inline)
    try:
        body = gen.gen(tree)
        prologue = "".join(f"    {local} = env.get({gen.const(name)}, _UNDEF)\n"
                           for name, local in gen.variables.items())
        if gen.let_names:
            prologue += f"    _letcheck(env, {gen.const(tuple(gen.let_names))})\n"
        python_source = f"def _expr(env):\n{prologue}    return {body}\n"
        code = compile(python_source, "<expr>", "exec")
    except (RecursionError, MemoryError, SyntaxError) as err:
        raise _TooDeep(str(err)) from None
    namespace = gen.namespace
    exec(code, namespace)  # noqa: S102 - generated from the AST; user text only in constants
    return Program(source, frozenset(gen.functions), python_source, namespace["_expr"])


def evaluate(source: str, env: Mapping[str, Any]) -> Any:
    """Compile (cached) and run ``source`` against ``env``."""
    return compile_expr(source).run(env)
