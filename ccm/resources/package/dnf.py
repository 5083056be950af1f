"""dnf provider for the package type.

What: installs, upgrades, downgrades and removes RPM packages with ``dnf``, reads their
state with ``rpm -q``. Guarantees: every call goes through the injected runner (no extra
environment), under the global package lock (one hold per operation). ``latest`` on an
installed package asks ``dnf check-update`` first and runs ``dnf upgrade -y`` only when
something newer exists (upstream runs ``dnf install`` every time, which does not
upgrade on every dnf version). In a run of several packages (a run cache, see
``ccm.model.provider.RunCache``), one ``rpm -qa`` answers the status of all of them, and
is queried again after any change. Not: a repository manager.
"""
from __future__ import annotations

from ccm.clock import now_ns
from ccm.lazyre import LazyPattern

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

from ccm.locks import package_lock
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import RunCache
from ccm.model.runner import CommandResult
from ccm.resources.package.selection import ToolsFactory, on_path

QUERY_FORMAT = "%{NAME} %|EPOCH?{%{EPOCH}}:{0}| %{VERSION} %{RELEASE} %{ARCH}"
TOOLS = ("dnf", "rpm")
RPM_FAMILIES = ("rhel", "fedora", "amazon", "suse", "anolis", "neokylin")
QUERY_ALL = ("rpm", "-qa", "--queryformat", QUERY_FORMAT + "\n")
# name epoch version release arch: the whole output (rpm prints no newline after it);
# the numeric epoch keeps "package X is not installed" from ever parsing as a package
_RPM_LINE = LazyPattern(r"(\S+) (\d+) (\S+) (\S+) (\S+)")
_NOT_INSTALLED = LazyPattern(r"package \S+ is not installed\n?")
CHECK_UPDATE_AVAILABLE = 100   # dnf check-update: 100 = updates available, 0 = none
CACHE_KEY = "dnf:rpm-qa"


# --- parsing (pure) ------------------------------------------------------------------------

def absent_state(pkg: str) -> ResourceState:
    meta = {"name": pkg, "version": "absent", "provider": "dnf", "extended": {}}
    return ResourceState(type="package", name=pkg, ensure="absent", extra={"metadata": meta}, timestamp_ns=now_ns())


def parse_rpm_q(pkg: str, stdout: str, exit_code: int, stderr: str = "") -> ResourceState:
    """``rpm -q <pkg> --queryformat QUERY_FORMAT`` -> state; only rpm's own "not installed" is absent."""
    if exit_code != 0:
        if exit_code == 1 and _NOT_INSTALLED.fullmatch(stdout):
            return absent_state(pkg)
        tail = [ln.strip() for ln in (stderr or stdout).splitlines() if ln.strip()]
        raise ProviderError(f"rpm -q {pkg} exited {exit_code}", detail=tail[-1] if tail else None)
    m = _RPM_LINE.fullmatch(stdout)
    if not m:
        raise ProviderError(f"failed to parse rpm -q output for {pkg}", detail=repr(stdout[:200]))
    name, epoch, version, release, arch = m.groups()
    meta = {"name": name, "version": f"{version}-{release}", "arch": arch, "provider": "dnf",
            "extended": {"epoch": epoch, "release": release}}
    state = ResourceState(type="package", name=pkg, ensure=version, extra={"metadata": meta}, timestamp_ns=now_ns())
    state.internal["versions"] = [version, f"{version}-{release}", f"{epoch}:{version}-{release}"]
    return state


def parse_rpm_qa(stdout: str) -> Dict[str, List[str]]:
    """``rpm -qa`` lines indexed by every spelling ``rpm -q`` accepts for them: N, N.A,
    N-V, N-V-R, N-V-R.A and N-E:V-R (several lines under one key: multilib, or two versions)."""
    index: Dict[str, List[str]] = {}
    for line in stdout.splitlines():
        m = _RPM_LINE.fullmatch(line)
        if not m:
            continue
        n, e, v, r, a = m.groups()
        for key in {n, f"{n}.{a}", f"{n}-{v}", f"{n}-{v}-{r}", f"{n}-{v}-{r}.{a}", f"{n}-{e}:{v}-{r}"}:
            index.setdefault(key, []).append(line)
    return index


def parse_check_update(pkg: str, stdout: str) -> Optional[str]:
    """The newest ``[epoch:]version-release`` that ``dnf check-update <pkg>`` lists for ``pkg``."""
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].rsplit(".", 1)[0] == pkg:
            return parts[1]
    return None


def last_error_line(res: CommandResult) -> Optional[str]:
    lines = [ln.strip() for ln in (res.stderr or "").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("Error")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else None


# --- provider ------------------------------------------------------------------------------

class DnfProvider:
    name = "dnf"
    scheme = "rpm"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None):
        self.runner = runner
        self.log = log
        self.lock = lock or package_lock()
        self.cache: Optional[RunCache] = None

    def use_run_cache(self, cache: RunCache) -> None:   # ccm.model.provider.Prefetching
        self.cache = cache

    def _run(self, argv: List[str]) -> CommandResult:
        res: CommandResult = self.runner.run(argv)
        if res.error:   # could not start, timed out or killed
            raise ProviderError(f"{argv[0]}: {res.error}", detail=res.detail_with_output(last_error_line(res)))
        return res

    def _changing(self, argv: List[str]) -> CommandResult:
        try:
            return self._run(argv)
        finally:   # whatever happened, the rpmdb may differ now
            if self.cache is not None:
                self.cache.invalidate()

    def _query_all(self) -> Optional[Dict[str, List[str]]]:
        with self.lock.hold("rpm -qa"):
            res = self.runner.run(list(QUERY_ALL))
        return parse_rpm_qa(res.stdout) if res.ok else None   # None: ask per package

    def _rpm_q(self, pkg: str) -> ResourceState:
        res = self._run(["rpm", "-q", pkg, "--queryformat", QUERY_FORMAT])
        return parse_rpm_q(pkg, res.stdout, res.exit_code, res.stderr)

    def status(self, pkg: str) -> ResourceState:
        if self.cache is not None and len(self.cache.expected("package")) > 1:
            index = self.cache.load(CACHE_KEY, self._query_all)
            if index is not None:
                lines = index.get(pkg, [])
                if not lines:
                    return absent_state(pkg)
                if len(lines) == 1:
                    return parse_rpm_q(pkg, lines[0], 0)
                # several packages answer to this name: rpm -q decides, as without a cache
        with self.lock.hold(f"rpm -q {pkg}"):
            return self._rpm_q(pkg)

    def available(self, pkg: str) -> Optional[str]:
        with self.lock.hold(f"dnf check-update {pkg}"):
            res = self._run(["dnf", "-q", "check-update", pkg])
            if res.exit_code == CHECK_UPDATE_AVAILABLE:
                return parse_check_update(pkg, res.stdout)
            if res.exit_code == 0:   # nothing newer: the installed EVR is the latest
                state = self._rpm_q(pkg)
                return None if state.ensure == "absent" else state.internal["versions"][-1]
        if self.log is not None:
            self.log.warn("Could not determine the latest available version", package=pkg,
                          exitcode=res.exit_code, error=last_error_line(res) or "")
        return None

    def install(self, pkg: str, ensure: str) -> None:
        target = pkg if ensure in ("present", "latest") else f"{pkg}-{ensure}"
        with self.lock.hold(f"dnf install {target}"):
            res = self._changing(["dnf", "install", "-y", target])
        if res.exit_code != 0:
            raise ProviderError(f'failed to Install package "{pkg}", dnf exited {res.exit_code}',
                                detail=res.detail_with_output(last_error_line(res)))

    def upgrade(self, pkg: str, ensure: str) -> None:
        if ensure != "latest":
            self.install(pkg, ensure)
            return
        with self.lock.hold(f"dnf upgrade {pkg}"):
            res = self._changing(["dnf", "upgrade", "-y", pkg])
        if res.exit_code != 0:
            raise ProviderError(f'failed to Upgrade package "{pkg}", dnf exited {res.exit_code}',
                                detail=res.detail_with_output(last_error_line(res)))

    def downgrade(self, pkg: str, version: str) -> None:
        with self.lock.hold(f"dnf downgrade {pkg}-{version}"):
            res = self._changing(["dnf", "downgrade", "-y", f"{pkg}-{version}"])
        if res.exit_code != 0:
            raise ProviderError(f"failed to Downgrade {pkg}, dnf exited {res.exit_code}", detail=res.detail_with_output(last_error_line(res)))

    def uninstall(self, pkg: str) -> None:
        with self.lock.hold(f"dnf remove {pkg}"):
            res = self._changing(["dnf", "remove", "-y", pkg])
        if res.exit_code != 0:
            raise ProviderError(f"failed to Uninstall {pkg}, dnf exited {res.exit_code}", detail=res.detail_with_output(last_error_line(res)))


# --- factory -------------------------------------------------------------------------------

class DnfFactory(ToolsFactory):
    name = "dnf"
    tools = TOOLS
    families = RPM_FAMILIES

    def found(self, tool: str) -> bool:
        return on_path(tool)   # this module's name for it (tests stand in for PATH here)

    def new(self, runner: Any, log: Any) -> DnfProvider:
        return DnfProvider(runner, log)
