"""File decision logic: pure ``plan`` and ``is_desired`` over an observed state."""
from __future__ import annotations

import os
import stat

from ccm.digest import sha256_hex
from ccm.model.errors import ResourceError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.file import SAME
from ccm.resources.ownership import (directory_mode, format_mode, group_matches, id_generation, known_answer,
                                     known_same_group, known_same_user, owner_matches, parse_mode, remember_answer)
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple


def manages_content(props: Properties) -> bool:
    return props["content"] is not None or bool(props.get("source"))


def source_path(props: Properties, working_dir: Optional[str]) -> str:
    src = props.get("source")
    if not os.path.isabs(src):
        src = os.path.join(working_dir or os.getcwd(), src)
    return os.path.normpath(src)


def source_checksum(props: Properties, working_dir: Optional[str]) -> Optional[str]:
    """The sha256 of the ``source`` file (``status`` hashes ``content`` itself), None without one."""
    return source_bytes_and_checksum(props, working_dir)[1] if props.get("source") else None


SOURCE_COMPARED = 1 << 16   # a source up to this size is also handed to status, to compare the file with


def source_bytes_and_checksum(props: Properties, working_dir: Optional[str]) -> Tuple[Optional[bytes], str]:
    """The ``source`` file's bytes (None from ``SOURCE_COMPARED`` bytes on: not kept) and
    their sha256, read by plain reads (no buffered file object: a steady run reads every
    source)."""
    from ccm.digest import sha256
    from ccm.readfile import ReadError, open_regular

    path = source_path(props, working_dir)
    try:
        fd = open_regular(path, "source")
        try:
            size = os.fstat(fd).st_size
            h = sha256(size_hint=size)
            data: Optional[bytes] = os.read(fd, size + 1) if size < SOURCE_COMPARED else None
            if data is not None:
                h.update(data)
                if len(data) > size:   # it grew since the fstat: not compared
                    data = None
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                data = None
        finally:
            os.close(fd)
    except ReadError as exc:
        raise ResourceError(str(exc)) from None
    except OSError as exc:
        raise ResourceError(f"cannot read source {path}: {exc.strerror or exc}") from None
    return data, str(h.hexdigest())


def desired_mode(props: Properties) -> int:
    mode = parse_mode(props.get("mode"))
    return directory_mode(mode) if props.ensure == "directory" else mode


# desired_mode_text's answers for string modes (a run has a handful), of files and directories
_file_mode_texts: Dict[str, str] = {}
_dir_mode_texts: Dict[str, str] = {}


def desired_mode_text(props: Properties) -> str:
    """``format_mode(desired_mode(props))``, remembered for a string mode."""
    values = props.values
    mode = values.get("mode")
    texts = _dir_mode_texts if values.get("ensure") == "directory" else _file_mode_texts
    if type(mode) is str:
        text = texts.get(mode)
        if text is not None:
            return text
    text = format_mode(desired_mode(props))
    if type(mode) is str and len(texts) < 256:
        texts[mode] = text
    return text


_UNSET = object()
_STABLE = Plan()   # the plan of every resource in its desired state (a Plan is never changed once made)
DIFF_READ_LIMIT = 1 << 20     # files larger than this get no line counts or diff in noop


def _read_bounded(path: str, limit: int = DIFF_READ_LIMIT) -> Optional[bytes]:
    """A regular file's bytes (never through a symlink), or None when absent/too large/odd."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    finally:
        os.close(fd)


def _text(data: Optional[bytes]) -> Optional[str]:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def content_change(props: Properties, path: str, working_dir: Optional[str]) -> Dict[str, Any]:
    """What a content change would be (noop): ``added``/``removed`` line counts and the
    unified ``diff`` text, or ``binary``; nothing when either side cannot be read."""
    import difflib

    old = _read_bounded(path)
    if props["content"] is not None:
        new: Optional[bytes] = str(props["content"]).encode("utf-8")
    else:
        new = _read_bounded(source_path(props, working_dir))
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


def _desired_checksum(state: ResourceState) -> Any:
    """The sha256 the file's content must have, ``_UNSET`` when its content is not managed."""
    raw = state.raw
    if raw is None:
        return state.internal.get("desired_checksum", _UNSET)
    desired = raw[2]
    if desired is None:
        return _UNSET
    return sha256_hex(desired) if type(desired) is bytes else desired


def _holds_desired(state: ResourceState) -> bool:
    """Whether the file holds the desired content (True when its content is not managed)."""
    raw = state.raw
    if raw is not None and raw[1] is SAME:
        return True
    wanted = _desired_checksum(state)
    return wanted is _UNSET or state.metadata.get("checksum", "") == wanted


def _answer_key(props: Properties, state: ResourceState) -> Any:
    """The key of ``is_desired``'s remembered answer for a file whose raw facts show the
    content as desired: (st_mode, observed owner and group, desired ensure, owner, group,
    mode); st_mode holds the file type (so the observed ensure) and the mode bits. None
    when the facts do not tell (no raw facts, other content, an attribute not set or not
    hashable)."""
    raw = state.raw
    if raw is None:
        return None
    st, found, desired, observed_owner, observed_group = raw
    if not (found is SAME or desired is None or found == desired
            or (type(found) is str and type(desired) is bytes and found == sha256_hex(desired))):
        return None
    values = props.values
    try:
        key = (st.st_mode, observed_owner, observed_group, values["ensure"], values["owner"], values["group"],
               values["mode"])
        hash(key)
    except (KeyError, TypeError):
        return None
    return key


def _remembered_match(key: Tuple[Any, ...]) -> bool:
    """Whether ``is_desired``'s key (st_mode, observed owner and group, desired attributes)
    of a file it found as desired matches by remembered answers alone (so the match holds
    for as long as they are remembered)."""
    _st_mode, observed_owner, observed_group, _ensure, owner, group, mode = key
    return type(owner) is str and type(group) is str and type(mode) is str \
        and (observed_owner == owner or known_same_user((observed_owner, owner)) is True) \
        and (observed_group == group or known_same_group((observed_group, group)) is True)


def _is_sensitive(props: Properties) -> bool:
    """Content that must never be shown (a redacted field, or data marked sensitive)."""
    for f in props.fields:
        if f.key in ("content", "source") and f.redact is not None:
            return True
    return bool(getattr(props, "sensitive_fields", None))


class FileProvider(Protocol):
    """What a file provider (``posix``) offers this logic; failures raise ``ProviderError``.

    ``status`` reports ensure ``present``/``directory``/``absent`` with metadata ``owner``,
    ``group``, ``mode``, ``mtime``, ``size`` and the content checksum (given the desired
    ``content`` or its ``checksum``, it may compare the file's bytes with them instead of
    hashing it, and keep its raw facts in ``state.raw``: see ``ccm.resources.file``);
    ``store`` writes atomically.
    """

    name: str

    def status(self, path: str, content: Optional[bytes] = None, checksum: str = "") -> ResourceState: ...

    def create_directory(self, path: str, mode: int, owner: str, group: str) -> None: ...

    def store(self, path: str, *, content: Optional[bytes], source: Optional[str], owner: str,
              group: str, mode: int) -> None: ...

    def set_attributes(self, path: str, owner: str, group: str, mode: int) -> None: ...

    def remove(self, path: str, *, force: bool = False) -> None: ...


class FileLogic(TypeLogic[FileProvider]):
    stateless = True   # one instance serves every resource (TypeSpec.new_logic)

    def status(self, provider: FileProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        values = props.values
        content, ensure, name = values.get("content"), values.get("ensure"), values.get("name") or ""
        if ensure == "absent" or ensure == "directory":
            return provider.status(name)
        if content is not None:   # the provider compares the file with it instead of hashing the file
            data = content.encode() if type(content) is str else str(content).encode("utf-8")   # utf-8 either way
            state = provider.status(name, data)
            if state.raw is None:   # a provider without raw facts: the checksum to compare with
                state.internal["desired_checksum"] = sha256_hex(data)
        elif not values.get("source"):
            return provider.status(name)
        else:
            small, wanted = source_bytes_and_checksum(props, ctx.working_dir)
            state = provider.status(name, small, wanted)   # compared with the bytes, not hashed, when small
            if state.raw is None:
                state.internal["desired_checksum"] = wanted
        if ctx.noop and state.ensure == "present" and not _holds_desired(state):
            change = content_change(props, name, ctx.working_dir)
            if _is_sensitive(props):
                change.pop("diff", None)
                change["sensitive"] = True
            state.internal["content_change"] = change
        return state

    def _attribute_changes(self, props: Properties, state: ResourceState) -> List[str]:
        meta = state.metadata
        changes: List[str] = []
        if state.ensure == props.ensure and not _holds_desired(state):
            change = state.internal.get("content_change") or {}
            if change.get("binary"):
                changes.append("would change content (binary)")
            elif "added" in change:
                changes.append(f"would change content (+{change['added']} -{change['removed']} lines)")
            else:
                changes.append("would change content")
        if not owner_matches(meta.get("owner", ""), props.get("owner")):
            changes.append(f"would change owner {meta.get('owner', '') or '?'} -> {props.get('owner')}")
        if not group_matches(meta.get("group", ""), props.get("group")):
            changes.append(f"would change group {meta.get('group', '') or '?'} -> {props.get('group')}")
        wanted_mode = desired_mode_text(props)
        if meta.get("mode") != wanted_mode:
            changes.append(f"would change mode {meta.get('mode', '') or '?'} -> {wanted_mode}")
        return changes

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        key = _answer_key(props, state)
        if key is not None and known_answer(key):   # the provider's raw facts told it: desired
            return True, ""
        generation = id_generation()
        answer = self._decide(props, state)
        if answer[0] and key is not None and _remembered_match(key):
            remember_answer(key, True, generation)
        return answer

    def _decide(self, props: Properties, state: ResourceState) -> Tuple[bool, str]:
        """``is_desired`` from the state's ensure and metadata: the first difference, or none."""
        values = props.values
        want, have = values.get("ensure") or "", state.ensure
        if want == "absent":
            return (True, "") if have == "absent" else (False, f"file still exists (ensure={have})")
        if have != want:
            return False, f"ensure mismatch: state={have} requested={want}"
        meta = state.metadata
        if want != "directory":
            wanted = _desired_checksum(state)
            if wanted is not _UNSET and meta.get("checksum", "") != wanted:
                return False, f"content checksum mismatch: state={meta.get('checksum', '')} requested={wanted}"
        # remembered answers first, each saving a call: owner_matches, group_matches, desired_mode_text
        owner: Any = values.get("owner")   # what props.get("owner") gives
        observed = meta.get("owner", "")
        if observed != owner and not (known_same_user((observed, owner)) or owner_matches(observed, owner)):
            return False, f"owner mismatch: state={observed} requested={owner}"
        group: Any = values.get("group")
        observed = meta.get("group", "")
        if observed != group and not (known_same_group((observed, group)) or group_matches(observed, group)):
            return False, f"group mismatch: state={observed} requested={group}"
        wanted_mode = desired_mode_text(props)
        if meta.get("mode") != wanted_mode:
            return False, f"mode mismatch: state={meta.get('mode', '')} requested={wanted_mode}"
        return True, ""

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        raw = state.raw
        if raw is not None and raw[1] is SAME:   # a steady file: is_desired's remembered answer, read here
            st, _found, _desired, observed_owner, observed_group = raw
            values = props.values
            try:
                if known_answer((st.st_mode, observed_owner, observed_group, values["ensure"], values["owner"],
                                 values["group"], values["mode"])):   # _answer_key's key
                    return _STABLE
            except (KeyError, TypeError):
                pass
        ok, reason = self.is_desired(props, state)
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
            return Plan(("store",) if manages_content(props) else ("attributes",), changes, reason=reason)
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
                source = source_path(props, ctx.working_dir)
            else:
                content = b""
            provider.store(name, content=content, source=source, owner=props.get("owner"),
                           group=props.get("group"), mode=desired_mode(props))
