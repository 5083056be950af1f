"""File decision logic: pure ``plan`` and ``is_desired`` over what the provider observed.

``status`` asks the provider (``FileProvider``) for a ``FileObservation``: the file as it is,
with the desired content's bytes or digest and the desired owner and group looked up, so
the decision (``decide``) compares bytes' outcome, ids and mode bits, all from the
state's ``FileObservation``. Nothing here reads a file, the user database or a clock, and
nothing is remembered between resources.
"""
from __future__ import annotations

from ccm.model.errors import ResourceError
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.ownership import directory_mode, format_mode, known_mode, parse_mode
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    from ccm.resources.file.observation import FileObservation


def manages_content(props: Properties) -> bool:
    return props["content"] is not None or bool(props.get("source"))


def desired_mode(props: Properties) -> int:
    mode = parse_mode(props.get("mode"))
    return directory_mode(mode) if props.ensure == "directory" else mode


_STABLE = Plan()   # the plan of every resource in its desired state (a Plan is never changed once made)


def _text(data: Optional[bytes]) -> Optional[str]:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def content_change(path: str, old: Optional[bytes], new: Optional[bytes]) -> Dict[str, Any]:
    """What a content change from ``old`` to ``new`` would be (noop): ``added``/``removed``
    line counts and the unified ``diff`` text, or ``binary``; nothing when either side is
    unknown (None: absent, too large or not a regular file)."""
    import difflib

    if old is None or new is None:
        return {}
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return {"binary": True}
    diff = list(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True),
                                     fromfile=path, tofile=f"{path} (desired)"))
    added = sum(1 for ln in diff if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff if ln.startswith("-") and not ln.startswith("---"))
    return {"added": added, "removed": removed, "diff": diff}


def _is_sensitive(props: Properties, old: Optional[bytes], new: Optional[bytes]) -> bool:
    """Content that must never be shown: a redacted field, or either side holding a value
    of ``# @sensitive`` data (``ccm.redact`` registers them as the data is resolved). The
    whole diff is withheld then: its other lines may still hold an old secret from disk."""
    from ccm import redact

    for f in props.fields:
        if f.key in ("content", "source") and f.redact is not None:
            return True
    return any(data is not None and redact.holds_known(data.decode("utf-8", "replace")) for data in (new, old))


def _same_owner(state: FileObservation, owner: Any) -> bool:
    """The file's owner is ``owner``: the same name, or the id ``owner`` names here."""
    st = state.stat
    return state.owner == owner or (st is not None and state.uid is not None and st.st_uid == state.uid)


def _same_group(state: FileObservation, group: Any) -> bool:
    st = state.stat
    return state.group == group or (st is not None and state.gid is not None and st.st_gid == state.gid)


def _mode_bits(state: FileObservation) -> int:
    return -1 if state.stat is None else state.stat.st_mode & 0o777


def decide(props: Properties, state: FileObservation) -> Tuple[bool, str]:
    """Whether the file is as ``props`` want it, from the observed fields alone: the first
    difference, or none (``FileLogic.is_desired`` and ``plan``)."""
    values = props.values
    try:   # values.get(...) for each (what props.get gives): all are set on a resource that is not absent
        want, owner, group, given = values["ensure"] or "", values["owner"], values["group"], values["mode"]
    except KeyError:
        want, owner, group, given = (values.get("ensure") or "", values.get("owner"), values.get("group"),
                                     values.get("mode"))
    have = state.ensure
    if want == "absent":
        return (True, "") if have == "absent" else (False, f"file still exists (ensure={have})")
    if have != want:
        return False, f"ensure mismatch: state={have} requested={want}"
    if want != "directory" and not state.same and state.managed and not state.holds_desired():
        return False, (f"content checksum mismatch: state={state.file_checksum() or ''} "
                       f"requested={state.desired_checksum()}")
    st = state.stat
    assert st is not None   # present or a directory: stat
    if state.owner != owner and (state.uid is None or st.st_uid != state.uid):   # _same_owner, inline
        return False, f"owner mismatch: state={state.owner} requested={owner}"
    if state.group != group and (state.gid is None or st.st_gid != state.gid):
        return False, f"group mismatch: state={state.group} requested={group}"
    mode = known_mode((str, given)) if type(given) is str else None
    if mode is None:
        mode = parse_mode(given)
    if want == "directory":
        mode = directory_mode(mode)
    if st.st_mode & 0o777 != mode:
        return False, f"mode mismatch: state={state.mode_text()} requested={format_mode(mode)}"   # desired_mode
    return True, ""


class FileProvider(Protocol):
    """What a file provider (``posix``) offers this logic; failures raise ``ProviderError``.

    ``status`` reports the path as a ``FileObservation`` (``ccm.resources.file.observation``):
    ensure ``present``/``directory``/``absent``, metadata ``owner``, ``group``, ``mode``,
    ``mtime``, ``size`` and the content checksum; given the desired ``content`` or its
    ``checksum`` it may compare the file's bytes with them instead of hashing it, given
    the desired ``owner``/``group`` it looks up the ids they name. ``source_path``,
    ``read_source`` and ``read_bounded`` read the other files the logic needs; ``store``
    writes atomically.
    """

    name: str

    def status(self, path: str, content: Optional[bytes] = None, checksum: str = "", owner: Optional[str] = None,
               group: Optional[str] = None) -> FileObservation: ...

    def source_path(self, source: str, working_dir: Optional[str]) -> str: ...

    def read_source(self, source: str, working_dir: Optional[str]) -> Tuple[Optional[bytes], str]: ...

    def read_bounded(self, path: str, limit: int = ...) -> Optional[bytes]: ...

    def create_directory(self, path: str, mode: int, owner: str, group: str) -> None: ...

    def store(self, path: str, *, content: Optional[bytes], source: Optional[str], owner: str,
              group: str, mode: int) -> None: ...

    def set_attributes(self, path: str, owner: str, group: str, mode: int) -> None: ...

    def remove(self, path: str, *, force: bool = False) -> None: ...


_S_IFMT, _S_IFREG = 0o170000, 0o100000   # stat.S_IFMT / S_IFREG


def _refuse_special(props: Properties, state: FileObservation) -> None:
    """A FIFO, socket or device where content is to be written is never replaced by a
    regular file (a directory is not either): ``/dev/null`` must not become a file. Its
    attributes alone may still be managed; ``ensure: absent`` removes it."""
    if state.stat is not None and state.stat.st_mode & _S_IFMT != _S_IFREG:
        raise ResourceError(f"{props.name} exists and is not a regular file (a FIFO, socket or device); "
                            f"cannot manage its content (remove it first with ensure: absent)")


class FileLogic(TypeLogic[FileProvider]):
    stateless = True   # one instance serves every resource (TypeSpec.new_logic)

    def status(self, provider: FileProvider, props: Properties, ctx: ResourceContext) -> FileObservation:
        values = props.values
        try:   # values.get(...) for each: all are set on a file resource with content
            content, ensure, name, owner, group = (values["content"], values["ensure"], values["name"],
                                                   values["owner"], values["group"])
        except KeyError:
            content, ensure, name = values.get("content"), values.get("ensure"), values.get("name") or ""
            owner, group = values.get("owner"), values.get("group")
        if ensure == "absent":
            return provider.status(name)
        if ensure == "directory":
            return provider.status(name, None, "", owner, group)
        data: Optional[bytes] = None
        if content is not None:   # the provider compares the file with it instead of hashing the file
            data = content.encode() if type(content) is str else str(content).encode("utf-8")   # utf-8 either way
            state = provider.status(name, data, "", owner, group)
        elif not values.get("source"):
            return provider.status(name, None, "", owner, group)
        else:
            small, wanted = provider.read_source(values["source"], ctx.working_dir)
            state = provider.status(name, small, wanted, owner, group)   # compared with the bytes when small
        if (ctx.noop or ctx.diff) and state.ensure == "present" and not state.holds_desired():
            if data is None:
                data = provider.read_bounded(provider.source_path(values["source"], ctx.working_dir))
            old = provider.read_bounded(name)
            change = content_change(name, old, data)
            if "diff" in change and _is_sensitive(props, old, data):
                del change["diff"]
                change["sensitive"] = True
            state.internal["content_change"] = change
        return state

    def _attribute_changes(self, props: Properties, state: FileObservation) -> List[str]:
        changes: List[str] = []
        if state.ensure == props.ensure and not state.holds_desired():
            change = state.internal.get("content_change") or {}
            if change.get("binary"):
                changes.append("would change content (binary)")
            elif "added" in change:
                changes.append(f"would change content (+{change['added']} -{change['removed']} lines)")
            else:
                changes.append("would change content")
        if not _same_owner(state, props.get("owner")):
            changes.append(f"would change owner {state.owner or '?'} -> {props.get('owner')}")
        if not _same_group(state, props.get("group")):
            changes.append(f"would change group {state.group or '?'} -> {props.get('group')}")
        wanted_mode = desired_mode(props)
        if _mode_bits(state) != wanted_mode:
            changes.append(f"would change mode {state.mode_text() or '?'} -> {format_mode(wanted_mode)}")
        return changes

    def is_desired(self, props: Properties, state: FileObservation, acted: Any = None) -> Tuple[bool, str]:
        return decide(props, state)

    def verify(self, provider: FileProvider, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[Any, bool, str]:
        state, ok, reason = super().verify(provider, props, plan, acted, ctx)
        change = plan.params.get("content_change")
        if change:   # what changed, for --diff (the state read before the change had it)
            state.internal["content_change"] = change
        return state, ok, reason

    def plan(self, props: Properties, state: FileObservation, refresh: bool = False) -> Plan:
        ok, reason = decide(props, state)
        if ok:
            return _STABLE
        want, have = props.ensure, state.ensure
        if want == "directory":
            if have == "directory":
                return Plan(("mkdir",), ", ".join(self._attribute_changes(props, state)) or "would change attributes",
                            reason=reason)
            if have == "present":
                return Plan(("mkdir",), "would replace the file with a directory", reason=reason)
            return Plan(("mkdir",), "would create directory", reason=reason)
        if want == "absent":
            if have == "directory":
                msg = "would remove the directory recursively" if props.get("force") else "would remove the directory"
            else:
                msg = "would remove"
            return Plan(("remove",), msg, reason=reason)
        if have == "directory":
            raise ResourceError(f"{props.name} exists as a directory; cannot manage it as a file")
        if have == "present":
            changes = ", ".join(self._attribute_changes(props, state)) or "would change attributes"
            if manages_content(props):
                _refuse_special(props, state)
            change = state.internal.get("content_change")   # carried to the state after the change (verify)
            return Plan(("store",) if manages_content(props) else ("attributes",), changes, reason=reason,
                        params={"content_change": change} if change else None)
        if not manages_content(props):
            return Plan(("store",), "would create an empty file", reason=reason)
        return Plan(("store",), "would create", reason=reason)

    def act(self, provider: FileProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> None:
        action = plan.actions[0]
        name = props.name
        if action == "mkdir":
            provider.create_directory(name, desired_mode(props), props.get("owner"), props.get("group"))
        elif action == "remove":
            provider.remove(name, force=bool(props.get("force")))
        elif action == "attributes":
            provider.set_attributes(name, props.get("owner"), props.get("group"), desired_mode(props))
        elif action == "store":
            content: Optional[bytes] = None
            source: Optional[str] = None
            if props["content"] is not None:
                content = str(props["content"]).encode("utf-8")
            elif props.get("source"):
                source = provider.source_path(props.get("source"), ctx.working_dir)
            else:
                content = b""
            provider.store(name, content=content, source=source, owner=props.get("owner"),
                           group=props.get("group"), mode=desired_mode(props))
