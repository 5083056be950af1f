"""Entry point for ``python -m ccm`` and the zipapp."""
from __future__ import annotations

import sys


def main() -> None:
    # Imported here so that running the zipapp costs one import before the CLI decides
    # what else it needs.
    from ccm.cli.main import main as cli_main

    sys.exit(cli_main())


if __name__ == "__main__":
    main()
