"""Test helpers for the archive, scaffold and apply resource tests: a real Manager with a
captured user log, and a one-call "build, validate, run and record one resource"."""
from __future__ import annotations

import io
from typing import Any, Dict, Optional

from ccm.log import UserLogger
from ccm.manager import Manager
from ccm.model.resource import PARSE
from ccm.resources import base
from ccm.resources import properties as P

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
    spec = manager.registry.spec(type_name)
    props = P.build(spec, raw)
    P.render_phase(props, manager.template_environment(), PARSE)
    P.validate(spec, props)
    return spec, props


def run(manager: Manager, type_name: str, raw: Dict[str, Any], *, record: bool = True):
    spec, props = build(manager, type_name, raw)
    event = base.run(manager, spec, props)
    if record:
        manager.record(event)
    return event
