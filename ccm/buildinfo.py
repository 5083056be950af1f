"""Which build of ccm.pyz is running: for ``ccm --version`` and reports.

The boot stub of the zipapp (``_ccm_stub``, made from ``pyzboot/stub.py``) carries the
build id (shiv's content hash of site-packages); from a source tree there is none.
"""
from __future__ import annotations

import sys


def build_id() -> str:
    """The running pyz's build id (64 hex digits), or "" when not running from a pyz."""
    stub = sys.modules.get("_ccm_stub")
    value = stub.BUILD_ID if stub is not None else ""   # the stub always defines it
    return value if isinstance(value, str) else ""
