"""Go template parse-tree nodes (operands, commands, pipelines, actions, branches)."""
from __future__ import annotations


from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Optional


class _Operand:
    """One argument: a term plus a field chain (``.a.b``, ``$x.a``, ``(p).a``)."""

    __slots__ = ("kind", "val", "fields", "pos", "text")

    def __init__(self, kind: str, val: Any, fields: List[str], pos: int, text: str):
        self.kind, self.val, self.fields, self.pos, self.text = kind, val, fields, pos, text


class _Command:
    __slots__ = ("args", "pos", "text")

    def __init__(self, args: List[_Operand], pos: int, text: str):
        self.args, self.pos, self.text = args, pos, text


class _Pipeline:
    __slots__ = ("decl", "is_assign", "cmds", "pos", "text")

    def __init__(self, decl: List[str], is_assign: bool, cmds: List[_Command], pos: int, text: str):
        self.decl, self.is_assign, self.cmds, self.pos, self.text = decl, is_assign, cmds, pos, text


class _Action:
    def __init__(self, pipe: _Pipeline):
        self.pipe = pipe


class _Branch:
    """if / with / range."""

    def __init__(self, kind: str, pipe: _Pipeline, body: List[Any], orelse: Optional[List[Any]], pos: int):
        self.kind, self.pipe, self.body, self.orelse, self.pos = kind, pipe, body, orelse, pos


class _TemplateCall:
    def __init__(self, name: str, pipe: Optional[_Pipeline], pos: int):
        self.name, self.pipe, self.pos = name, pipe, pos


class _LoopControl:
    def __init__(self, kind: str, pos: int):
        self.kind, self.pos = kind, pos


def _is_empty(body: List[Any]) -> bool:
    return all(isinstance(n, str) and not n.strip() for n in body)
