"""The command runner contract every provider uses for external commands."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Protocol, Sequence

# The environment every child gets (not inherited from ccm's own environment), so that
# tool output parses the same everywhere.
BASE_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"


@dataclass
class CommandResult:
    argv: Sequence[str]
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    error: Optional[str] = None        # could not start, timed out, killed
    duration_ns: int = 0
    timed_out: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0


class CommandRunner(Protocol):
    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
            path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult: ...
