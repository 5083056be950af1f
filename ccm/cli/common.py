"""Helpers shared by CLI commands: argument parsing, map flags, JSON/YAML output, fact files.

JSON output is Go's (``ccm.gocompat.json``): what upstream prints, byte for byte.
"""
from __future__ import annotations

import argparse
import os

from ccm.model.errors import UsageError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, NoReturn, Optional


def shown_default(action: argparse.Action) -> Optional[str]:
    """The default ``--help`` states for a flag, or None when there is nothing to state
    (unset, false, empty list, or already written into the help text)."""
    default = action.default
    if isinstance(action, argparse._StoreFalseAction):   # ``--no-X``: its ``--X`` states the default
        return None
    if default is None or default is False or default == [] or default == "" or default is argparse.SUPPRESS:
        return None
    if action.help and "default" in action.help.lower():
        return None
    if default is True:
        return "true"
    if isinstance(default, (list, tuple)):
        return ",".join(str(v) for v in default)
    return str(default)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs (examples) as written; every flag's default appended."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = shown_default(action)
        if default is not None and text is not argparse.SUPPRESS:
            text = f"{text} (default: {default.replace('%', '%%')})"
        return text


class ArgumentParser(argparse.ArgumentParser):
    """argparse with fisk's exit codes: usage problems raise UsageError (exit 1)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n\n{self.format_usage().rstrip()}")

    def missing_subcommand(self) -> UsageError:
        """What a command that needs a subcommand says when given none: the usage line and
        the list of subcommands (with their help), as the message promises."""
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                formatter.start_section("commands")
                formatter.add_arguments(action._get_subactions())
                formatter.end_section()
        return UsageError("a subcommand from the list below is required, use --help for full help including flags "
                          f"and arguments\n\n{formatter.format_help().rstrip()}")


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


def to_json(value: Any, *, indent: Optional[int] = 2, sort_keys: bool = False) -> str:
    """Serialise like Go's json.MarshalIndent (``indent=None``: compact json.Marshal)."""
    from ccm.gocompat import json as gojson

    try:
        text = gojson.dumps(value, indent=indent, sort_keys=sort_keys, default=str)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    # Go escapes C0 controls, not DEL or C1 (U+0080-U+009F), which terminals may act on;
    # they can only stand inside strings, where \u00XX is the same value
    return text if text.isascii() and "\x7f" not in text else text.translate(_C1_ESCAPES)


_C1_ESCAPES = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}


def to_yaml(value: Any) -> str:
    """Block-style YAML with sorted keys."""
    from ccm import yamlio

    text = yamlio.dump(value, sort_keys=True)
    if text.endswith("...\n"):  # PyYAML marks the end of a bare scalar document
        text = text[: -len("...\n")]
    return text


def require_file(path: str, flag: str = "") -> str:
    """fisk's ExistingFile check; ``flag`` (``--facts``) starts the message when given."""
    lead = f"{flag}: " if flag else ""
    if not os.path.exists(path):
        raise ValidationError(f"{lead}path '{path}' does not exist")
    if os.path.isdir(path):
        raise ValidationError(f"{lead}'{path}' is a directory")
    return path


def load_data_file(path: str, what: str = "facts file") -> Dict[str, Any]:
    """A JSON (first non-blank char ``{``/``[``) or YAML map from ``path``."""
    from ccm.data.sources import parse_text

    from ccm.readfile import read_text

    text = read_text(path, what)
    if not text.strip():
        return {}
    try:
        value = parse_text(text, path)
    except ValidationError as exc:
        reason = str(exc)
        prefix = "failed to parse "
        reason = reason[len(prefix):] if reason.startswith(prefix) else reason
        raise ValidationError(f"failed to parse {what} {reason}") from None
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
