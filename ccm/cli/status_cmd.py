"""``ccm status TYPE NAME``: the observed state of one resource (``Manager.status``)."""
from __future__ import annotations

import sys

from ccm.cli.common import ArgumentParser, to_json
from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm status", description="Show the current state of a resource")
    p.add_argument("type", help="resource type (package, service, file, ...)")
    p.add_argument("name", help="resource name")
    p.add_argument("--json", action="store_true", help="JSON instead of YAML")
    p.add_argument("--provider", help="force a provider (as in `ccm ensure --provider`)")
    return p


def run(argv: List[str]) -> int:
    args = parser().parse_args(argv)

    from ccm.cli.setup import build_manager

    manager = build_manager(noop=True, read_env=False)
    if not manager.registry.has_type(args.type):
        raise CCMError(f"invalid type {args.type!r}: expected one of {', '.join(manager.registry.type_names())}")
    spec = manager.spec(args.type)
    if not spec.supports_status:
        if spec.status_unsupported_message:
            print(spec.status_unsupported_message)
            return 0
        raise CCMError(f"could not get status: unsupported resource type {args.type}")
    state = manager.status(args.type, args.name, provider=args.provider)
    metadata = state.metadata
    if args.json:
        sys.stdout.write(to_json(metadata) + "\n")
    else:
        from ccm import yamlio

        sys.stdout.write(yamlio.dump(metadata, sort_keys=False))
    return 0
