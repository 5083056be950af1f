"""Go template parsing: token lists -> the tree of ``tree`` nodes, plus ``define``s."""
from __future__ import annotations


from ccm.templates.gotmpl.lexer import _T_TEXT, _Src, _Tok
from ccm.templates.gotmpl.tree import (
    _Action,
    _Branch,
    _Command,
    _is_empty,
    _LoopControl,
    _Operand,
    _Pipeline,
    _TemplateCall,
)
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple


class _Parser:
    def __init__(self, src: _Src, items: List[Tuple[str, Any, int]], funcs: Mapping[str, Any],
                 templates: Dict[str, List[Any]]):
        self.src = src
        self.items = items
        self.i = 0
        self.funcs = funcs
        self.templates = templates
        self.vars: List[str] = ["$"]
        self.range_depth = 0
        # per-action token cursor
        self.toks: List[_Tok] = []
        self.t = 0
        self.action_pos = 0

    # -- token cursor
    def peek(self) -> Optional[_Tok]:
        return self.toks[self.t] if self.t < len(self.toks) else None

    def next(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise self.src.error("unexpected end of action", self.action_pos)
        self.t += 1
        return tok

    def at(self, kind: str, val: Any = None) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind and (val is None or tok.val == val)

    def expect_end(self, context: str) -> None:
        tok = self.peek()
        if tok is not None:
            raise self.src.error(f"unexpected {tok.val!r} in {context}", tok.pos)

    # -- lists
    def parse(self) -> List[Any]:
        body, stop = self.parse_list(())
        return body

    def parse_list(self, stops: Tuple[str, ...]) -> Tuple[List[Any], Optional[Tuple[str, int]]]:
        out: List[Any] = []
        while self.i < len(self.items):
            kind, val, pos = self.items[self.i]
            self.i += 1
            if kind == _T_TEXT:
                out.append(val)
                continue
            self.toks, self.t, self.action_pos = val, 0, pos
            head = self.peek()
            if head is None:
                raise self.src.error("missing value for command", pos)
            if head.kind == "keyword" and head.val in ("end", "else"):
                if head.val not in stops:
                    raise self.src.error(f"unexpected {{{{{head.val}}}}}", head.pos)
                self.next()
                return out, (head.val, head.pos)
            if head.kind == "keyword" and head.val in ("if", "with", "range"):
                self.next()
                out.append(self.parse_branch(head.val, head.pos))
            elif head.kind == "keyword" and head.val in ("template", "block"):
                self.next()
                out.append(self.parse_template(head.val, head.pos))
            elif head.kind == "keyword" and head.val == "define":
                self.next()
                self.parse_define(head.pos)
            elif head.kind == "keyword" and head.val in ("break", "continue"):
                self.next()
                if self.range_depth == 0:
                    raise self.src.error(f"{{{{{head.val}}}}} outside {{{{range}}}}", head.pos)
                self.expect_end(head.val)
                out.append(_LoopControl(head.val, head.pos))
            else:
                out.append(_Action(self.pipeline("command", allow_decl=True)))
        if stops:
            raise self.src.error("unexpected EOF", len(self.src.text))
        return out, None

    def parse_branch(self, kind: str, pos: int) -> _Branch:
        mark = len(self.vars)
        if kind == "range":
            self.range_depth += 1
        try:
            pipe = self.pipeline(kind, allow_decl=True)
            body, stop = self.parse_list(("end", "else"))
            assert stop is not None
            orelse: Optional[List[Any]] = None
            if kind == "range":
                self.range_depth -= 1
            if stop[0] == "else":
                nxt = self.peek()
                if nxt is not None and nxt.kind == "keyword" and nxt.val in ("if", "with") and kind != "range":
                    # "else if"/"else with": a nested branch that shares our {{end}}
                    self.next()
                    orelse = [self.parse_branch(nxt.val, nxt.pos)]
                else:
                    self.expect_end("else")
                    orelse, stop2 = self.parse_list(("end",))
                    self.expect_end("end")
            else:
                self.expect_end("end")
            return _Branch(kind, pipe, body, orelse, pos)
        finally:
            del self.vars[mark:]

    def parse_template(self, kw: str, pos: int) -> _TemplateCall:
        tok = self.next()
        if tok.kind != "string":
            raise self.src.error(f"unexpected {tok.val!r} in {kw} clause", tok.pos)
        name = tok.val
        pipe = None if self.peek() is None else self.pipeline(kw, allow_decl=False)
        if kw == "block":
            saved_vars, saved_depth = self.vars, self.range_depth
            self.vars, self.range_depth = ["$"], 0
            body, _ = self.parse_list(("end",))
            self.expect_end("end")
            self.vars, self.range_depth = saved_vars, saved_depth
            self.add_template(name, body, tok.pos)
        return _TemplateCall(name, pipe, pos)

    def add_template(self, name: str, body: List[Any], pos: int) -> None:
        old = self.templates.get(name)
        if old is not None and not _is_empty(old) and not _is_empty(body):
            raise self.src.error(f'template: multiple definition of template "{name}"', pos)
        if old is None or _is_empty(old):
            self.templates[name] = body

    def parse_define(self, pos: int) -> None:
        tok = self.next()
        if tok.kind != "string":
            raise self.src.error(f"unexpected {tok.val!r} in define clause", tok.pos)
        self.expect_end("define clause")
        saved_vars, saved_depth = self.vars, self.range_depth
        self.vars, self.range_depth = ["$"], 0
        body, _ = self.parse_list(("end",))
        self.expect_end("end")
        self.vars, self.range_depth = saved_vars, saved_depth
        self.add_template(tok.val, body, tok.pos)

    # -- pipelines
    def pipeline(self, context: str, allow_decl: bool, in_paren: bool = False) -> _Pipeline:
        start_tok = self.peek()
        start = start_tok.pos if start_tok else self.action_pos
        decl: List[str] = []
        is_assign = False
        if allow_decl and self.at("variable"):
            decl, is_assign = self.declarations(context, start)
        cmds = self.commands(context, in_paren)
        if not in_paren:
            self.expect_end(context)
        if not cmds:
            raise self.src.error(f"missing value for {context}", start)
        self.check_stages(cmds)
        if not is_assign:
            self.vars.extend(decl)
        end = self.toks[self.t - 1].end if self.t else start
        return _Pipeline(decl, is_assign, cmds, start, self.src.text[start:end])

    def declarations(self, context: str, start: int) -> Tuple[List[str], bool]:
        """The variables a pipeline declares or assigns ("$x :=", "$x =", "$i, $v :="), and
        whether it assigns; none (the tokens left unread) when the variables are operands."""
        save = self.t
        names = [self.next().val]
        while self.at("op", ",") and len(self.toks) > self.t + 1 and self.toks[self.t + 1].kind == "variable":
            self.next()
            names.append(self.next().val)
        if not (self.at("op", ":=") or self.at("op", "=")):
            self.t = save
            return [], False
        op = self.next().val
        if len(names) > (2 if context == "range" else 1):
            raise self.src.error(f"too many declarations in {context}", start)
        is_assign = op == "="
        for v in names:
            if is_assign and v not in self.vars:
                raise self.src.error(f"undefined variable {v!r}".replace("'", '"'), start)
        return names, is_assign

    def commands(self, context: str, in_paren: bool) -> List[_Command]:
        """The commands of a pipeline, separated by ``|``."""
        cmds: List[_Command] = []
        while True:
            tok = self.peek()
            if tok is None or (in_paren and tok.kind == "op" and tok.val == ")"):
                break
            cmds.append(self.command(context, in_paren))
            if self.at("op", "|"):
                self.next()
                if self.peek() is None or (in_paren and self.at("op", ")")):
                    raise self.src.error("missing command after pipe", self.action_pos)
                continue
            break
        return cmds

    def check_stages(self, cmds: List[_Command]) -> None:
        for later in cmds[1:]:
            first = later.args[0]
            if first.kind in ("string", "number", "bool", "nil", "dot") and not first.fields:
                raise self.src.error(f"non executable command in pipeline stage {cmds.index(later) + 1}",
                                     first.pos)

    def command(self, context: str, in_paren: bool) -> _Command:
        args: List[_Operand] = []
        head = self.peek()
        start = head.pos if head is not None else self.action_pos
        while True:
            tok = self.peek()
            if tok is None or (tok.kind == "op" and tok.val in ("|", ")")):
                break
            if args and not tok.spaced and tok.kind != "op":
                raise self.src.error(f"missing space before {tok.val!r}", tok.pos)
            args.append(self.operand())
        if not args:
            tok = self.peek()
            if tok is None:
                raise self.src.error("missing value for command", self.action_pos)
            raise self.src.error(f"unexpected {tok.val!r} in operand", tok.pos)
        first = args[0]
        if first.kind == "nil" and not first.fields:
            raise self.src.error("nil is not a command", first.pos)
        end = self.toks[self.t - 1].end
        return _Command(args, start, self.src.text[start:end])

    def operand(self) -> _Operand:
        tok = self.next()
        pos = tok.pos
        fields: List[str] = []
        if tok.kind == "field":
            kind, val = "field", None
            fields.append(tok.val)
        elif tok.kind == "variable":
            if tok.val not in self.vars:
                raise self.src.error(f'undefined variable "{tok.val}"', tok.pos)
            kind, val = "variable", tok.val
        elif tok.kind == "op" and tok.val == ".":
            kind, val = "dot", None
        elif tok.kind == "identifier":
            if tok.val not in self.funcs:
                raise self.src.error(f'function "{tok.val}" not defined', tok.pos)
            kind, val = "func", tok.val
        elif tok.kind == "keyword" and tok.val in ("true", "false"):
            kind, val = "bool", tok.val == "true"
        elif tok.kind == "keyword" and tok.val == "nil":
            kind, val = "nil", None
        elif tok.kind in ("string", "number"):
            kind, val = tok.kind, tok.val
        elif tok.kind == "op" and tok.val == "(":
            kind, val = "pipe", self.pipeline("parenthesized pipeline", allow_decl=True, in_paren=True)
            if not self.at("op", ")"):
                raise self.src.error("unclosed left paren", tok.pos)
            self.next()
        else:
            raise self.src.error(f"unexpected {tok.val!r} in operand", tok.pos)
        while True:
            nxt = self.peek()
            if nxt is None or nxt.kind != "field" or nxt.spaced:
                break
            if kind in ("string", "number", "bool", "nil"):
                raise self.src.error(f"unexpected . after term {tok.val!r}", nxt.pos)
            fields.append(self.next().val)
        end = self.toks[self.t - 1].end
        return _Operand(kind, val, fields, pos, self.src.text[pos:end])
