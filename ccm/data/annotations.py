"""``@require`` / ``@validate`` / ``@sensitive`` annotations read from the comments of a YAML Hiera source.

PyYAML drops comments, so this is a small line scanner over the text of the ``data:``
block (spec data-and-templates.md §2.4). It tracks keys by indentation and yields one
rule per key and kind, addressed by the dotted path below the data key
(``web.listen_port``). Both the comment lines directly above a key (no blank line in
between) and a trailing comment on the key's line count. Keys inside list elements,
block scalar bodies and flow collections are never annotated. Unknown ``@`` directives
are logged at WARN. Not: a YAML parser; the document itself is parsed elsewhere.
"""
from __future__ import annotations


from ccm.lazyre import LazyPattern
from ccm.log import internal
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Optional, Tuple

log = internal("ccm.data.annotations")

REQUIRE = "require"
VALIDATE = "validate"
SENSITIVE = "sensitive"

_BLOCK_SCALAR = LazyPattern(r"^(?:[&!]\S*\s+)*[|>][-+0-9]*$")


class Rule(ValueObject):
    """One annotation: ``kind`` is ``require`` or ``validate`` (with ``expression``)."""

    key: str
    kind: str
    expression: Optional[str]
    line: Optional[int]

    _value_fields = ("key", "kind", "expression", "line")

    def __init__(self, key: str, kind: str, expression: Optional[str] = None, line: Optional[int] = None) -> None:
        self.key = key
        self.kind = kind
        self.expression = expression
        self.line = line




def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _comment_start(text: str) -> int:
    """Index of a ``#`` that starts a comment in a value/rest text, or -1."""
    i = 0
    if text[:1] in ("'", '"'):
        quote = text[0]
        i = 1
        while i < len(text):
            ch = text[i]
            if quote == '"' and ch == "\\":
                i += 2
                continue
            if ch == quote:
                if quote == "'" and text[i + 1:i + 2] == "'":
                    i += 2
                    continue
                i += 1
                break
            i += 1
    while i < len(text):
        if text[i] == "#" and (i == 0 or text[i - 1] in " \t"):
            return i
        i += 1
    return -1


def _split_key(body: str) -> Optional[Tuple[str, str]]:
    """Split ``key: rest`` (body has no indentation). None when the line is no map key."""
    if not body or body[0] in "-?[{#&*!|>%@`" and not (body[0] == "-" and body[1:2] not in ("", " ")):
        return None
    if body[0] in ("'", '"'):
        quote = body[0]
        i = 1
        buf = []
        while i < len(body):
            ch = body[i]
            if quote == '"' and ch == "\\" and i + 1 < len(body):
                buf.append(body[i + 1])
                i += 2
                continue
            if ch == quote:
                if quote == "'" and body[i + 1:i + 2] == "'":
                    buf.append("'")
                    i += 2
                    continue
                break
            buf.append(ch)
            i += 1
        else:
            return None
        after = body[i + 1:].lstrip(" \t")
        if not after.startswith(":") or after[1:2] not in ("", " ", "\t"):
            return None
        return "".join(buf), after[1:].strip()
    for i, ch in enumerate(body):
        if ch == "#" and i > 0 and body[i - 1] in " \t":
            return None
        if ch == ":" and (i + 1 == len(body) or body[i + 1] in " \t"):
            key = body[:i].rstrip()
            if not key:
                return None
            return key, body[i + 1:].strip()
    return None


def _directives(comments: List[str], key: str, line: int) -> List[Rule]:
    required = False
    sensitive = False
    expression: Optional[str] = None
    for text in comments:
        if not text.startswith("@"):
            continue
        word, _, rest = text.partition(" ")
        rest = rest.strip()
        if word in ("@require", "@required") and not rest:
            required = True
        elif word == "@validate" and rest:
            expression = rest
        elif word == "@sensitive" and not rest:
            sensitive = True
        else:
            log.warning("Unrecognized annotation in hiera data", extra={"kv": {"key": key, "annotation": text}})
    rules: List[Rule] = []
    if required:
        rules.append(Rule(key=key, kind=REQUIRE, expression=None, line=line))
    if expression is not None:
        rules.append(Rule(key=key, kind=VALIDATE, expression=expression, line=line))
    if sensitive:
        rules.append(Rule(key=key, kind=SENSITIVE, expression=None, line=line))
    return rules


def _comment_text(raw: str) -> str:
    return raw.strip().lstrip("#").strip()


def _data_start(lines: List[str], data_key: str) -> Optional[int]:
    """The index of the line after the top-level ``data_key:`` line, or None."""
    for idx, line in enumerate(lines):
        if not line or line[0] in " \t#":
            continue
        split = _split_key(line.rstrip())
        if split and split[0] == data_key:
            return idx + 1
    return None


def parse_annotations(yaml_text: str, data_key: str = "data") -> List[Rule]:
    """Rules for the keys below ``data_key`` in a YAML document's text."""
    lines = yaml_text.splitlines()
    rules: List[Rule] = []
    start = _data_start(lines, data_key)
    if start is None:
        return rules

    stack: List[Tuple[int, Optional[str]]] = []  # (indent, key) ; key None marks a list item
    pending: List[str] = []
    block_indent: Optional[int] = None  # inside a block scalar owned by a key at this indent
    for idx in range(start, len(lines)):
        raw = lines[idx].rstrip()
        stripped = raw.strip()
        ind = _indent(raw)
        if block_indent is not None:
            if not stripped or ind > block_indent:
                continue
            block_indent = None
        if not stripped:
            pending = []
            continue
        if raw.startswith("\t"):
            pending = []
            continue
        if stripped.startswith("#"):
            pending.append(_comment_text(stripped))
            continue
        if ind == 0:
            break  # next top-level key (or document marker) ends the data block
        while stack and stack[-1][0] >= ind:
            stack.pop()
        body = stripped
        if body == "-" or body.startswith("- "):
            stack.append((ind, None))
            pending = []
            continue
        split = _split_key(body)
        if split is None:
            pending = []
            continue
        key, rest = split
        comments = list(pending)
        pending = []
        cpos = _comment_start(rest)
        value = rest
        if cpos >= 0:
            comments.append(_comment_text(rest[cpos:]))
            value = rest[:cpos].strip()
        in_list = any(k is None for _, k in stack)
        path = ".".join([k for _, k in stack if k is not None] + [key])
        stack.append((ind, key))
        if ("|" in value or ">" in value) and _BLOCK_SCALAR.match(value):   # no indicator: no re to import
            block_indent = ind
        if in_list:
            continue
        rules.extend(_directives(comments, path, idx + 1))
    return rules
