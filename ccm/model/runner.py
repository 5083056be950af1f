"""The command runner contract every provider uses for external commands."""
from __future__ import annotations

import functools
import os

from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

# The environment every child gets (not inherited from ccm's own environment), so that
# tool output parses the same everywhere.
BASE_PATH = "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"

# How much of a failed command's output a failure message and its event carry.
TAIL_LINES = 20
TAIL_LINE_CHARS = 400


# --- where commands are found: ONE rule for provider selection and the runner ---------------
#
# A command named without a ``/`` is looked up in ccm's own ``PATH`` first, then in
# ``BASE_PATH``; relative entries (``""``, ``.``, ``bin``) are skipped, since ccm runs as
# root from any working directory. A caller that passes its own search path (the exec
# type's ``path`` property, or ``PATH`` in ``env``) gets exactly that path instead. The
# child's environment still has ``PATH=BASE_PATH`` (or the caller's): only the lookup of
# the executable itself honours ccm's ``PATH``, so a wrapper directory put in front of
# ``PATH`` (a test double, a site's ``/opt/site/bin/dnf``) is seen by ``is_manageable``
# and run by the runner alike.

def command_search_path(process_path: Optional[str] = None) -> str:
    """ccm's ``PATH`` (``os.environ`` unless given) followed by ``BASE_PATH``, absolute dirs only."""
    return _search_path(os.environ.get("PATH", "") if process_path is None else process_path)


@functools.lru_cache(maxsize=16)
def _search_path(process_path: str) -> str:
    seen: List[str] = []
    for d in (process_path + ":" + BASE_PATH).split(":"):
        if d.startswith("/") and d not in seen:
            seen.append(d)
    return ":".join(seen)


def _is_command(path: str) -> bool:
    return os.access(path, os.X_OK) and not os.path.isdir(path)


def find_command(executable: str, search_path: Optional[str] = None) -> Optional[str]:
    """The file ``executable`` names on ``search_path`` (default: ``command_search_path()``)."""
    if "/" in executable:
        return executable if _is_command(executable) else None
    for d in (command_search_path() if search_path is None else search_path).split(":"):
        if not d:
            continue
        candidate = os.path.join(d, executable)
        if _is_command(candidate):
            return candidate
    return None


_found: Dict[str, str] = {}   # "search path\0executable" -> where it was last found
_MAX_FOUND = 256


def on_search_path(executable: str) -> bool:
    """Whether ``find_command(executable)`` finds it, for provider probes (``is_manageable``)
    that ask once per resource: where it was found last is checked first (one ``access``
    and one ``stat``) before searching every directory again, so the answer is always
    the one a full search gives now (a tool installed or removed mid-run is seen)."""
    search_path = command_search_path()
    key = search_path + "\0" + executable
    hit = _found.get(key)
    if hit is not None and _is_command(hit):
        return True
    found = find_command(executable, search_path)
    if found is None:
        _found.pop(key, None)
        return False
    if len(_found) >= _MAX_FOUND:   # a PATH that keeps changing must not grow it without end
        _found.clear()
    _found[key] = found
    return True


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
