"""SubprocessRunner: the one place ccm starts external commands.

Guarantees: argv execution (never a shell unless the caller passes ``/bin/sh -c``), a
fixed environment (``LANG=C``, ``LC_ALL=C``, fixed ``PATH``) that does not inherit
ccm's own, the executable found by the one lookup rule of ``ccm.model.runner``
(``find_command``: ccm's ``PATH`` then ``BASE_PATH``, or exactly the caller's ``path``/``PATH``,
the same rule provider selection uses), timeouts that kill
the whole process group, and secrets redacted from every logged command line.
"""
from __future__ import annotations

import os
import signal
import threading
import time

from ccm.cmdsearch import find_command
from ccm.log import internal
from ccm.model.durations import clamp_timeout
from ccm.model.runner import BASE_PATH, CommandResult
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from typing import Dict, List, Mapping, Optional, Sequence, Set

log = internal("ccm.runner")


# Go's wording for the common signals ("signal: killed"), which users grep logs for.
_SIGNAL_TEXT = {signal.SIGKILL: "killed", signal.SIGTERM: "terminated", signal.SIGINT: "interrupt",
                signal.SIGHUP: "hangup", signal.SIGSEGV: "segmentation fault", signal.SIGABRT: "aborted"}


# Process groups of the commands running now, so an interrupted run can stop them all.
_running: Set[int] = set()
_running_guard = threading.Lock()


def stop_running_commands(sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to the whole process group of every command running now (signal-safe:
    no allocation-heavy work, no locks another thread could hold for long)."""
    for pgid in list(_running):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def child_environment(env: Optional[Mapping[str, str]] = None, path: Optional[str] = None) -> Dict[str, str]:
    out = {"PATH": BASE_PATH, "LANG": "C", "LC_ALL": "C"}
    if path:
        out["PATH"] = path
    for k, v in (env or {}).items():
        out[k] = v
    return out


which = find_command   # kept for callers of the old name


def redact(argv: Sequence[str], secrets: Sequence[str]) -> List[str]:
    out = []
    for a in argv:
        for s in secrets:
            if s:
                a = a.replace(s, "******")
        out.append(a)
    return out


class SubprocessRunner:
    def __init__(self, secrets: Sequence[str] = ()):
        self.secrets = list(secrets)

    def run(self, argv: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
            path: Optional[str] = None, secrets: Sequence[str] = (),
            stdin: Optional[bytes] = None, inherit_env: bool = False) -> CommandResult:
        all_secrets = self.secrets + list(secrets)
        result = self._run(argv, cwd=cwd, env=env, timeout=timeout, path=path, all_secrets=all_secrets,
                           stdin=stdin, inherit_env=inherit_env)
        result.redactions = tuple(s for s in all_secrets if s)
        if result.stdout or result.stderr:
            # the full output: at --info when the command failed, else at --debug
            emit = log.info if not result.ok else log.debug
            emit("command output", extra={"kv": {
                "command": " ".join(redact(argv, all_secrets)), "exitcode": result.exit_code,
                "stderr": result.redacted(result.stderr), "stdout": result.redacted(result.stdout)}})
        return result

    def _run(self, argv: Sequence[str], *, cwd: Optional[str], env: Optional[Mapping[str, str]],
             timeout: Optional[float], path: Optional[str], all_secrets: List[str],
             stdin: Optional[bytes], inherit_env: bool) -> CommandResult:
        shown = " ".join(redact(argv, all_secrets))
        if inherit_env:
            child_env = dict(os.environ)
            child_env.update(env or {})
        else:
            child_env = child_environment(env, path)
        started = time.monotonic_ns()
        from ccm import interrupt

        if interrupt.received() is not None:
            return CommandResult(argv=list(argv), exit_code=-1, error=f"not started: {interrupt.message()}")
        if not argv:
            return CommandResult(argv=[], exit_code=-1, error="empty command")
        # the caller's own search path (path=, env PATH, inherit_env) is used as given;
        # otherwise the shared rule: ccm's PATH, then BASE_PATH
        own = inherit_env or bool(path) or "PATH" in (env or {})
        exe = find_command(argv[0], child_env.get("PATH", BASE_PATH) if own else None)
        if exe is None:
            err = f'exec: "{argv[0]}": executable file not found in $PATH'
            if "/" in argv[0]:
                err = f"fork/exec {argv[0]}: no such file or directory"
            log.debug("command not found", extra={"kv": {"command": shown}})
            return CommandResult(argv=list(argv), exit_code=-1, error=err)
        log.debug("running command", extra={"kv": {"command": shown, "cwd": cwd or "/"}})
        import subprocess  # here: a run without commands never pays for it

        try:
            proc = subprocess.Popen(
                [exe] + list(argv[1:]), cwd=cwd or "/", env=child_env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(argv=list(argv), exit_code=-1, error=f"{argv[0]}: {exc.strerror or exc}")
        timed_out = False
        out: bytes
        err_b: bytes
        with _running_guard:
            _running.add(proc.pid)
        try:
            if interrupt.received() is not None:   # the signal came while we were starting it
                stop_running_commands(signal.SIGTERM)
            out, err_b = proc.communicate(input=stdin, timeout=clamp_timeout(timeout))
        except subprocess.TimeoutExpired:
            timed_out = True
            self._kill_group(proc)
            out, err_b = proc.communicate()
        finally:
            with _running_guard:
                _running.discard(proc.pid)
        duration = time.monotonic_ns() - started
        if interrupt.received() is not None:
            self._kill_group(proc)   # nothing of its group may outlive the interrupted run
        stdout = out.decode("utf-8", "replace")
        stderr = err_b.decode("utf-8", "replace")
        if interrupt.received() is not None:
            return CommandResult(argv=list(argv), stdout=stdout, stderr=stderr, exit_code=-1,
                                 error=interrupt.message(), duration_ns=duration)
        if timed_out:
            return CommandResult(argv=list(argv), stdout=stdout, stderr=stderr, exit_code=-1,
                                 error=f"command timed out after {timeout:g}s and was killed",
                                 duration_ns=duration, timed_out=True)
        code = proc.returncode
        if code < 0:
            return CommandResult(argv=list(argv), stdout=stdout, stderr=stderr, exit_code=-1,
                                 error=f"signal: {_SIGNAL_TEXT.get(signal.Signals(-code), signal.Signals(-code).name)}",
                                 duration_ns=duration)
        return CommandResult(argv=list(argv), stdout=stdout, stderr=stderr, exit_code=code, duration_ns=duration)

    @staticmethod
    def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                proc.kill()
            except ProcessLookupError:
                pass
