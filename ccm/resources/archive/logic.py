"""Archive decision logic: pure ``plan`` and ``is_desired`` over an observed state.

Actions, in the order they run: ``download`` (verify, then atomically store the archive),
``extract`` (into ``extract_parent``), ``cleanup`` (delete the archive), ``chown`` (fix
the archive's owner/group when nothing is downloaded), ``remove`` (ensure absent).
"""
from __future__ import annotations


from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.ownership import group_matches, owner_matches
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, List, Mapping, Optional, Tuple


def _want_checksum(props: Properties) -> str:
    return (props.get("checksum") or "").lower()


def ownership_problem(props: Properties, meta: Mapping[str, Any]) -> str:
    if not owner_matches(meta.get("owner", ""), props.get("owner")):
        return f"owner mismatch: state={meta.get('owner', '')} requested={props.get('owner')}"
    if not group_matches(meta.get("group", ""), props.get("group")):
        return f"group mismatch: state={meta.get('group', '')} requested={props.get('group')}"
    return ""


class ArchiveProvider(Protocol):
    """What an archive provider (``http``) offers this logic; failures raise ``ProviderError``.

    ``download`` verifies the checksum before the archive is atomically stored and returns
    the bytes written.
    """

    name: str

    def status(self, path: str, creates: Optional[str] = None) -> ResourceState: ...

    def download(self, path: str, url: str, *, checksum: Optional[str], username: str, password: str,
                 headers: Mapping[str, str], owner: str, group: str) -> int: ...

    def extract(self, path: str, parent: str, *, owner: str, group: str,
                limits: Optional[Mapping[str, int]] = None) -> None: ...

    def remove(self, path: str) -> None: ...

    def set_ownership(self, path: str, owner: str, group: str) -> None: ...


class ArchiveLogic(TypeLogic[ArchiveProvider]):
    def status(self, provider: ArchiveProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        return provider.status(props.name, props.get("creates") or None)

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        meta = state.metadata
        exists = state.ensure == "present"
        if props.ensure == "absent":
            return (True, "") if not exists else (False, f"archive still exists (ensure={state.ensure})")
        creates = props.get("creates")
        if creates and not meta.get("creates_exists"):
            return False, f"creates path missing: {creates}"
        if props.get("cleanup"):
            if not creates and exists:
                return False, "archive file still present despite cleanup=true"
        elif not exists:
            return False, "archive file missing"
        if exists:
            problem = ownership_problem(props, meta)
            if problem:
                return False, problem
            want = _want_checksum(props)
            if want and meta.get("checksum", "") != want:
                return False, f"checksum mismatch: state={meta.get('checksum', '')} requested={want}"
        return True, ""

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        ok, reason = self.is_desired(props, state)
        if ok:
            return Plan()
        exists = state.ensure == "present"
        if props.ensure == "absent":
            return Plan(("remove",), "Would have removed", reason=reason)
        meta = state.metadata
        actions: List[str] = []
        messages: List[str] = []
        want = _want_checksum(props)
        have_valid = exists and bool(want) and meta.get("checksum", "") == want
        forced = False
        if not have_valid:
            actions.append("download")
            messages.append("Would have downloaded")
            forced = True
        if props.get("extract_parent") and (forced or not meta.get("creates_exists")):
            actions.append("extract")
            messages.append("Would have extracted")
        if props.get("cleanup"):
            actions.append("cleanup")
            messages.append("Would have cleaned up")
        elif not forced and exists and ownership_problem(props, meta):
            actions.append("chown")
            messages.append("Would have updated ownership")
        return Plan(tuple(actions), ". ".join(messages), reason=reason)

    def act(self, provider: ArchiveProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> Optional[int]:
        name = props.name
        downloaded = None
        for action in plan.actions:
            if action == "remove":
                provider.remove(name)
            elif action == "download":
                downloaded = provider.download(
                    name, props.get("url"), checksum=_want_checksum(props) or None,
                    username=props.get("username") or "", password=props.get("password") or "",
                    headers=props.get("headers") or {}, owner=props.get("owner"), group=props.get("group"))
            elif action == "extract":
                from ccm.resources.archive import LIMIT_FIELDS

                limits = {attr: props.get(key) for key, attr in LIMIT_FIELDS.items() if props.get(key)}
                provider.extract(name, props.get("extract_parent"), owner=props.get("owner"),
                                 group=props.get("group"), limits=limits)
            elif action == "cleanup":
                provider.remove(name)
            elif action == "chown":
                provider.set_ownership(name, props.get("owner"), props.get("group"))
        return downloaded

    def changed(self, plan: Plan, before: Any, after: Any) -> bool:
        return bool(plan.actions)
