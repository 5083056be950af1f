"""The contracts are true: every registered provider satisfies its type's capability
protocol, and the real Manager satisfies ccm.model.manager.RunManager.

Checked twice: by mypy (``make typecheck`` includes this file, so the typed functions
below fail to type-check when a provider drifts from its protocol) and at run time
(every member the protocol declares exists with the same parameters).
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Dict, List, Tuple

import pytest

from ccm.manager import Manager
from ccm.model.manager import RunManager
from ccm.registry import default_registry
from ccm.resources.apply.ccmmanifest import ManifestProvider
from ccm.resources.apply.logic import ApplyProvider
from ccm.resources.archive.http import HttpArchiveProvider
from ccm.resources.archive.logic import ArchiveProvider
from ccm.resources.exec.logic import ExecProvider
from ccm.resources.exec.providers import PosixExecProvider, ShellExecProvider
from ccm.resources.file.logic import FileProvider
from ccm.resources.file.posix import PosixFileProvider
from ccm.resources.package.apt import AptProvider
from ccm.resources.package.dnf import DnfProvider
from ccm.resources.package.logic import PackageProvider
from ccm.resources.scaffold.choria import ChoriaScaffoldProvider
from ccm.resources.scaffold.logic import ScaffoldProvider
from ccm.resources.service.logic import ServiceProvider
from ccm.resources.service.systemd import SystemdProvider
from ccm.resources.service.sysv import SysvProvider


# --- static: mypy proves each assignment -------------------------------------------------

def _static_package(a: AptProvider, d: DnfProvider) -> List[PackageProvider]:
    return [a, d]


def _static_service(s: SystemdProvider, v: SysvProvider) -> List[ServiceProvider]:
    return [s, v]


def _static_file(p: PosixFileProvider) -> FileProvider:
    return p


def _static_exec(p: PosixExecProvider, s: ShellExecProvider) -> List[ExecProvider]:
    return [p, s]


def _static_archive(h: HttpArchiveProvider) -> ArchiveProvider:
    return h


def _static_scaffold(c: ChoriaScaffoldProvider) -> ScaffoldProvider:
    return c


def _static_apply(m: ManifestProvider) -> ApplyProvider:
    return m


def _static_manager(m: Manager) -> RunManager:
    return m


# --- at run time -----------------------------------------------------------------------------

def _protocol_of(type_name: str) -> Any:
    """The capability protocol a type's logic is generic over (``TypeLogic[XProvider]``)."""
    spec = default_registry().spec(type_name)
    module, _, cls = spec.logic.partition(":")
    logic_cls = getattr(importlib.import_module(module), cls)
    for base in getattr(logic_cls, "__orig_bases__", ()):
        args = getattr(base, "__args__", ())
        if args and getattr(args[0], "_is_protocol", False):
            return args[0]
    return None


# Found from the logic classes, so a new type is checked without editing this file.
PROTOCOLS: Dict[str, Any] = {t: _protocol_of(t) for t in default_registry().type_names()}


def _members(proto: Any) -> Tuple[List[str], Dict[str, Any]]:
    attrs = [a for a in getattr(proto, "__annotations__", {})]
    methods = {n: f for n, f in vars(proto).items() if callable(f) and not n.startswith("_")}
    return attrs, methods


def _provider_classes(type_name: str) -> List[type]:
    out = []
    for factory in default_registry().factories(type_name):
        made = factory.new(None, None)
        out.append(type(made))
    return out


def test_every_type_has_a_protocol():
    missing = [t for t, proto in PROTOCOLS.items() if proto is None]
    assert not missing, f"logic not generic over a provider protocol: {missing}"
    assert PROTOCOLS["package"] is PackageProvider and PROTOCOLS["apply"] is ApplyProvider


@pytest.mark.parametrize("type_name", sorted(PROTOCOLS))
def test_providers_satisfy_their_protocol(type_name):
    proto = PROTOCOLS[type_name]
    attrs, methods = _members(proto)
    assert methods, f"{proto.__name__} declares no methods"
    for cls in _provider_classes(type_name):
        for a in attrs:
            assert hasattr(cls, a), f"{cls.__name__} lacks {a} ({proto.__name__})"
        for name, fn in methods.items():
            impl = getattr(cls, name, None)
            assert callable(impl), f"{cls.__name__} lacks {name}() ({proto.__name__})"
            want = list(inspect.signature(fn).parameters)
            have = list(inspect.signature(impl).parameters)
            assert have[:len(want)] == want, f"{cls.__name__}.{name}{have} != {proto.__name__}.{name}{want}"


@pytest.mark.parametrize("type_name", sorted(PROTOCOLS))
def test_type_logic_is_a_type_logic(type_name):
    from ccm.model.resource import TypeLogic

    assert isinstance(default_registry().spec(type_name).new_logic(), TypeLogic)


def test_manager_has_every_run_manager_member():
    m = Manager(environ={}, facts={})
    attrs, methods = _members(RunManager)
    for name in list(attrs) + list(methods) + ["registry", "session", "metrics"]:
        assert hasattr(m, name), name


@pytest.mark.parametrize("type_name", sorted(PROTOCOLS))
def test_ensure_subcommand_is_typespec_data(type_name):
    from ccm.cli.ensure_cmd import EnsureFlags, _flags, parser

    spec = default_registry().spec(type_name)
    actions: Any = parser()._subparsers
    choices: Dict[str, Any] = actions._group_actions[0].choices
    if not spec.cli_help:
        assert type_name not in choices
        return
    assert isinstance(_flags(spec), EnsureFlags)
    for name in (type_name,) + spec.cli_aliases:
        assert name in choices
