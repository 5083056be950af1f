"""``ccm agent``: keep a host converged.

One scheduler (``agent``), one worker per manifest source (``worker``, ``sources``),
the manifest set (``manifest_set``, ``gitsource``), the bootstrap config (``config``),
the monitor endpoint (``monitor``), and the one seam to the engine (``runner``).
Importing this package imports nothing else.
"""
from __future__ import annotations
