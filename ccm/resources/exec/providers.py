"""exec providers: ``posix`` (argv, no shell; default) and ``shell`` (``/bin/sh -c``).

Both run through the injected runner with the resource's cwd, environment, timeout and
``path``, which is a real search path: it is used to find the executable and becomes
the child's ``PATH`` (upstream used it as the executable itself).
"""
from __future__ import annotations

import os

from ccm.log import internal
from ccm.model.durations import parse_duration
from ccm.model.errors import ValidationError
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.resource import Properties
from ccm.model.runner import CommandResult
from ccm.resources.exec import split_command
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

log = internal("ccm.exec")


def _env(props: Properties) -> Dict[str, str]:
    out = {}
    for entry in props.get("environment") or []:
        k, _, v = entry.partition("=")
        out[k] = v
    return out


def _timeout(props: Properties) -> Optional[float]:
    t = props.get("timeout")
    return parse_duration(t) if t else None


class _ExecProvider:
    name = ""

    def __init__(self, runner: Any, log_: Any = None):
        self.runner = runner

    def argv(self, line: str) -> List[str]:
        raise NotImplementedError

    def _run(self, line: str, props: Properties) -> CommandResult:
        try:
            argv = self.argv(line)
        except ValidationError as exc:
            return CommandResult(argv=[], exit_code=-1, error=f"invalid command: {exc.message}")
        if not argv:
            return CommandResult(argv=[], exit_code=-1, error="empty command")
        res: CommandResult = self.runner.run(argv, cwd=props.get("cwd") or "/", env=_env(props), timeout=_timeout(props),
                                             path=props.get("path") or None)
        return res

    def run_guard(self, line: str, props: Properties) -> CommandResult:
        return self._run(line, props)

    def execute(self, props: Properties) -> CommandResult:
        line = props.get("command") or props.name
        result = self._run(line, props)
        log.info("Command finished", extra={"kv": {"command": self.shown(line, props), "exitcode": result.exit_code}})
        return result

    def shown(self, line: str, props: Properties) -> str:
        return line


class PosixExecProvider(_ExecProvider):
    name = "posix"

    def argv(self, line: str) -> List[str]:
        return split_command(line)

    def shown(self, line: str, props: Properties) -> str:
        words = split_command(line)
        return words[0] if words else line


class ShellExecProvider(_ExecProvider):
    name = "shell"

    def argv(self, line: str) -> List[str]:
        return ["/bin/sh", "-c", line]

    def shown(self, line: str, props: Properties) -> str:
        return props.name


class PosixFactory(ProviderFactory):
    type_name = "exec"
    name = "posix"
    manageable_is_constant = True   # is_manageable: always (True, 1)

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(True, 1)

    def new(self, runner: Any, log_: Any) -> PosixExecProvider:
        return PosixExecProvider(runner, log_)


class ShellFactory(ProviderFactory):
    type_name = "exec"
    name = "shell"

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(os.path.exists("/bin/sh"), 99)

    def new(self, runner: Any, log_: Any) -> ShellExecProvider:
        return ShellExecProvider(runner, log_)
