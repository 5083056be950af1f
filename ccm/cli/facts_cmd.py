"""``ccm facts [QUERY] [--yaml]``: print system and file facts (cli.md)."""
from __future__ import annotations


from ccm.cli.common import ArgumentParser, to_json, to_yaml, write
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List


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

        value_of_all = value
        found, value = gjson.get(value, args.query)
        if not found:
            raise ValidationError(_no_match(args.query, value_of_all))
    write(to_yaml(value) if args.yaml else to_json(value))
    return 0



def _no_match(query: str, facts: Any) -> str:
    """Upstream prints ``unexpected end of JSON input``; say what matched nothing instead."""
    from ccm.model.errors import did_you_mean

    message = f"no fact matches {query!r}"
    first = query.split(".", 1)[0]
    if isinstance(facts, dict) and first not in facts:
        message += did_you_mean(first, [k for k in facts if isinstance(k, str)])
    return message + ": `ccm facts` without a query prints them all"
