"""The apply engine: turn a manifest into validated resources, then run them in order.

* ``load_manifest`` resolves a manifest completely — data, resource list, every
  resource's properties, templates, type rules, schema — before anything runs, so bad
  input changes nothing on disk.
* ``execute`` runs the resources in declaration order, recording one event each.

Callers go through the manager (``Manager.load``, ``Manager.execute``, ``Manager.apply``);
the engine sees a manager only as ``ccm.model.manager.RunManager``.
"""
from __future__ import annotations

from ccm.apply.engine import ExecutionResult, execute
from ccm.apply.manifest import Manifest, ResourceEntry, load_manifest, render_manifest

__all__ = ["ExecutionResult", "Manifest", "ResourceEntry", "execute", "load_manifest", "render_manifest"]
