"""apt provider for the package type.

What: installs, upgrades, downgrades and removes Debian packages with ``apt-get``, reads
their state with ``dpkg-query`` and the installable version with ``apt-cache policy``.
Guarantees: every call goes through the injected runner with the non-interactive
environment (no debconf, apt-listbugs or apt-listchanges prompts; existing config files
kept), under the global package lock (one lock hold per operation). A failed
``apt-get`` names apt's own ``E:`` lines. In a run of several packages (a run cache, see
``ccm.model.provider.RunCache``), one ``dpkg-query -W`` answers the status of all of them,
and is queried again after any change. Not: a repository manager; never runs
``apt-get update``.
"""
from __future__ import annotations

from ccm.clock import now_ns
from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

from ccm.locks import package_lock
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import RunCache
from ccm.model.runner import CommandResult
from ccm.resources.package.selection import ToolsFactory, on_path

ENV: Dict[str, str] = {
    "DEBIAN_FRONTEND": "noninteractive",
    "APT_LISTBUGS_FRONTEND": "none",
    "APT_LISTCHANGES_FRONTEND": "none",
}
STATUS_FORMAT = "-f=${Package} ${Version} ${Architecture} ${db:Status-Status}"
QUERY_ALL = ("dpkg-query", "-W", STATUS_FORMAT + "\n")
CACHE_KEY = "apt:dpkg-query"
INSTALL = ("apt-get", "install", "-y", "-q", "-o", "DPkg::Options::=--force-confold")
TOOLS = ("apt-get", "apt-cache", "apt-mark", "dpkg-query")
DEBIAN_FAMILIES = ("debian",)
NO_CANDIDATE = "(none)"


# --- parsing (pure) ------------------------------------------------------------------------

def parse_dpkg_query(pkg: str, stdout: str, exit_code: int) -> ResourceState:
    """``dpkg-query -W -f=...`` output -> state; anything but ``installed`` is absent."""
    fields = stdout.strip().split(" ")
    status = fields[3] if len(fields) == 4 else ""
    if exit_code != 0 or len(fields) != 4 or status != "installed":
        meta = {"name": pkg, "version": "absent", "provider": "apt",
                "extended": {"status": status or "unknown"}}
        return ResourceState(type="package", name=pkg, ensure="absent", extra={"metadata": meta}, timestamp_ns=now_ns())
    meta = {"name": fields[0], "version": fields[1], "arch": fields[2], "provider": "apt",
            "extended": {"status": status}}
    return ResourceState(type="package", name=pkg, ensure=fields[1], extra={"metadata": meta}, timestamp_ns=now_ns())


def parse_dpkg_query_all(stdout: str) -> Dict[str, List[str]]:
    """``dpkg-query -W`` of every package dpkg knows, one line each, indexed by package name."""
    index: Dict[str, List[str]] = {}
    for line in stdout.splitlines():
        name = line.split(" ", 1)[0]
        if name:
            index.setdefault(name, []).append(line)
    return index


def parse_candidate(pkg: str, stdout: str) -> str:
    """The ``Candidate:`` value of ``apt-cache policy`` (may be ``(none)``)."""
    for line in stdout.splitlines():
        text = line.strip()
        if text.startswith("Candidate:"):
            return text[len("Candidate:"):].strip()
    raise ProviderError(f"could not find Candidate: line in apt-cache policy output for {pkg}",
                        detail="apt does not know this package" if not stdout.strip() else None)


def parse_version_table(stdout: str) -> List[str]:
    """Every version listed in the ``Version table:`` of ``apt-cache policy``."""
    versions: List[str] = []
    in_table = False
    for line in stdout.splitlines():
        if line.strip().startswith("Version table:"):
            in_table = True
            continue
        if not in_table or not line.strip():
            continue
        text = line.strip()
        if text.startswith("***"):
            text = text[3:].strip()
        parts = text.split()
        # version lines are "<version> <priority>", source lines "<priority> <url ...>"
        if len(parts) == 2 and parts[1].isdigit() and not parts[0].isdigit():
            versions.append(parts[0])
    return versions


def apt_errors(stderr: str) -> str:
    """apt's own error lines (``E: ...``), else its last non-empty stderr line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("E:")]
    if errors:
        return "; ".join(errors)
    return lines[-1] if lines else ""


# --- provider ------------------------------------------------------------------------------

class AptProvider:
    name = "apt"
    scheme = "deb"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None):
        self.runner = runner
        self.log = log
        self.lock = lock or package_lock()
        self.cache: Optional[RunCache] = None

    def use_run_cache(self, cache: RunCache) -> None:   # ccm.model.provider.Prefetching
        self.cache = cache

    def _run(self, argv: List[str]) -> CommandResult:
        res: CommandResult = self.runner.run(argv, env=dict(ENV))
        if res.error:   # could not start, timed out or killed
            raise ProviderError(f"{argv[0]}: {res.error}", detail=apt_errors(res.stderr) or None)
        return res

    def _changing(self, argv: List[str]) -> CommandResult:
        try:
            return self._run(argv)
        finally:   # whatever happened, dpkg's database may differ now
            if self.cache is not None:
                self.cache.invalidate()

    def _query_all(self) -> Optional[Dict[str, List[str]]]:
        with self.lock.hold("dpkg-query -W"):
            res = self.runner.run(list(QUERY_ALL), env=dict(ENV))
        return parse_dpkg_query_all(res.stdout) if res.ok else None   # None: ask per package

    def status(self, pkg: str) -> ResourceState:
        if self.cache is not None and ":" not in pkg and len(self.cache.expected("package")) > 1:
            index = self.cache.load(CACHE_KEY, self._query_all)
            lines = index.get(pkg) if index is not None else None
            if lines is not None and len(lines) == 1:
                return parse_dpkg_query(pkg, lines[0], 0)
            # unknown to dpkg, or one line per architecture: dpkg-query <pkg> decides
        with self.lock.hold(f"dpkg-query {pkg}"):
            res = self._run(["dpkg-query", "-W", STATUS_FORMAT, pkg])
        return parse_dpkg_query(pkg, res.stdout, res.exit_code)

    def policy(self, pkg: str) -> str:
        with self.lock.hold(f"apt-cache policy {pkg}"):
            res = self._run(["apt-cache", "policy", pkg])
        if res.exit_code != 0:
            raise ProviderError(f"apt-cache policy {pkg} exited {res.exit_code}", detail=apt_errors(res.stderr) or None)
        return res.stdout

    def available(self, pkg: str) -> Optional[str]:
        candidate = parse_candidate(pkg, self.policy(pkg))
        return None if candidate == NO_CANDIDATE else candidate

    def _candidate(self, pkg: str) -> str:
        candidate = parse_candidate(pkg, self.policy(pkg))
        if candidate == NO_CANDIDATE or not candidate:
            raise ProviderError(f'package "{pkg}" has no installation candidate',
                                detail="apt-cache policy reports Candidate: (none)")
        return candidate

    def install(self, pkg: str, ensure: str) -> None:
        with self.lock.hold(f"apt-get install {pkg} ({ensure})"):
            if ensure == "present":
                argv = list(INSTALL) + [pkg]
            elif ensure == "latest":
                argv = list(INSTALL) + [f"{pkg}={self._candidate(pkg)}"]
            else:
                argv = list(INSTALL) + ["--allow-downgrades", f"{pkg}={ensure}"]
            res = self._changing(argv)
        if res.exit_code != 0:
            detail = res.detail_with_output(apt_errors(res.stderr) or None)
            raise ProviderError(f'failed to install package "{pkg}", apt-get exited {res.exit_code}', detail=detail)

    def upgrade(self, pkg: str, ensure: str) -> None:
        self.install(pkg, ensure)

    def downgrade(self, pkg: str, version: str) -> None:
        self.install(pkg, version)

    def uninstall(self, pkg: str) -> None:
        with self.lock.hold(f"apt-get remove {pkg}"):
            res = self._changing(["apt-get", "-q", "-y", "remove", pkg])
        if res.exit_code != 0:
            raise ProviderError(f"failed to uninstall {pkg}", detail=res.detail_with_output(apt_errors(res.stderr) or None))


# --- factory -------------------------------------------------------------------------------

class AptFactory(ToolsFactory):
    name = "apt"
    tools = TOOLS
    families = DEBIAN_FAMILIES

    def found(self, tool: str) -> bool:
        return on_path(tool)   # this module's name for it (tests stand in for PATH here)

    def new(self, runner: Any, log: Any) -> AptProvider:
        return AptProvider(runner, log)
