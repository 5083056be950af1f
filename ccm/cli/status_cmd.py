"""``ccm status TYPE NAME``: the observed state of one resource (provider ``status``)."""
from __future__ import annotations

import os
import sys
from typing import List

from ccm.cli.common import ArgumentParser, to_json
from ccm.model.errors import CCMError


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm status", description="Show the current state of a resource")
    p.add_argument("type", help="resource type (package, service, file, ...)")
    p.add_argument("name", help="resource name")
    p.add_argument("--json", action="store_true", help="JSON instead of YAML")
    return p


def run(argv: List[str]) -> int:
    args = parser().parse_args(argv)

    from ccm.cli.setup import build_manager
    from ccm.model.resource import Properties

    manager = build_manager(noop=True, read_env=False)
    if not manager.registry.has_type(args.type):
        raise CCMError(f"invalid type {args.type!r}: expected one of {', '.join(manager.registry.type_names())}")
    spec = manager.registry.spec(args.type)
    if not spec.supports_status:
        if spec.status_unsupported_message:
            print(spec.status_unsupported_message)
            return 0
        raise CCMError(f"could not get status: unsupported resource type {args.type}")
    name = args.name
    if args.type == "file":
        name = os.path.abspath(name)
    props = Properties(args.type, {"name": name, "ensure": "present"}, spec.all_fields)
    factory = manager.registry.select(args.type, manager.facts(), props)
    provider = factory.new(manager.runner, manager.user_log)
    state = provider.status(name)
    metadata = state.metadata
    if args.json:
        sys.stdout.write(to_json(metadata) + "\n")
    else:
        from ccm import yamlio

        sys.stdout.write(yamlio.dump(metadata, sort_keys=False))
    return 0
