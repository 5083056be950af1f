"""Entry point for ``python -m ccm`` and the zipapp."""
from __future__ import annotations

import gc
import sys

# A run keeps its resources, properties and events alive to the end and makes next to no
# cyclic garbage, so the default young-generation threshold (700) only re-scans live
# objects: measured (CPU time in gc callbacks, /usr/bin/python3 3.11, steady apply) 11-16
# ms of collection at N=1,000 and ~100 ms at N=10,000 with it, 5-8 ms and ~60 ms with
# 10,000. Collection still runs: long-lived agents stay bounded.
GC_THRESHOLD = (10000, 10, 10)


def main() -> None:
    gc.set_threshold(*GC_THRESHOLD)
    # Imported here so that running the zipapp costs one import before the CLI decides
    # what else it needs.
    from ccm.cli.main import main as cli_main

    sys.exit(cli_main())


if __name__ == "__main__":
    main()
