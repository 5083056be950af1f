"""Building a manager from command-line options: the glue every command shares."""
from __future__ import annotations

import os

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional


def current_owner() -> "tuple[str, str]":
    """The current user and group names (numbers when they have no name)."""
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return user, group


def cli_facts(fact_items: Optional[List[str]], facts_file: Optional[str]) -> Dict[str, Any]:
    """``--fact`` map, then ``--facts`` file deep-merged over it (file wins)."""
    facts: Dict[str, Any] = {}
    if fact_items:  # ccm.cli.common imports argparse
        from ccm.cli.common import parse_map

        facts = dict(parse_map(fact_items))
    if facts_file:
        from ccm.cli.common import load_data_file
        from ccm.data.merge import deep_merge

        facts = deep_merge(facts, load_data_file(facts_file, "--facts file"))
    return facts


def environ(read_env: bool) -> Dict[str, str]:
    from ccm.data.dotenv import build_environ

    return build_environ(os.environ, os.getcwd(), read_env)


def build_manager(*, noop: bool = False, session_dir: Optional[str] = None,
                  extra_facts: Optional[Dict[str, Any]] = None, read_env: bool = True,
                  nats_context: str = "CCM", registration_stream: str = "REGISTRATION",
                  metrics: Any = None) -> Any:
    from ccm.manager import build

    return build(noop=noop, session_dir=session_dir, extra_facts=extra_facts, environ=environ(read_env),
                 nats_context=nats_context, registration_stream=registration_stream, metrics=metrics)


def add_bool(parser: Any, name: str, default: bool, help_text: str) -> None:
    """A negatable boolean flag: ``--name`` / ``--no-name``."""
    from ccm.cli.fastargs import add_options, bool_option

    add_options(parser, bool_option(name, default, help_text))
