"""``ccm hiera parse|resolve INPUT [k=v ...]`` and ``ccm hiera facts [k=v ...]`` (cli.md).

Facts are system facts, then ``-E`` environment facts, then ``--facts FILE`` (top-level
keys replace), then positional ``k=v`` facts. Override data (``--data-file`` then
``-D K=V``) is deep-merged over the resolved data before annotation validation.
"""
from __future__ import annotations

import os

from ccm.cli.common import (
    ArgumentParser, env_facts, load_data_file, parse_map, require_file, to_json, to_yaml, write,
)
from ccm.model.errors import UsageError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

SUBCOMMANDS = {"parse": "parse", "resolve": "parse", "facts": "facts"}
_USAGE = ("usage: ccm hiera <command> [<args> ...]\n\nCommands:\n  parse|resolve  Resolve a Hiera source\n"
          "  facts          Show the facts Hiera resolution sees")


def _add_fact_flags(parser: ArgumentParser) -> None:
    parser.add_argument("--facts", dest="facts_file", metavar="FILE", help="JSON/YAML facts file")
    parser.add_argument("-E", "--env-facts", action="store_true", help="every environment variable becomes a fact")
    parser.add_argument("--query", metavar="PATH", help="gjson query applied to the result")


def parser() -> ArgumentParser:
    """The whole ``ccm hiera`` tree, for the man page and completions (``run`` dispatches itself)."""
    p = ArgumentParser(prog="ccm hiera", description="Resolve hierarchical data")
    sub = p.add_subparsers(dest="action", metavar="<command>", parser_class=ArgumentParser)
    _parse_args(sub.add_parser("parse", aliases=["resolve"], help="Resolve a Hiera source"))
    _facts_args(sub.add_parser("facts", help="Show the facts Hiera resolution sees"))
    return p


def _parse_parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm hiera parse", description="Resolve a Hiera source")
    _parse_args(p)
    return p


def _parse_args(parser: ArgumentParser) -> None:
    parser.add_argument("args", nargs="*", metavar="INPUT [FACT ...]",
                        help="file, kv://BUCKET/KEY or http(s):// source (env HIERA_INPUT), then K=V facts")
    parser.add_argument("-D", "--data", action="append", default=[], metavar="K=V", help="override data values")
    parser.add_argument("--data-file", metavar="FILE", help="JSON/YAML map of override data")
    _add_fact_flags(parser)
    parser.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context for kv://")
    parser.add_argument("--yaml", action="store_true", help="YAML output")
    parser.add_argument("--env", action="store_true", help="KEY=VALUE output")
    parser.add_argument("--env-prefix", default="HIERA", metavar="P", help="prefix for --env")


def _facts_parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm hiera facts", description="Show the facts Hiera resolution sees")
    _facts_args(p)
    return p


def _facts_args(parser: ArgumentParser) -> None:
    parser.add_argument("facts", nargs="*", metavar="FACT", help="K=V facts")
    _add_fact_flags(parser)


def build_facts(facts_file: Optional[str], use_env: bool, positional: List[str]) -> Dict[str, Any]:
    from ccm.facts import gather

    cli_facts = parse_map(positional)  # parse first: a bad K=V fails before gathering
    facts: Dict[str, Any] = dict(gather())
    if use_env:
        facts.update(env_facts(dict(os.environ)))
    if facts_file:
        facts.update(load_data_file(require_file(facts_file, "--facts"), "--facts file"))
    facts.update(cli_facts)
    return facts


def _override_data(data_file: Optional[str], data_flags: List[str]) -> Dict[str, Any]:
    overrides: Dict[str, Any] = {}
    if data_file:
        overrides = load_data_file(require_file(data_file, "--data-file"), "--data-file")
    overrides.update(parse_map(data_flags))
    return overrides


def _env_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return to_json(value, indent=None, sort_keys=True)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "%f" % value
    return to_json(value, indent=None, sort_keys=True)


def env_lines(value: Any, prefix: str) -> str:
    if isinstance(value, dict):
        return "\n".join(f"{prefix}_{str(k).upper()}={_env_value(value[k])}" for k in sorted(value, key=str))
    return f"{prefix}_VALUE={to_json(value, indent=None, sort_keys=True)}"


def _query(value: Any, path: Optional[str]) -> "tuple[bool, Any]":
    if not path:
        return True, value
    from ccm.templates import gjson

    return gjson.get(value, path)


def _run_parse(argv: List[str]) -> int:
    parser = _parse_parser()
    args = parser.parse_intermixed_args(argv)
    positional = list(args.args)
    if positional:
        source, fact_args = positional[0], positional[1:]
    elif os.environ.get("HIERA_INPUT"):
        source, fact_args = os.environ["HIERA_INPUT"], []
    else:
        parser.error("required argument 'input' not provided")
    if not source.strip():
        raise ValidationError("source is required")
    overrides = _override_data(args.data_file, args.data)
    facts = build_facts(args.facts_file, args.env_facts, fact_args)

    from ccm.data.sources import resolve_source

    from ccm.nats.functions import kv_loader_for

    result = resolve_source(source, facts, cwd=os.getcwd(), data_overrides=overrides or None,
                            kv_loader=kv_loader_for(args.context))
    found, value = _query(result.data, args.query)
    if not found:
        value = None
    if args.env:
        write(env_lines(value, args.env_prefix))
    elif args.yaml:
        write(to_yaml(value))
    else:
        write(to_json(value, sort_keys=True))
    return 0


def _run_facts(argv: List[str]) -> int:
    args = _facts_parser().parse_intermixed_args(argv)
    from ccm.facts import canonical

    facts = canonical(build_facts(args.facts_file, args.env_facts, args.facts))
    if not args.query:
        write(to_json(facts))
        return 0
    found, value = _query(facts, args.query)
    if not found:
        text = ""
    elif isinstance(value, str):
        text = value
    else:
        text = to_json(value, indent=None)
    import sys

    sys.stdout.write(text + "\n")
    return 0


def run(argv: List[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        if argv:
            print(_USAGE)
            return 0
        raise UsageError(
            "a subcommand from the list below is required, use --help for full help including flags and arguments"
            f"\n\n{_USAGE}"
        )
    name = SUBCOMMANDS.get(argv[0])
    if name is None:
        raise UsageError(
            f"expected command but got \"{argv[0]}\", use --help for full help including flags and arguments"
            f"\n\n{_USAGE}"
        )
    if name == "parse":
        return _run_parse(argv[1:])
    return _run_facts(argv[1:])
