"""Test helpers for the archive, scaffold and apply resource tests: a real Manager with a
captured user log, and a one-call "build, validate, run and record one resource"."""
from __future__ import annotations

import io
from typing import Any, Dict, Optional

from ccm.log import UserLogger
from ccm.manager import Manager

FACTS = {"host": {"info": {"os": "linux", "hostname": "web01"}}, "hostname": "web01"}


def make_manager(*, noop: bool = False, data: Optional[Dict[str, Any]] = None,
                 working_dir: Optional[str] = None, facts: Optional[Dict[str, Any]] = None,
                 **kw: Any) -> Manager:
    log = UserLogger(stream=io.StringIO(), colour=False, level=0)
    log.records = []
    return Manager(noop=noop, facts=dict(facts if facts is not None else FACTS), data=data or {},
                   working_dir=working_dir, user_log=log, environ={"HOME": "/root"}, **kw)


def output(manager: Manager) -> str:
    return manager.user_log.stream.getvalue()


def build(manager: Manager, type_name: str, raw: Dict[str, Any]):
    """The manager's property pipeline (the one manifests and ``ccm ensure`` use)."""
    return manager.spec(type_name), manager.prepare(type_name, raw)


def run(manager: Manager, type_name: str, raw: Dict[str, Any], *, record: bool = True):
    if record:
        return manager.ensure(type_name, raw)
    return manager.apply_resource(manager.prepare(type_name, raw))
