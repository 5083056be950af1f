"""Go template execution: walk the tree with dot and variables; ``render_go``."""
from __future__ import annotations

import inspect
from collections.abc import Mapping

from ccm.gocompat.fmt import go_key_order, go_sprint
from ccm.gocompat.reflect import member
from ccm.templates.engine_util import signature as _signature
from ccm.templates.gotmpl.funcs import _BUILTINS, _FuncError
from ccm.templates.gotmpl.gofunc import ArgError, GoFunc, literal_of
from ccm.templates.gotmpl.lexer import _lex, _Src
from ccm.templates.gotmpl.parser import _Parser
from ccm.templates.gotmpl.tree import _Action, _Branch, _Command, _LoopControl, _Operand, _Pipeline, _TemplateCall
from ccm.templates.gotmpl.values import _NO_FINAL, MISSING, GoTemplateError, _arg, _go_type, truth
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_MAX_DEPTH = 64


class _State:
    def __init__(self, src: _Src, name: str, funcs: Mapping[str, Any], templates: Dict[str, List[Any]]):
        self.src = src
        self.name = name
        self.funcs = funcs
        self.templates = templates
        self.vars: List[List[Any]] = []
        self.out: List[str] = []
        self.depth = 0
        self.node_text = ""
        self.node_pos = 0
        self.signatures: Dict[Any, Any] = {}

    def error(self, reason: str, pos: Optional[int] = None, node: Optional[str] = None) -> GoTemplateError:
        pos = self.node_pos if pos is None else pos
        line, col = self.src.where(pos)
        return GoTemplateError(reason, template=self.src.name, line=line, column=col,
                               node=self.node_text if node is None else node, executing=self.name)

    # -- variables
    def push(self, name: str, value: Any) -> None:
        self.vars.append([name, value])

    def set_var(self, name: str, value: Any) -> None:
        for entry in reversed(self.vars):
            if entry[0] == name:
                entry[1] = value
                return
        raise self.error(f"undefined variable: {name}")

    def var(self, name: str) -> Any:
        for entry in reversed(self.vars):
            if entry[0] == name:
                return entry[1]
        raise self.error(f"undefined variable: {name}")

    # -- walking
    def walk(self, dot: Any, body: List[Any]) -> None:
        for node in body:
            if isinstance(node, str):
                self.out.append(node)
            elif isinstance(node, _Action):
                value = self.eval_pipeline(dot, node.pipe)
                if not node.pipe.decl:
                    if value is MISSING or value is None:
                        self.refuse_missing_data(dot, node.pipe)
                    self.out.append(self.printable(value, node.pipe))
            elif isinstance(node, _Branch):
                self.walk_branch(dot, node)
            elif isinstance(node, _TemplateCall):
                self.walk_template(dot, node)
            elif isinstance(node, _LoopControl):
                raise _Break() if node.kind == "break" else _Continue()
            else:  # pragma: no cover
                raise AssertionError(node)

    def refuse_missing_data(self, dot: Any, pipe: _Pipeline) -> None:
        """``{{ .Data.prot }}`` for a key missing from Data/Facts: a typo must not reach a file
        as ``<no value>`` (as the Jet and expression engines refuse it). Only a plain field
        chain from the root (``.Data.x`` at the top level, ``$.Data.x`` anywhere) is checked;
        ``if``, ``with``, ``default`` and other functions still see the key as missing. A key
        present with an explicit null prints ``<no value>`` as Go does, with a warning."""
        if len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 1:
            return
        op = pipe.cmds[0].args[0]
        root = self.var("$")
        if op.kind == "field" and dot is root:
            walked = ""
        elif op.kind == "variable" and op.val == "$":
            walked = "$"
        else:
            return
        names = op.fields or []
        if not names or names[0] not in ("Data", "Facts", "data", "facts") or not isinstance(root, Mapping):
            return
        current: Any = root
        for name in names:
            if not isinstance(current, Mapping):
                return
            if name not in current:
                from ccm.model.errors import did_you_mean

                hint = did_you_mean(name, [k for k in current if isinstance(k, str)])
                self.node_text, self.node_pos = op.text, op.pos
                raise self.error(f"{walked} has no key {name!r}{hint}; a missing key is not rendered into a string "
                                 f"(use `{op.text} | default \"...\"` if it may be absent)")
            current, walked = current[name], f"{walked}.{name}"
        if current is None:
            from ccm.log import internal

            internal("ccm.templates").warning(f"{walked} is null and renders as <no value>",
                                              extra={"kv": {"key": walked}})

    def printable(self, value: Any, pipe: _Pipeline) -> str:
        if value is MISSING or value is None:
            return "<no value>"
        if callable(value) and not isinstance(value, (dict, list)):
            self.node_text, self.node_pos = pipe.text, pipe.pos
            raise self.error(f"can't print {pipe.text} of type {_go_type(value)}")
        return go_sprint(value)

    def walk_branch(self, dot: Any, node: _Branch) -> None:
        mark = len(self.vars)
        try:
            if node.kind == "range":
                self.walk_range(dot, node)
                return
            value = self.eval_pipeline(dot, node.pipe)
            if truth(value):
                self.walk(value if node.kind == "with" else dot, node.body)
            elif node.orelse is not None:
                self.walk(dot, node.orelse)
        finally:
            del self.vars[mark:]

    def walk_range(self, dot: Any, node: _Branch) -> None:
        pipe = node.pipe
        decl = pipe.decl
        # the range pipeline's variables take the elements, not the whole value
        value = self.eval_pipeline(dot, _Pipeline([], False, pipe.cmds, pipe.pos, pipe.text))
        where = pipe.cmds[0]
        if value is MISSING or value is None:
            pairs: List[Tuple[Any, Any]] = []
        elif isinstance(value, dict):
            pairs = [(k, value[k]) for k in sorted(value, key=go_key_order)]
        elif isinstance(value, (list, tuple)):
            pairs = list(enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            if len(decl) > 1:
                self.node_text, self.node_pos = where.text, where.pos
                raise self.error(f"can't use {value} to iterate over more than one variable")
            pairs = [(i, i) for i in range(value)]
        else:
            self.node_text, self.node_pos = where.text, where.pos
            raise self.error(f"range can't iterate over {go_sprint(value)}")
        if not pairs:
            if node.orelse is not None:
                self.walk(dot, node.orelse)
            return
        if not pipe.is_assign:
            for name in decl:
                self.push(name, None)
        mark = len(self.vars)
        for key, elem in pairs:
            if len(decl) == 1:
                self.set_var(decl[0], elem)
            elif len(decl) == 2:
                self.set_var(decl[0], key)
                self.set_var(decl[1], elem)
            try:
                self.walk(elem, node.body)
            except _Break:
                del self.vars[mark:]
                break
            except _Continue:
                pass
            del self.vars[mark:]

    def walk_template(self, dot: Any, node: _TemplateCall) -> None:
        body = self.templates.get(node.name)
        if body is None:
            self.node_text, self.node_pos = f'{{{{template "{node.name}"}}}}', node.pos
            raise self.error(f'no such template "{node.name}"')
        new_dot = self.eval_pipeline(dot, node.pipe) if node.pipe is not None else None
        if new_dot is MISSING:
            new_dot = None
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.node_text, self.node_pos = f'{{{{template "{node.name}"}}}}', node.pos
            raise self.error(f"exceeded maximum template depth ({_MAX_DEPTH})")
        saved_vars, saved_name = self.vars, self.name
        self.vars, self.name = [["$", new_dot]], node.name
        try:
            self.walk(new_dot, body)
        finally:
            self.vars, self.name = saved_vars, saved_name
            self.depth -= 1

    # -- evaluation
    def eval_pipeline(self, dot: Any, pipe: _Pipeline) -> Any:
        value: Any = _NO_FINAL
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
        if pipe.decl:
            if pipe.is_assign:
                self.set_var(pipe.decl[0], value)
            else:
                self.push(pipe.decl[0], value)
        return value

    def eval_command(self, dot: Any, cmd: _Command, final: Any) -> Any:
        first = cmd.args[0]
        self.node_text, self.node_pos = first.text, first.pos
        if first.kind == "func":
            return self.eval_function(dot, first, cmd, final)
        if first.kind == "field":
            return self.eval_fields(dot, dot, first, cmd.args[1:], final)
        if first.kind == "variable":
            base = self.var(first.val)
            if not first.fields:
                self.not_a_function(cmd, final)
                return base
            return self.eval_fields(dot, base, first, cmd.args[1:], final)
        if first.kind == "pipe":
            base = self.eval_pipeline(dot, first.val)
            if first.fields:
                return self.eval_fields(dot, base, first, cmd.args[1:], final)
            self.not_a_function(cmd, final)
            return base
        self.not_a_function(cmd, final)
        if first.kind == "dot":
            return dot
        return first.val

    def not_a_function(self, cmd: _Command, final: Any) -> None:
        if len(cmd.args) > 1 or final is not _NO_FINAL:
            first = cmd.args[0]
            raise self.error(f"can't give argument to non-function {first.text}")

    def eval_arg(self, dot: Any, op: _Operand) -> Any:
        self.node_text, self.node_pos = op.text, op.pos
        if op.kind == "dot":
            return dot
        if op.kind in ("string", "number", "bool", "nil"):
            return op.val
        if op.kind == "variable":
            base = self.var(op.val)
            return self.eval_fields(dot, base, op, [], _NO_FINAL) if op.fields else base
        if op.kind == "field":
            return self.eval_fields(dot, dot, op, [], _NO_FINAL)
        if op.kind == "pipe":
            base = self.eval_pipeline(dot, op.val)
            return self.eval_fields(dot, base, op, [], _NO_FINAL) if op.fields else base
        if op.kind == "func":
            return self.call(op.val, self.funcs[op.val], [], dot, op)
        raise AssertionError(op.kind)  # pragma: no cover

    def eval_fields(self, dot: Any, receiver: Any, op: _Operand, args: List[_Operand], final: Any) -> Any:
        names = op.fields
        for i, name in enumerate(names):
            last = i == len(names) - 1
            receiver = self.eval_field(dot, name, op, args if last else [], final if last else _NO_FINAL,
                                       receiver)
        return receiver

    def eval_field(self, dot: Any, name: str, op: _Operand, args: List[_Operand], final: Any,
                   receiver: Any) -> Any:
        has_args = bool(args) or final is not _NO_FINAL
        if receiver is MISSING:
            return MISSING
        if isinstance(receiver, Mapping):
            if has_args:
                raise self.error(f"{name} is not a method but has arguments")
            return receiver[name] if name in receiver else MISSING
        if receiver is None:
            raise self.error(f"nil pointer evaluating interface {{}}.{name}")
        attr = member(receiver, name, MISSING)
        if attr is MISSING:
            raise self.error(f"can't evaluate field {name} in type {_go_type(receiver)}")
        if inspect.ismethod(attr) or inspect.isbuiltin(attr):
            values = [_arg(self.eval_arg(dot, a)) for a in args]
            if final is not _NO_FINAL:
                values.append(_arg(final))
            return self.invoke(name, attr, values)
        if has_args:
            raise self.error(f"{name} has arguments but cannot be invoked as function")
        return attr

    def eval_function(self, dot: Any, first: _Operand, cmd: _Command, final: Any) -> Any:
        name = first.val
        fn = self.funcs[name]
        result = self.call(name, fn, cmd.args[1:], dot, first, final)
        if first.fields:
            return self.eval_fields(dot, result, _Operand("field", None, first.fields, first.pos, first.text),
                                    [], _NO_FINAL)
        return result

    def call(self, name: str, fn: Any, arg_ops: List[_Operand], dot: Any, op: _Operand,
             final: Any = _NO_FINAL) -> Any:
        if name in ("and", "or") and fn is _BUILTINS[name]:
            ops: List[Any] = list(arg_ops)
            if final is not _NO_FINAL:
                ops.append(("final", final))
            if not ops:
                self.node_text, self.node_pos = op.text, op.pos
                raise self.error(f"wrong number of args for {name}: want at least 1 got 0")
            value: Any = None
            for item in ops:
                value = item[1] if isinstance(item, tuple) else self.eval_arg(dot, item)
                if truth(value) == (name == "or"):
                    return value
            return value
        if isinstance(fn, GoFunc):
            return self.call_go(fn, arg_ops, dot, op, final)
        values = [_arg(self.eval_arg(dot, a)) for a in arg_ops]
        if final is not _NO_FINAL:
            values.append(_arg(final))
        self.node_text, self.node_pos = op.text, op.pos
        return self.invoke(name, fn, values)

    def call_go(self, fn: GoFunc, arg_ops: List[_Operand], dot: Any, op: _Operand, final: Any) -> Any:
        """Call a typed Go function: arguments converted to its parameter types first."""
        values = [self.eval_arg(dot, a) for a in arg_ops]
        literals = [literal_of(a.kind, a.val, a.text) if not a.fields else None for a in arg_ops]
        if final is not _NO_FINAL:
            values.append(final)
        self.node_text, self.node_pos = op.text, op.pos
        wrong = fn.arity_error(len(values))
        if wrong is not None:
            raise self.error(f"wrong number of args for {fn.name}: {wrong}")
        try:
            converted = fn.convert(values, literals)
        except ArgError as err:
            if err.index < len(arg_ops):
                self.node_text, self.node_pos = arg_ops[err.index].text, arg_ops[err.index].pos
            raise self.error(str(err)) from None
        self.node_text, self.node_pos = op.text, op.pos
        return self.invoke(fn.name, fn, converted)

    def invoke(self, name: str, fn: Callable[..., Any], values: List[Any]) -> Any:
        sig = None if isinstance(fn, GoFunc) else _signature(fn, self.signatures)
        if sig is not None:
            try:
                sig.bind(*values)
            except TypeError:
                params = list(sig.parameters.values())
                want = len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
                variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
                if variadic:
                    raise self.error(f"wrong number of args for {name}: want at least {want} "
                                     f"got {len(values)}") from None
                raise self.error(f"wrong number of args for {name}: want {want} got {len(values)}") from None
        try:
            result = fn(*values)
        except _FuncError as exc:
            raise self.error(f"error calling {name}: {exc}") from None
        except GoTemplateError:
            raise
        except RecursionError:
            raise self.error(f"error calling {name}: recursion too deep") from None
        except Exception as exc:
            raise self.error(f"error calling {name}: {exc}") from exc
        return result


def render_go(source: str, dot: Any, *, functions: Optional[Mapping[str, Callable[..., Any]]] = None,
              left: str = "{{", right: str = "}}", name: str = "template") -> str:
    """Render the Go text/template ``source`` with ``dot`` as ``.`` and ``$``.

    ``functions`` are added to (and override) the builtins and Sprig helpers.
    Raises ``GoTemplateError``.
    """
    if not left:
        left = "{{"
    if not right:
        right = "}}"
    from ccm.templates.gotmpl.sprig import SPRIG

    # Sprig's functions take precedence over text/template's builtins (its "slice"), as
    # template.Funcs does; the caller's functions over both
    funcs: Dict[str, Any] = dict(_BUILTINS)
    funcs.update(SPRIG)
    if functions:
        funcs.update(functions)
    src = _Src(source, name)
    templates: Dict[str, List[Any]] = {}
    parser = _Parser(src, _lex(src, left, right), funcs, templates)
    body = parser.parse()
    templates.setdefault(name, body)
    state = _State(src, name, funcs, templates)
    state.push("$", dot)
    state.walk(dot, body)
    return "".join(state.out)
