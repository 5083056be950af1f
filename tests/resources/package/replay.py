"""ReplayRunner: recorded tool output served by exact argv, with the exact env asserted.

Shared by the package and service replay tests. Each argv maps to a list of responses
served in order (the last one repeats), so a status read before and after an action
can differ. Any call with an unknown argv or a different environment fails the test.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ccm.model.runner import CommandResult

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures")


def fixture(rel: str) -> str:
    with open(os.path.join(FIXTURES, rel), "rb") as fh:
        return fh.read().decode("utf-8")


Response = Tuple[str, str, int]


class ReplayRunner:
    def __init__(self, env: Optional[Mapping[str, str]] = None):
        self.expected_env = dict(env or {})
        self.responses: Dict[Tuple[str, ...], List[Response]] = {}
        self.calls: List[List[str]] = []
        self.envs: List[Dict[str, str]] = []

    def on(self, argv: Sequence[str], *responses: Response) -> "ReplayRunner":
        self.responses.setdefault(tuple(argv), []).extend(responses)
        return self

    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
            timeout: Optional[float] = None, path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult:
        self.calls.append(list(argv))
        self.envs.append(dict(env or {}))
        assert dict(env or {}) == self.expected_env, f"env of {list(argv)}: {dict(env or {})} != {self.expected_env}"
        assert not inherit_env, f"{list(argv)} must not inherit ccm's environment"
        queue = self.responses.get(tuple(argv))
        assert queue, f"unexpected command {list(argv)}"
        out, err, code = queue.pop(0) if len(queue) > 1 else queue[0]
        return CommandResult(argv=list(argv), stdout=out, stderr=err, exit_code=code)


class NullLock:
    """A lock stand-in that records the operations it was held for."""

    def __init__(self) -> None:
        self.operations: List[str] = []
        self.depth = 0

    def hold(self, operation: str = "", timeout: Any = None) -> "NullLock":
        self.operations.append(operation)
        return self

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1
