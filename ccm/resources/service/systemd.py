"""systemd provider for the service type.

What: reads services with ``systemctl show --property=Id,LoadState,ActiveState,
UnitFileState,NeedDaemonReload`` and changes them with ``systemctl <verb> --system <unit>``.
Guarantees: every call goes through the injected runner under the global service lock
(one hold per operation); only chosen when systemd is PID 1 (a ``systemctl`` binary in a
container without systemd cannot manage anything).

Status: in a run with several services (a run cache, ``ccm.model.provider.RunCache``) one
``systemctl show`` answers for every unit of the run; alone, the same ``show`` for the one
unit. After a change the run cache is dropped (an action may start or stop other units),
and ``show`` costs systemd time per unit (it loads a stopped unit to answer): asking
every unit again after each change made a first run of 30 changing units 5x slower
than one ``show`` per unit. So after a change the next ``show`` covers the unit asked
about, and each further one in the same stretch without changes twice as many of the
units that follow it (1, 2, 4, ...): a steady run asks once, a run changing every unit
once per unit, a mixed one a few times per change. ``show`` prints properties in
systemd's order (not the requested one) and one
block per unit in argument order, so blocks are matched by position and checked by
``Id``. ``UnitFileState`` gives the enablement where it is known to equal ``is-enabled``'s
answer; for anything else (an alias name, a SysV script, a generated or transient unit)
``systemctl is-enabled --system <unit>`` is asked per unit (never batched: with several
units its lines may come back out of order). A unit systemd does not know
(``LoadState=not-found``) fails with "service X not found". ``daemon-reload`` runs only
when ``NeedDaemonReload=yes`` (a loaded unit's file or drop-in changed on disk), once per
run for all of them (the batch is asked again afterwards); systemd 252 loads a new unit
file by itself. Start/stop/restart/enable/disable exit codes are not trusted: the flow
re-reads the status (the cache is dropped after every action), and a failing command's
last stderr line explains a desired-state error.
"""
from __future__ import annotations


from ccm.clock import now_ns
from ccm.locks import service_lock
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import Manageable, ProviderFactory, RunCache
from ccm.model.resource import Properties
from ccm.model.runner import CommandResult
from ccm.resources.service import host
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence

ACTIVE = {"active": True, "reloading": True, "inactive": False, "failed": False, "activating": False,
          "deactivating": False}
ENABLED = {
    "enabled": True, "enabled-runtime": True, "alias": True, "static": True, "indirect": True,
    "generated": True, "transient": True,
    "linked": False, "linked-runtime": False, "masked": False, "masked-runtime": False, "disabled": False,
}
# UnitFileState values that equal what `is-enabled` answers for the same unit name
TRUSTED_FILE_STATES = ("enabled", "enabled-runtime", "disabled", "static", "indirect", "linked",
                       "linked-runtime", "masked", "masked-runtime")
PROPERTIES = "Id,LoadState,ActiveState,UnitFileState,NeedDaemonReload"
UNIT_SUFFIXES = (".service", ".socket", ".timer", ".target", ".mount", ".path", ".slice", ".scope",
                 ".automount", ".swap", ".device")
CACHE_KEY = "systemd:show"
MAX_WINDOW_DOUBLINGS = 16


# --- parsing (pure) ------------------------------------------------------------------------

def parse_is_active(stdout: str) -> bool:
    word = stdout.strip("\r\n")
    if word in ACTIVE:
        return ACTIVE[word]
    raise ProviderError(f"invalid systemctl is-active output: {stdout}")


def parse_is_enabled(service: str, stdout: str, exit_code: int = 0, stderr: str = "") -> bool:
    word = stdout.strip("\r\n")
    if word in ENABLED:
        return ENABLED[word]
    if word == "not-found" or (not word and "No such file or directory" in stderr):
        raise ProviderError(f"service {service} not found")
    tail = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    raise ProviderError(f"invalid systemctl is-enabled output: {stdout}", detail=tail[-1] if tail else None)


def unit_id(service: str) -> str:
    """The unit systemctl means by ``service`` (``nginx`` -> ``nginx.service``)."""
    return service if service.endswith(UNIT_SUFFIXES) else service + ".service"


def parse_show(stdout: str, units: Sequence[str]) -> Optional[Dict[str, Dict[str, str]]]:
    """``systemctl show`` of ``units`` -> unit -> properties; None if the blocks do not line up."""
    blocks = stdout.strip("\n").split("\n\n") if stdout.strip() else []
    if len(blocks) != len(units):
        return None
    # an alias name's block carries the real unit's Id: status() then asks is-enabled
    return {unit: dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
            for unit, block in zip(units, blocks)}


def needs_reload(stdout: str) -> bool:
    for line in stdout.splitlines():
        if line.strip() == "NeedDaemonReload=yes":
            return True
    return False


def command_problem(res: CommandResult) -> Optional[str]:
    """systemctl explains a failure on its last stderr line (the rest of the output follows it)."""
    return host.command_problem(res, host.last_line(res.stderr))


# --- the run's show batches --------------------------------------------------------------

class _Shown:
    """What ``show`` answered since the run cache was last dropped, and how often it was asked."""

    def __init__(self) -> None:
        self.units: Dict[str, Dict[str, str]] = {}
        self.queries = 0


class _Run:
    """Per run (outlives the cache's drops: ``RunCache.run_state``): whether its first batch was asked."""

    def __init__(self) -> None:
        self.asked = False


RUN_KEY = "systemd:run"


# --- provider ------------------------------------------------------------------------------

class SystemdProvider:
    name = "systemd"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None):
        self.runner = runner
        self.log = log
        self.lock = lock or service_lock()
        self.cache: Optional[RunCache] = None

    def use_run_cache(self, cache: RunCache) -> None:   # ccm.model.provider.Prefetching
        self.cache = cache

    def _systemctl(self, *args: str) -> CommandResult:
        res: CommandResult = self.runner.run(["systemctl"] + list(args))
        return res

    def _checked(self, *args: str) -> CommandResult:
        res = self._systemctl(*args)
        if res.error:
            raise ProviderError(f"systemctl {' '.join(args)}: {res.error}")
        return res

    def _show(self, units: Sequence[str]) -> Optional[Dict[str, Dict[str, str]]]:
        res = self._checked("show", f"--property={PROPERTIES}", *units)
        if res.exit_code != 0:
            raise ProviderError(f"systemctl show {' '.join(units)} exited {res.exit_code}",
                                detail=res.detail_with_output(host.last_line(res.stderr) or None))
        return parse_show(res.stdout, units)

    def _properties(self, service: str) -> Dict[str, str]:
        batch = None
        if self.cache is not None:
            units = list(self.cache.expected("service"))
            if len(units) > 1 and service in units:
                batch = self._batched(units, service)
        if batch is None or service not in batch:
            batch = self._show([service])
        if batch is None or service not in batch:
            raise ProviderError(f"could not parse systemctl show output for {service}")
        return batch[service]

    def _batched(self, units: List[str], service: str) -> Dict[str, Dict[str, str]]:
        """The answers of this stretch of the run (since the last change), asking
        ``systemctl show`` once more when ``service`` is not among them yet."""
        assert self.cache is not None
        shown: _Shown = self.cache.load(CACHE_KEY, _Shown)   # dropped with the cache after any change
        if service not in shown.units:
            run: _Run = self.cache.run_state(RUN_KEY, _Run)
            if not run.asked:   # the run's first status (or the first after a daemon-reload): every unit
                window = units
            else:
                start = units.index(service)
                window = units[start:start + (1 << min(shown.queries, MAX_WINDOW_DOUBLINGS))]
            run.asked = True
            shown.queries += 1
            shown.units.update(self._show(window) or {})
        return shown.units

    def _invalidate(self) -> None:
        if self.cache is not None:
            self.cache.invalidate()

    def status(self, service: str) -> ResourceState:
        with self.lock.hold(f"systemctl status {service}"):
            props = self._properties(service)
            if props.get("NeedDaemonReload") == "yes":
                res = self._systemctl("daemon-reload")
                if res.error:   # could not start (exit codes are ignored, as upstream)
                    raise ProviderError(f"systemctl daemon-reload: {res.error}")
                self._invalidate()   # every unit's answer may differ now: ask the batch again
                if self.cache is not None:
                    self.cache.run_state(RUN_KEY, _Run).asked = False
                props = self._properties(service)
            if props.get("LoadState") == "not-found":
                raise ProviderError(f"service {service} not found",
                                    detail=f"systemd has no unit {props.get('Id') or unit_id(service)}")
            running = parse_is_active(props.get("ActiveState", ""))
            file_state = props.get("UnitFileState", "")
            if file_state in TRUSTED_FILE_STATES and props.get("Id") == unit_id(service):
                enabled = ENABLED[file_state]
            else:
                res = self._checked("is-enabled", "--system", service)
                enabled = parse_is_enabled(service, res.stdout, res.exit_code, res.stderr)
        meta = {"name": service, "provider": self.name, "enabled": enabled, "running": running}
        return ResourceState(type="service", name=service, ensure="running" if running else "stopped",
                             extra={"metadata": meta}, timestamp_ns=now_ns())

    def _act(self, verb: str, service: str) -> Optional[str]:
        # no reload check here: the flow always reads the status (which does it) first
        with self.lock.hold(f"systemctl {verb} {service}"):
            try:
                return command_problem(self._systemctl(verb, "--system", service))
            finally:
                self._invalidate()

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

class SystemdFactory(ProviderFactory):
    type_name = "service"
    name = "systemd"
    prefetches = True   # SystemdProvider.use_run_cache

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(host.which("systemctl") is not None and host.systemd_is_pid1(), 1)

    def new(self, runner: Any, log: Any) -> SystemdProvider:
        return SystemdProvider(runner, log)
