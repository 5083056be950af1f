"""Helpers shared by CLI commands: argument parsing, map flags, JSON/YAML output, fact files.

Output follows Go's encoders where upstream prints with them: 2-space indented JSON
with ``<``, ``>``, ``&`` escaped as ``\\u003c``..., floats in Go's shortest form
(``2400`` for 2400.0, ``1e+21``), non-ASCII text kept as UTF-8.
"""
from __future__ import annotations

import argparse
import json
import math
import os
from decimal import Decimal
from typing import Any, Dict, Iterable, List, NoReturn, Optional

from ccm.model.errors import UsageError, ValidationError


class ArgumentParser(argparse.ArgumentParser):
    """argparse with fisk's exit codes: usage problems raise UsageError (exit 1)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n\n{self.format_usage().rstrip()}")


def parse_map_item(text: str) -> "tuple[str, str]":
    """``KEY=VALUE`` or ``KEY:VALUE``, split at whichever separator comes first."""
    positions = [p for p in (text.find("="), text.find(":")) if p >= 0]
    if not positions:
        raise ValidationError(f"expected KEY=VALUE got '{text}'")
    cut = min(positions)
    return text[:cut], text[cut + 1:]


def parse_map(items: Optional[Iterable[str]]) -> Dict[str, str]:
    """Repeated map flags/args; later duplicates win."""
    out: Dict[str, str] = {}
    for item in items or ():
        key, value = parse_map_item(item)
        out[key] = value
    return out


def go_float(value: float) -> str:
    """A float as Go's encoding/json writes it."""
    if math.isnan(value) or math.isinf(value):
        raise ValidationError(f"json: unsupported value: {value}")
    if value == 0:
        return "0" if math.copysign(1.0, value) > 0 else "-0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = format(Decimal(repr(value)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    text = repr(value)
    mantissa, _, exp = text.partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    sign = "-" if exp.startswith("-") else "+"
    digits = exp.lstrip("+-").lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits}"


def _go_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def to_json(value: Any, *, indent: Optional[int] = 2, sort_keys: bool = False, _level: int = 0) -> str:
    """Serialise like Go's json.MarshalIndent (``indent=None``: compact json.Marshal)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, dict):
        keys = sorted(value, key=str) if sort_keys else list(value)
        if not keys:
            return "{}"
        parts = [f"{_go_string(str(k))}:{'' if indent is None else ' '}"
                 f"{to_json(value[k], indent=indent, sort_keys=sort_keys, _level=_level + 1)}" for k in keys]
        return _wrap("{", "}", parts, indent, _level)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        parts = [to_json(v, indent=indent, sort_keys=sort_keys, _level=_level + 1) for v in value]
        return _wrap("[", "]", parts, indent, _level)
    return _go_string(str(value))


def _wrap(open_: str, close: str, parts: List[str], indent: Optional[int], level: int) -> str:
    if indent is None:
        return open_ + ",".join(parts) + close
    inner = " " * (indent * (level + 1))
    outer = " " * (indent * level)
    return open_ + "\n" + ",\n".join(inner + p for p in parts) + "\n" + outer + close


def to_yaml(value: Any) -> str:
    """Block-style YAML with sorted keys."""
    from ccm import yamlio

    text = yamlio.dump(value, sort_keys=True)
    if text.endswith("...\n"):  # PyYAML marks the end of a bare scalar document
        text = text[: -len("...\n")]
    return text


def require_file(path: str) -> str:
    """fisk's ExistingFile check."""
    if not os.path.exists(path):
        raise ValidationError(f"path '{path}' does not exist")
    if os.path.isdir(path):
        raise ValidationError(f"'{path}' is a directory")
    return path


def load_data_file(path: str, what: str = "facts file") -> Dict[str, Any]:
    """A JSON (first non-blank char ``{``/``[``) or YAML map from ``path``."""
    from ccm.data.sources import parse_text

    try:
        with open(path, "r", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"failed to read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        return {}
    try:
        value = parse_text(text, path)
    except ValidationError as exc:
        reason = str(exc)
        prefix = f"failed to parse {path}: "
        reason = reason[len(prefix):] if reason.startswith(prefix) else reason
        raise ValidationError(f"failed to parse {what} {path}: {reason}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(f"{what} {path} must contain a map, got {type(value).__name__}")
    return value


def env_facts(environ: Dict[str, str]) -> Dict[str, str]:
    """``-E``: every process variable as a fact; upstream keeps the text up to a second ``=``."""
    return {k: v.split("=", 1)[0] for k, v in environ.items()}


def write(text: str) -> None:
    import sys

    sys.stdout.write(text.strip() + "\n")
