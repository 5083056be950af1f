"""``ccm doc [TOPIC]``: the offline reference (like ``ansible-doc`` or ``puppet describe``).

``ccm doc`` lists the topics; ``ccm doc file`` prints every property of the file type
with its type, default, template phase and an example; ``ccm doc functions``,
``ccm doc hiera`` and ``ccm doc manifest`` the rest. Everything comes from
``ccm.cli.reference`` (the field declarations and schema the validator uses).
"""
from __future__ import annotations

import sys

from ccm.cli.common import ArgumentParser
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm doc", description="Offline reference: resource types, template functions, Hiera",
                       epilog="examples:\n  ccm doc                 list the topics\n"
                              "  ccm doc file            every property of the file type\n"
                              "  ccm doc functions       template and expression functions\n"
                              "  ccm doc hiera           Hiera keys and annotations")
    p.add_argument("topic", nargs="?", default="", help="a resource type, manifest, hiera or functions")
    return p


def run(argv: List[str]) -> int:
    from ccm.cli import reference

    args = parser().parse_args(argv)
    if not args.topic:
        rows = reference.topics()
        width = max(len(t) for t, _ in rows) + 2
        sys.stdout.write("Topics (ccm doc TOPIC):\n\n" + "".join(f"  {t:<{width}}{text}\n" for t, text in rows))
        return 0
    sys.stdout.write(reference.render_text(reference.topic(args.topic)))
    return 0
