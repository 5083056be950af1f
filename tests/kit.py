"""The test kit: one way to run the real ``ccm`` in a subprocess, one way to build a real
manager in process, and the small recording fakes the unit tests share (no MagicMock
scripts).

* ``ccm(*args, env=..., cwd=..., stdin=..., timeout=...)``: ``python -m ccm ARGS`` (or
  ``command``, e.g. ``[python3, ccm.pyz]``) as cron or a shell would run it; returns the
  ``CompletedProcess`` (text). ``env`` is the child's whole environment (``clean_env()``
  when not given); ``stdin`` is the text it reads, or ``/dev/null`` when ``None``.
* ``clean_env(home=..., **extra)``: an environment without the caller's ``CCM_*``
  settings (the per-test cache and lock directories of ``tests/conftest.py`` aside),
  ``PYTHONPATH`` the source tree; ``None`` in ``extra`` unsets a variable.
* ``manager(**kwargs)``: a real ``ccm.manager.Manager`` with canned facts (nothing
  gathered), ``HOME=/root`` and a user log captured in memory (``output(m)``; every
  record in ``m.user_log.records``); ``build`` and ``run`` go through its property
  pipeline as manifests and ``ccm ensure`` do.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ccm.log import UserLogger
from ccm.manager import Manager
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.runner import CommandResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRY = [sys.executable, "-m", "ccm"]

# --- the real entry in a subprocess -------------------------------------------------------


def clean_env(home: Any = None, *, xdg: Any = None, inherit: bool = True, **extra: Optional[str]) -> Dict[str, str]:
    """The caller's environment (``inherit``; else ``PATH`` only) without ``CCM_*``,
    ``NO_COLOR`` and ``TERM``, but with the per-test ``CCM_CACHE_DIR`` and ``CCM_LOCK_DIR``;
    ``PYTHONPATH`` the source tree. ``home`` sets ``HOME`` and ``XDG_CONFIG_HOME``
    (``xdg``, default ``home/xdg``). ``extra`` last; ``None`` unsets."""
    keep = ("CCM_CACHE_DIR", "CCM_LOCK_DIR")
    if inherit:
        env = {k: v for k, v in os.environ.items()
               if k in keep or not (k.startswith(("CCM_", "NO_COLOR")) or k == "TERM")}
    else:
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    env["PYTHONPATH"] = ROOT
    if home is not None:
        env["HOME"] = str(home)
        env["XDG_CONFIG_HOME"] = str(xdg if xdg is not None else os.path.join(str(home), "xdg"))
    return overlay(env, extra)


def overlay(env: Dict[str, str], extra: Mapping[str, Optional[str]]) -> Dict[str, str]:
    """``env`` with ``extra`` set over it, a ``None`` value unsetting its key."""
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def bare_env(home: Any = "/nonexistent", **extra: Any) -> Dict[str, str]:
    """``clean_env(home, inherit=False, ...)``: ``PATH`` and nothing else of the caller's
    (the per-test cache and lock directories aside); ``HOME`` nowhere unless given."""
    return clean_env(home, inherit=False, **extra)


def ccm(*args: Any, env: Optional[Mapping[str, Optional[str]]] = None, cwd: Any = None,
        stdin: Optional[str] = None, timeout: float = 120.0, command: Optional[Sequence[str]] = None,
        check: bool = False, **run: Any) -> "subprocess.CompletedProcess[str]":
    """Run ``ccm ARGS`` (``command`` instead of ``python -m ccm``) and wait for it. ``env``
    is the whole environment (``None`` values dropped; default ``clean_env()``), ``cwd``
    the working directory (default: the caller's), ``stdin`` the text piped to it (``None``:
    ``/dev/null``). ``check``: assert it exited 0. ``run``: more ``subprocess.run`` options
    (``preexec_fn``)."""
    environ = clean_env() if env is None else {k: v for k, v in env.items() if v is not None}
    feed: Dict[str, Any] = {"stdin": subprocess.DEVNULL} if stdin is None else {"input": stdin}
    r = subprocess.run([*(command or ENTRY), *map(str, args)], env=environ, cwd=None if cwd is None else str(cwd),
                       capture_output=True, text=True, timeout=timeout, **feed, **run)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def spawn(*args: Any, env: Optional[Mapping[str, str]] = None, cwd: Any = None,
          command: Optional[Sequence[str]] = None) -> "subprocess.Popen[str]":
    """``ccm ARGS`` started, not waited for (stdout and stderr piped, stdin ``/dev/null``)."""
    return subprocess.Popen([*(command or ENTRY), *map(str, args)], env=dict(clean_env() if env is None else env),
                            cwd=None if cwd is None else str(cwd), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# --- a real manager in process ------------------------------------------------------------

FACTS = {"host": {"info": {"os": "linux", "hostname": "web01", "platformFamily": "debian"}}, "hostname": "web01"}


def manager(*, facts: Optional[Mapping[str, Any]] = None, data: Optional[Dict[str, Any]] = None,
            log_level: Optional[int] = 0, **kwargs: Any) -> Manager:
    """A real Manager: ``facts`` (default ``FACTS``, never gathered), ``data``, ``HOME=/root``,
    a user log in memory at ``log_level`` (0: every line; ``None``: the process's level)."""
    log = UserLogger(stream=io.StringIO(), colour=False, level=log_level)
    log.records = []
    kwargs.setdefault("environ", {"HOME": "/root"})
    return Manager(facts=dict(facts if facts is not None else FACTS), data=data or {}, user_log=log, **kwargs)


def output(manager: Manager) -> str:
    """What the manager's user log printed."""
    stream = manager.user_log.stream
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


def build(manager: Manager, type_name: str, raw: Dict[str, Any]) -> Tuple[Any, Any]:
    """The manager's property pipeline (the one manifests and ``ccm ensure`` use)."""
    return manager.spec(type_name), manager.prepare(type_name, raw)


def run(manager: Manager, type_name: str, raw: Dict[str, Any], *, record: bool = True) -> Any:
    """One resource through the manager: ``ensure`` (recorded), or ``apply_resource``."""
    if record:
        return manager.ensure(type_name, raw)
    return manager.apply_resource(manager.prepare(type_name, raw))


# --- recording fakes ----------------------------------------------------------------------

class FakeRunner:
    """Maps an argv tuple to (stdout, stderr, exit code); records every call with its env."""

    def __init__(self, responses: Optional[Mapping[Tuple[str, ...], Tuple[str, str, int]]] = None):
        self.responses: Dict[Tuple[str, ...], Tuple[str, str, int]] = dict(responses or {})
        self.calls: List[Dict[str, Any]] = []

    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
            timeout: Optional[float] = None, path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult:
        self.calls.append({"argv": list(argv), "cwd": cwd, "env": dict(env or {}), "timeout": timeout, "path": path})
        key = tuple(argv)
        if key not in self.responses:
            return CommandResult(argv=list(argv), exit_code=-1, error=f"unexpected command {list(argv)}")
        out, err, code = self.responses[key]
        return CommandResult(argv=list(argv), stdout=out, stderr=err, exit_code=code)


def capture_logger() -> Tuple[UserLogger, io.StringIO]:
    buf = io.StringIO()
    logger = UserLogger(stream=buf, colour=False)
    return logger, buf


class StaticFactory(ProviderFactory):
    """A provider factory returning a fixed provider object."""

    def __init__(self, type_name: str, name: str, provider: Any, usable: bool = True, priority: int = 1):
        self.type_name, self.name = type_name, name
        self.provider, self.usable, self._priority = provider, usable, priority

    def is_manageable(self, facts: Mapping[str, Any], props: Any) -> Manageable:
        return Manageable(self.usable, self._priority)

    def new(self, runner: Any, log: Any) -> Any:
        return self.provider
