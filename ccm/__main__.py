"""Entry point for ``python -m ccm`` and the zipapp (whose boot code, ``pyzboot/`` in the
source tree, hands over to ``main`` here and to nothing else of ccm)."""
from __future__ import annotations

import gc
import os
import sys

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    pass

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

    finish(cli_main())


def finish(code: int) -> None:
    """Exit with ``code``. When the main thread is the only one left, the interpreter's
    teardown (freeing every module and object one by one: ~7% of a 1-resource apply,
    more with every resource held) is skipped, doing what it does that has an effect:
    the ``atexit`` callbacks run (logging's flush, NATS connections, ``weakref.finalize``
    clean-ups, the zipapp's import bundle writer), then stdout and stderr are flushed, a failure
    reported as Python reports it (``Exception ignored in: ...`` for stdout, exit status 120), then ``os._exit``.
    Locks are released by the kernel as the descriptors close; every file ccm writes is
    closed (and renamed into place) before the command returns. With another thread
    alive, the normal ``sys.exit`` (which waits for it)."""
    threading = sys.modules.get("threading")   # never imported: no thread was started
    if threading is not None and threading.active_count() != 1:
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()  # reports a failing callback itself, as at a normal exit
    status = code
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except Exception as exc:
            status = 120
            if stream is sys.stdout:
                import traceback

                text = f"Exception ignored in: {stream!r}\n" + "".join(traceback.format_exception_only(type(exc), exc))
                try:
                    sys.stderr.write(text)
                    sys.stderr.flush()
                except Exception:
                    pass
    os._exit(status)


if __name__ == "__main__":
    main()
