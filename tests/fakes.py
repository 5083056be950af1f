"""Small recording fakes shared by the tests (no MagicMock scripts)."""
from __future__ import annotations

import io
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ccm.log import UserLogger
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.runner import CommandResult


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


def manager(tmp_path: Any = None, **kwargs: Any) -> Any:
    """A real Manager with canned facts (no gathering) and a captured user log."""
    from ccm.manager import Manager

    log, buf = capture_logger()
    kwargs.setdefault("facts", {"host": {"info": {"os": "linux", "platformFamily": "debian"}}})
    kwargs.setdefault("environ", {"HOME": "/root"})
    kwargs.setdefault("user_log", log)
    m = Manager(**kwargs)
    m.output = buf  # type: ignore[attr-defined]
    return m
