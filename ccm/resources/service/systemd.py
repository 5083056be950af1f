"""systemd provider for the service type.

What: reads and changes services with ``systemctl ... --system <unit>``.
Guarantees: every call goes through the injected runner under the global service lock
(one hold per operation); only chosen when systemd is PID 1 (a ``systemctl`` binary in a
container without systemd cannot manage anything). ``daemon-reload`` runs once per run
(per runner, i.e. per manager) at the first status read, and after that only when
``systemctl show --property=NeedDaemonReload <unit>`` says ``yes`` (a unit file or
drop-in written earlier in the run); upstream reloads before every operation. Status is
always read before acting, so actions do not check again. Start/stop/restart/enable/
disable exit codes are not trusted: the flow re-reads the status, and a failing
command's last stderr line explains a desired-state error.
"""
from __future__ import annotations

import weakref
from typing import Any, Mapping, Optional

from ccm.locks import service_lock
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import Manageable
from ccm.model.resource import Properties
from ccm.model.runner import CommandResult
from ccm.resources.service import host

ACTIVE = {"active": True, "inactive": False, "failed": False, "activating": False}
ENABLED = {
    "enabled": True, "enabled-runtime": True, "alias": True, "static": True, "indirect": True,
    "generated": True, "transient": True,
    "linked": False, "linked-runtime": False, "masked": False, "masked-runtime": False, "disabled": False,
}


# --- parsing (pure) ------------------------------------------------------------------------

def parse_is_active(stdout: str) -> bool:
    word = stdout.strip("\r\n")
    if word in ACTIVE:
        return ACTIVE[word]
    raise ProviderError(f"invalid systemctl is-active output: {stdout}")


def parse_is_enabled(service: str, stdout: str) -> bool:
    word = stdout.strip("\r\n")
    if word in ENABLED:
        return ENABLED[word]
    if word == "not-found":
        raise ProviderError(f"service {service} not found")
    raise ProviderError(f"invalid systemctl is-enabled output: {stdout}")


def needs_reload(stdout: str) -> bool:
    for line in stdout.splitlines():
        if line.strip() == "NeedDaemonReload=yes":
            return True
    return False


def command_problem(res: CommandResult) -> Optional[str]:
    if res.error:
        return f"{' '.join(res.argv)}: {res.error}"
    if res.exit_code != 0:
        lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        detail = res.detail_with_output(lines[-1] if lines else None)
        return f"{' '.join(res.argv)} exited {res.exit_code}" + (f": {detail}" if detail else "")
    return None


# --- provider ------------------------------------------------------------------------------

class SystemdProvider:
    name = "systemd"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None, reloaded: Optional[Any] = None):
        self.runner = runner
        self.log = log
        self.lock = lock or service_lock()
        # runner -> True once daemon-reload ran for it (shared through the factory)
        self._reloaded = reloaded if reloaded is not None else weakref.WeakKeyDictionary()

    def _systemctl(self, *args: str) -> CommandResult:
        return self.runner.run(["systemctl"] + list(args))

    def _checked(self, *args: str) -> CommandResult:
        res = self._systemctl(*args)
        if res.error:
            raise ProviderError(f"systemctl {' '.join(args)}: {res.error}")
        return res

    def _reload_if_needed(self, service: str) -> None:
        try:
            first = self.runner not in self._reloaded
        except TypeError:   # a runner that cannot be weakly referenced: reload every time
            first = True
        if not first:
            shown = self._systemctl("show", "--property=NeedDaemonReload", service)
            if shown.error or not needs_reload(shown.stdout):
                return
        res = self._systemctl("daemon-reload")
        if res.error:   # could not start (exit codes are ignored, as upstream)
            raise ProviderError(f"systemctl daemon-reload: {res.error}")
        try:
            self._reloaded[self.runner] = True
        except TypeError:
            pass

    def status(self, service: str) -> ResourceState:
        with self.lock.hold(f"systemctl status {service}"):
            self._reload_if_needed(service)
            running = parse_is_active(self._checked("is-active", "--system", service).stdout)
            enabled = parse_is_enabled(service, self._checked("is-enabled", "--system", service).stdout)
        meta = {"name": service, "provider": self.name, "enabled": enabled, "running": running}
        return ResourceState(type="service", name=service, ensure="running" if running else "stopped",
                             extra={"metadata": meta})

    def _act(self, verb: str, service: str) -> Optional[str]:
        # no reload check here: the flow always reads the status (which does it) first
        with self.lock.hold(f"systemctl {verb} {service}"):
            return command_problem(self._systemctl(verb, "--system", service))

    def start(self, service: str) -> Optional[str]:
        return self._act("start", service)

    def stop(self, service: str) -> Optional[str]:
        return self._act("stop", service)

    def restart(self, service: str) -> Optional[str]:
        return self._act("restart", service)

    def enable(self, service: str) -> Optional[str]:
        return self._act("enable", service)

    def disable(self, service: str) -> Optional[str]:
        return self._act("disable", service)


# --- factory -------------------------------------------------------------------------------

class SystemdFactory:
    type_name = "service"
    name = "systemd"

    def __init__(self) -> None:
        self._reloaded: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(host.which("systemctl") is not None and host.systemd_is_pid1(), 1)

    def new(self, runner: Any, log: Any) -> SystemdProvider:
        return SystemdProvider(runner, log, reloaded=self._reloaded)
