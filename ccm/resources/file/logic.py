"""File decision logic: pure ``plan`` and ``is_desired`` over an observed state."""
from __future__ import annotations

import hashlib
import os
from typing import Any, Optional, Protocol, Tuple

from ccm.model.errors import ResourceError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.ownership import (directory_mode, format_mode, group_matches, owner_matches,
                                     parse_mode)


def manages_content(props: Properties) -> bool:
    return props["content"] is not None or bool(props.get("source"))


def source_path(props: Properties, working_dir: Optional[str]) -> str:
    src = props.get("source")
    if not os.path.isabs(src):
        src = os.path.join(working_dir or os.getcwd(), src)
    return os.path.normpath(src)


def desired_checksum(props: Properties, working_dir: Optional[str]) -> Optional[str]:
    if props["content"] is not None:
        return hashlib.sha256(str(props["content"]).encode("utf-8")).hexdigest()
    if props.get("source"):
        path = source_path(props, working_dir)
        h = hashlib.sha256()
        from ccm.readfile import ReadError, open_regular

        try:
            with os.fdopen(open_regular(path, "source"), "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        except ReadError as exc:
            raise ResourceError(str(exc)) from None
        except OSError as exc:
            raise ResourceError(f"cannot read source {path}: {exc.strerror or exc}") from None
        return h.hexdigest()
    return None


def desired_mode(props: Properties) -> int:
    mode = parse_mode(props.get("mode"))
    return directory_mode(mode) if props.ensure == "directory" else mode


class FileProvider(Protocol):
    """What a file provider (``posix``) offers this logic; failures raise ``ProviderError``.

    ``status`` reports ensure ``present``/``directory``/``absent`` with metadata ``owner``,
    ``group``, ``mode``, ``mtime``, ``size`` and the content checksum; ``store`` writes
    atomically.
    """

    name: str

    def status(self, path: str) -> ResourceState: ...

    def create_directory(self, path: str, mode: int, owner: str, group: str) -> None: ...

    def store(self, path: str, *, content: Optional[bytes], source: Optional[str], owner: str,
              group: str, mode: int) -> None: ...

    def set_attributes(self, path: str, owner: str, group: str, mode: int) -> None: ...

    def remove(self, path: str, *, force: bool = False) -> None: ...


class FileLogic(TypeLogic[FileProvider]):
    def status(self, provider: FileProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        state = provider.status(props.name)
        if props.ensure != "absent" and manages_content(props) and props.ensure != "directory":
            state.internal["desired_checksum"] = desired_checksum(props, ctx.working_dir)
        return state

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        want, have = props.ensure, state.ensure
        if want == "absent":
            return (True, "") if have == "absent" else (False, f"file still exists (ensure={have})")
        if have != want:
            return False, f"ensure mismatch: state={have} requested={want}"
        meta = state.metadata
        if want != "directory" and "desired_checksum" in state.internal:
            wanted = state.internal["desired_checksum"]
            if meta.get("checksum", "") != wanted:
                return False, f"content checksum mismatch: state={meta.get('checksum', '')} requested={wanted}"
        if not owner_matches(meta.get("owner", ""), props.get("owner")):
            return False, f"owner mismatch: state={meta.get('owner', '')} requested={props.get('owner')}"
        if not group_matches(meta.get("group", ""), props.get("group")):
            return False, f"group mismatch: state={meta.get('group', '')} requested={props.get('group')}"
        wanted_mode = format_mode(desired_mode(props))
        if meta.get("mode") != wanted_mode:
            return False, f"mode mismatch: state={meta.get('mode', '')} requested={wanted_mode}"
        return True, ""

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        ok, reason = self.is_desired(props, state)
        if ok:
            return Plan()
        want, have = props.ensure, state.ensure
        if want == "directory":
            return Plan(("mkdir",), "Would have created directory", reason=reason)
        if want == "absent":
            if have == "directory":
                msg = ("Would have recursively removed the directory" if props.get("force")
                       else "Would have removed the directory")
            else:
                msg = "Would have removed the file"
            return Plan(("remove",), msg, reason=reason)
        if have == "directory":
            raise ResourceError(f"{props.name} exists as a directory; cannot manage it as a file")
        if not manages_content(props):
            if have == "present":
                return Plan(("attributes",), "Would have updated attributes", reason=reason)
            return Plan(("store",), "Would have created an empty file with requested attributes", reason=reason)
        return Plan(("store",), "Would have created the file", reason=reason)

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
