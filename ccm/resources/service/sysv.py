"""SysV/LSB init-script provider for the service type (hosts where systemd is not PID 1:
containers, chroots, minimal and older hosts).

What: runs ``/etc/init.d/<svc> start|stop|restart|status`` and manages boot enablement
with ``update-rc.d`` (Debian family) or ``chkconfig`` (Red Hat family), whichever the host
has. Running state follows the LSB exit codes of ``status``: 0 running; 1 (dead, pid
file left), 2 (dead, lock file left) and 3 stopped; anything else is an error, since
"unknown" must not be mistaken for "stopped". Enabled = a start link ``S<NN><svc>`` in
``/etc/rc{S,2,3,4,5}.d`` (or ``/etc/rc.d/rcN.d``).

Status is asked per script, never batched (no run-cache prefetch, unlike apt, dnf and
systemd): each init script's own ``status`` is the only truth about its daemon (pid
files, lock files and checks differ per script), and there is no one command that
answers for several.

Guarantees: every command goes through the injected runner under the global service
lock, with a timeout (an init script that leaves its daemon attached to our pipes would
otherwise block the run forever; on expiry the script's process group is killed and the
resource fails with the timeout). Not: a process supervisor; no systemd, OpenRC or
upstart support.
"""
from __future__ import annotations

import os
import re

from ccm.clock import now_ns
from ccm.locks import service_lock
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.resource import Properties
from ccm.model.runner import CommandResult
from ccm.resources.service import host
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional, Sequence

INIT_DIR = "/etc/init.d"
RC_ROOT = "/etc"
BOOT_RUNLEVELS = ("S", "2", "3", "4", "5")
SCRIPT_TIMEOUT = 120.0
LSB_RUNNING = 0
LSB_STOPPED = (1, 2, 3)


def start_links(rc_root: str, service: str, runlevels: Sequence[str] = BOOT_RUNLEVELS) -> List[str]:
    """The ``S<NN><service>`` links of the boot runlevels, in both common layouts."""
    pattern = re.compile(r"^S\d{2}" + re.escape(service) + r"$")
    found: List[str] = []
    seen = set()
    for level in runlevels:
        for d in (os.path.join(rc_root, f"rc{level}.d"), os.path.join(rc_root, "rc.d", f"rc{level}.d")):
            try:
                real = os.path.realpath(d)
                if real in seen or not os.path.isdir(d):
                    continue
                seen.add(real)
                found.extend(os.path.join(d, n) for n in sorted(os.listdir(d)) if pattern.match(n))
            except OSError:
                continue
    return found


def _tail(res: CommandResult) -> str:
    return host.last_line(res.stderr + "\n" + res.stdout)


def command_problem(res: CommandResult) -> Optional[str]:
    """An init script's last line of output explains a failure (the rest follows it)."""
    return host.command_problem(res, _tail(res))


class SysvProvider:
    name = "sysv"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None, *, init_dir: str = INIT_DIR,
                 rc_root: str = RC_ROOT, update_rc_d: Optional[str] = "", chkconfig: Optional[str] = "",
                 timeout: float = SCRIPT_TIMEOUT):
        self.runner = runner
        self.log = log
        self.lock = lock or service_lock()
        self.init_dir = init_dir
        self.rc_root = rc_root
        # "" = look it up on PATH; None = not available
        self.update_rc_d = ("update-rc.d" if host.which("update-rc.d") else None) if update_rc_d == "" else update_rc_d
        self.chkconfig = ("chkconfig" if host.which("chkconfig") else None) if chkconfig == "" else chkconfig
        self.timeout = timeout

    def script(self, service: str) -> str:
        path = os.path.join(self.init_dir, service)
        if not os.path.isfile(path):
            raise ProviderError(f"service {service} not found: {path} does not exist")
        if not os.access(path, os.X_OK):
            raise ProviderError(f"service {service}: {path} is not executable")
        return path

    def _run(self, argv: List[str]) -> CommandResult:
        res: CommandResult = self.runner.run(argv, timeout=self.timeout)
        return res

    def is_enabled(self, service: str) -> bool:
        return bool(start_links(self.rc_root, service))

    # No batching here (unlike apt, dnf and systemd): each init script's own `status` is
    # the truth about its daemon and there is no command that answers for several, so
    # every service resource runs its script once per status read.
    def status(self, service: str) -> ResourceState:
        with self.lock.hold(f"{self.init_dir}/{service} status"):
            script = self.script(service)
            res = self._run([script, "status"])
        if res.error:
            raise ProviderError(f"{script} status: {res.error}")
        if res.exit_code == LSB_RUNNING:
            running = True
        elif res.exit_code in LSB_STOPPED:
            running = False
        else:
            detail = res.detail_with_output(_tail(res) or None)
            raise ProviderError(f"cannot tell whether {service} is running: {script} status exited {res.exit_code}"
                                + (f": {detail}" if detail else ""))
        meta = {"name": service, "provider": self.name, "enabled": self.is_enabled(service), "running": running}
        return ResourceState(type="service", name=service, ensure="running" if running else "stopped",
                             extra={"metadata": meta}, timestamp_ns=now_ns())

    def _script_action(self, verb: str, service: str) -> Optional[str]:
        with self.lock.hold(f"{self.init_dir}/{service} {verb}"):
            return command_problem(self._run([self.script(service), verb]))

    def start(self, service: str) -> Optional[str]:
        return self._script_action("start", service)

    def stop(self, service: str) -> Optional[str]:
        return self._script_action("stop", service)

    def restart(self, service: str) -> Optional[str]:
        return self._script_action("restart", service)

    def _commands(self, service: str, enable: bool) -> List[List[str]]:
        if self.update_rc_d:
            if enable:   # 'defaults' creates links if there are none, 'enable' turns K links into S links
                return [[self.update_rc_d, service, "defaults"], [self.update_rc_d, service, "enable"]]
            return [[self.update_rc_d, service, "disable"]]
        if self.chkconfig:
            if enable:
                return [[self.chkconfig, "--add", service], [self.chkconfig, service, "on"]]
            return [[self.chkconfig, service, "off"]]
        raise ProviderError(f"cannot {'enable' if enable else 'disable'} {service}: "
                            f"neither update-rc.d nor chkconfig is installed")

    def _boot(self, service: str, enable: bool) -> Optional[str]:
        with self.lock.hold(f"{'enable' if enable else 'disable'} {service}"):
            self.script(service)
            for argv in self._commands(service, enable):
                problem = command_problem(self._run(argv))
                if problem:
                    return problem
        return None

    def enable(self, service: str) -> Optional[str]:
        return self._boot(service, True)

    def disable(self, service: str) -> Optional[str]:
        return self._boot(service, False)


class SysvFactory(ProviderFactory):
    type_name = "service"
    name = "sysv"

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        # On a systemd host the init scripts are systemd's business (sysv-generator).
        return Manageable(os.path.isdir(INIT_DIR) and not host.systemd_is_pid1(), 1)

    def new(self, runner: Any, log: Any) -> SysvProvider:
        return SysvProvider(runner, log)
