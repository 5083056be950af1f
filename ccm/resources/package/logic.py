"""Package decision logic: pure ``plan`` and ``is_desired`` over an observed state.

The provider contract this logic drives is ``PackageProvider`` below.

Upstream gap closed here: ``latest`` on an installed package compares the installed
version with ``available()`` first and is stable (not changed, no package manager run)
when nothing newer exists.
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING, Protocol
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Tuple

from ccm.model.errors import ResourceError, ValidationError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.package import check_ensure, check_name


def comparator(scheme: str) -> Callable[[str, str], int]:
    """The version ordering of ``scheme`` (``deb``, ``rpm``, else generic), imported on
    first use: a steady run of ``present``/``absent`` packages compares nothing."""
    if scheme == "deb":
        from ccm.resources.package import debversion

        return debversion.compare
    if scheme == "rpm":
        from ccm.resources.package import rpmversion

        return rpmversion.compare
    from ccm.resources.package import genericversion

    return genericversion.compare


def installed_versions(state: ResourceState) -> List[str]:
    return list(state.internal.get("versions") or [state.ensure])


def observed_like(state: ResourceState, wanted: str) -> str:
    """The spelling of the installed version shaped like ``wanted`` (E:V-R, V-R or V)."""
    forms = installed_versions(state)
    if len(forms) == 1:
        return forms[0]
    if ":" in wanted:
        return forms[-1]
    if "-" in wanted and len(forms) > 1:
        return forms[1]
    return forms[0]


def compare_versions(scheme: str, a: str, b: str) -> int:
    try:
        return comparator(scheme)(a, b)
    except ValueError as exc:
        raise ResourceError(str(exc)) from None


class PackageProvider(Protocol):
    """What a package provider (``apt``, ``dnf``; fakes in the tests) offers this logic.

    ``status`` reports ensure = the installed version or ``absent`` and may list every
    spelling of that version a user could pin in ``internal["versions"]`` (dnf: ``V``,
    ``V-R``, ``E:V-R``); ``available`` is the version ``latest`` would install now (apt's
    ``Candidate``, dnf's newest update or the installed EVR), ``None`` if unknown;
    ``scheme`` is which version ordering applies (``"deb"``, ``"rpm"``, else generic).
    Changes raise ``ProviderError`` when they fail.
    """

    name: str
    scheme: str

    def status(self, pkg: str) -> ResourceState: ...

    def available(self, pkg: str) -> Optional[str]: ...

    def install(self, pkg: str, ensure: str) -> None: ...

    def upgrade(self, pkg: str, ensure: str) -> None: ...

    def downgrade(self, pkg: str, version: str) -> None: ...

    def uninstall(self, pkg: str) -> None: ...


class PackageLogic(TypeLogic[PackageProvider]):
    stable_means_no_action = True

    def status(self, provider: PackageProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        try:   # the rendered values, in case validation saw templates
            check_name(props.name)
            check_ensure(props.ensure)
        except ValidationError as exc:
            raise exc.with_resource(props.resource_id) from None
        state = provider.status(props.name)
        state.internal["scheme"] = provider.scheme
        if props.ensure == "latest" and state.ensure != "absent":
            state.internal["candidate"] = provider.available(props.name)
        return state

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        want, have = props.ensure, state.ensure
        if want == "present":
            return (have != "absent", "" if have != "absent" else "package is absent, expected present")
        if want == "absent":
            return (True, "") if have == "absent" else (False, f"package version {have} installed, expected absent")
        if want == "latest":
            return (have != "absent", "" if have != "absent" else "package is absent, expected latest")
        same = comparator("generic")
        if have != "absent" and any(same(v, want) == 0 for v in installed_versions(state)):
            return True, ""
        return False, f"version mismatch: state={have} requested={want}"

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        want, have = props.ensure, state.ensure
        scheme = state.internal.get("scheme", "generic")
        if want == "latest":
            if have == "absent":
                return Plan(("install",), "Would have installed latest", reason="package is absent, expected latest",
                            params={"ensure": "latest"})
            candidate: Optional[str] = state.internal.get("candidate")
            if candidate and compare_versions(scheme, observed_like(state, candidate), candidate) >= 0:
                return Plan()
            reason = f"installed {have}, available {candidate}" if candidate else f"installed {have}, available unknown"
            return Plan(("upgrade",), "Would have upgraded to latest", reason=reason, params={"ensure": "latest"})
        ok, reason = self.is_desired(props, state)
        if ok:
            return Plan()
        if want == "absent":
            return Plan(("uninstall",), "Would have uninstalled", reason=reason)
        if have == "absent":
            return Plan(("install",), f"Would have installed version {want}", reason=reason, params={"ensure": want})
        rc = compare_versions(scheme, observed_like(state, want), want)
        if rc == 0:
            return Plan()
        if rc < 0:
            return Plan(("upgrade",), f"Would have upgraded to {want}", reason=reason, params={"ensure": want})
        return Plan(("downgrade",), f"Would have downgraded to {want}", reason=reason, params={"ensure": want})

    def act(self, provider: PackageProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> None:
        action = plan.actions[0]
        name = props.name
        if action == "install":
            provider.install(name, plan.params["ensure"])
        elif action == "upgrade":
            provider.upgrade(name, plan.params["ensure"])
        elif action == "downgrade":
            provider.downgrade(name, plan.params["ensure"])
        elif action == "uninstall":
            provider.uninstall(name)
        else:  # pragma: no cover - plan() produces only the above
            raise ResourceError(f"unknown package action {action}")

    def changed(self, plan: Plan, before: ResourceState, after: ResourceState) -> bool:
        return before.ensure != after.ensure
