"""Hierarchical data: deep merge, Hiera resolution, annotations, sources and ``.env``.

Guarantees: pure except ``sources`` (file/http/kv reads) and ``dotenv.build_environ``
(reads ``./.env``). Templates are rendered through ``ccm.templates`` with facts only.
Import the submodules directly; this package imports nothing on its own.
"""
from __future__ import annotations
