"""The command runner contract every provider uses for external commands.

Where a command is found (the one lookup rule of provider selection and the runner) is
``ccm.cmdsearch``.
"""
from __future__ import annotations

from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Sequence

# The environment every child gets (not inherited from ccm's own environment), so that
# tool output parses the same everywhere.
BASE_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"

# How much of a failed command's output a failure message and its event carry.
TAIL_LINES = 20
TAIL_LINE_CHARS = 400


class CommandResult(ValueObject):
    argv: Sequence[str]
    stdout: str
    stderr: str
    exit_code: int
    error: Optional[str]               # could not start, timed out, killed
    duration_ns: int
    timed_out: bool
    extra: Dict[str, Any]

    redactions: Sequence[str]                                   # secrets to hide in shown output

    _value_fields = (
        "argv", "stdout", "stderr", "exit_code", "error", "duration_ns", "timed_out", "extra", "redactions",
    )
    _repr_fields = ("argv", "stdout", "stderr", "exit_code", "error", "duration_ns", "timed_out", "extra")

    def __init__(self, argv: Sequence[str], stdout: str = "", stderr: str = "", exit_code: int = 0,
                 error: Optional[str] = None, duration_ns: int = 0, timed_out: bool = False,
                 extra: Optional[Dict[str, Any]] = None, redactions: Sequence[str] = ()) -> None:
        self.argv = argv
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code
        self.error = error
        self.duration_ns = duration_ns
        self.timed_out = timed_out
        self.extra = {} if extra is None else extra
        self.redactions = redactions

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0

    def output_tail(self, limit: int = TAIL_LINES) -> str:
        """The last ``limit`` lines of output in total, stderr first, then stdout, secrets
        redacted, each line cut at ``TAIL_LINE_CHARS``: for failure messages and events.

        When both streams have output, stderr keeps at least half of the lines.
        """
        err = [ln for ln in self.stderr.splitlines() if ln.strip()]
        out = [ln for ln in self.stdout.splitlines() if ln.strip()]
        n_err = min(len(err), limit if not out else max(limit // 2, limit - len(out)))
        n_out = min(len(out), limit - n_err)
        parts = []
        for label, lines, n in (("stderr", err, n_err), ("stdout", out, n_out)):
            if n <= 0:
                continue
            shown = lines[-n:]
            head = f"{label} (last {n} of {len(lines)} lines):" if n < len(lines) else f"{label}:"
            parts.append(head + "".join("\n  " + self._redact(ln) for ln in shown))
        return "\n".join(parts)

    def redacted(self, text: str) -> str:
        for secret in self.redactions:
            if secret:
                text = text.replace(secret, "******")
        return text

    def _redact(self, line: str) -> str:
        line = self.redacted(line)
        if len(line) > TAIL_LINE_CHARS:
            line = line[:TAIL_LINE_CHARS] + "..."
        return line

    def detail_with_output(self, detail: Optional[str]) -> Optional[str]:
        """A provider error's ``detail`` (the line it picked out) plus the output tail, when
        the output holds more than that one line; both with secrets redacted."""
        detail = self.redacted(detail) if detail else detail
        lines = [ln for ln in (self.stderr + "\n" + self.stdout).splitlines() if ln.strip()]
        if len(lines) <= 1 and (detail or not lines):
            return detail
        tail = self.output_tail()
        return f"{detail}\n{tail}" if detail else tail

    def with_output(self, message: str) -> str:
        """``message`` followed by the output tail (when there is output)."""
        tail = self.output_tail()
        return f"{message}\n{tail}" if tail else message


class CommandRunner(Protocol):
    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
            path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult: ...
