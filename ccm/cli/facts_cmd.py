"""``ccm facts [QUERY] [--yaml]``: print system and file facts (cli.md)."""
from __future__ import annotations


from ccm.cli.common import ArgumentParser, to_json, to_yaml, write
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List


def parser() -> ArgumentParser:
    parser = ArgumentParser(prog="ccm facts", description="Show system facts")
    parser.add_argument("query", nargs="?", help="gjson path to print instead of all facts")
    parser.add_argument("--yaml", action="store_true", help="YAML output")
    return parser


def run(argv: List[str]) -> int:
    args = parser().parse_args(argv)
    from ccm.facts import canonical, gather

    value = canonical(gather())
    if args.query:
        from ccm.templates import gjson

        found, value = gjson.get(value, args.query)
        if not found:
            # upstream re-indents the empty result text and fails the same way
            raise ValidationError("unexpected end of JSON input")
    write(to_yaml(value) if args.yaml else to_json(value))
    return 0
