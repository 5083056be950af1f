"""The manifest set: which manifests the agent runs, kept wherever the config says.

Seed 004 applied to the agent. The bootstrap config (``manifest_set.source``) is the
anchor; the set file itself is YAML ``manifests: [{name, source}, ...]`` and arrives
from a path kept current by an external process, an http(s) URL, an ``obj://``
object, or a git repository (``ccm.agent.gitsource``). The modes differ only in how
they produce bytes: parsing, validation and change detection are written once here.

Guarantees: ``SetLoader.load()`` parses and fully validates before anything is
swapped in; on any failure the last good set stays current (``current``) and the
error is kept for ``/status``; until the first good load there is no set. The loader
has no timer: the agent's set loop calls it (every interval, and on SIGHUP) and diffs
the running workers by name on every pass. There is no back-off (a fix an operator
just published must land at the next pass, not later the longer the mistake went
unnoticed).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from ccm.agent.config import ManifestSetConfig, boolean, check_manifest_source, decode_yaml
from ccm.model.errors import CCMError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

    Fetcher = Callable[[], Tuple[Optional[bytes], str]]   # -> (bytes or None when unchanged, revision)

MAX_SET_BYTES = 1 << 20
MAX_MEMBERS = 1000


class SetError(ValidationError):
    """The set could not be loaded or did not validate."""


@dataclass(frozen=True)
class Member:
    name: str
    source: str
    watch: Optional[bool] = None   # None: the agent's ``watch``


@dataclass(frozen=True)
class ManifestSet:
    members: Tuple[Member, ...]
    revision: str = ""

    def by_name(self) -> Dict[str, Member]:
        return {m.name: m for m in self.members}


def parse_set(raw: bytes, shown: str, *, relative_base: Optional[str] = None) -> Tuple[Member, ...]:
    """Decode and validate a set document; relative local sources are allowed only
    when ``relative_base`` is given (path mode: the set file's directory)."""
    doc = decode_yaml(raw, shown, MAX_SET_BYTES, SetError)
    if not isinstance(doc, dict):
        raise SetError(f"{shown}: must be a mapping with a manifests list, got {type(doc).__name__}")
    for k in doc:
        if k != "manifests":
            raise SetError(f"{shown}: {k}: unknown key (expected manifests)")
    items = doc.get("manifests")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise SetError(f"{shown}: manifests: must be a list, got {type(items).__name__}")
    if len(items) > MAX_MEMBERS:
        raise SetError(f"{shown}: manifests: more than {MAX_MEMBERS} entries")
    members: List[Member] = []
    seen: Dict[str, int] = {}
    for i, item in enumerate(items):
        members.append(_member(shown, f"manifests[{i}]", item, seen, relative_base))
        seen[members[-1].name] = i
    return tuple(members)


def _member(shown: str, where: str, item: Any, seen: Dict[str, int], relative_base: Optional[str]) -> Member:
    """One entry of the set's list (``seen``: the names before it, with their index)."""
    if not isinstance(item, dict):
        raise SetError(f"{shown}: {where}: must be a mapping with name and source, got {type(item).__name__}")
    for k in item:
        if k not in ("name", "source", "watch"):
            raise SetError(f"{shown}: {where}.{k}: unknown key (expected name, source, watch)")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SetError(f"{shown}: {where}.name: must be a non-empty string")
    if len(name) > 200 or any(c in name for c in "\n\r\x00"):
        raise SetError(f"{shown}: {where}.name: must be one line of at most 200 characters")
    if name in seen:
        raise SetError(f"{shown}: {where}.name: duplicate name {name!r} (also manifests[{seen[name]}])")
    if "source" not in item:
        raise SetError(f"{shown}: {where}.source: is required")
    watch = None
    try:
        source = check_manifest_source(shown, f"{where}.source", item["source"], relative_base=relative_base)
        if item.get("watch") is not None:
            watch = boolean(shown, f"{where}.watch", item["watch"])
    except ValidationError as exc:
        raise SetError(str(exc)) from None
    return Member(name=name, source=source, watch=watch)


def _path_fetcher(path: str) -> Fetcher:
    def fetch() -> Tuple[Optional[bytes], str]:
        try:
            with open(path, "rb") as fh:
                return fh.read(MAX_SET_BYTES + 1), ""
        except FileNotFoundError:
            raise SetError(f"manifest set {path} does not exist") from None
        except OSError as exc:
            raise SetError(f"cannot read manifest set {path}: {exc.strerror or exc}") from None
    return fetch


def _http_fetcher(url: str) -> Fetcher:
    import io

    from ccm.httpget import HTTPGetError, NotModified, get, redact_url

    validators: Dict[str, str] = {}

    def fetch() -> Tuple[Optional[bytes], str]:
        headers = {}
        if validators.get("etag"):
            headers["If-None-Match"] = validators["etag"]
        if validators.get("last-modified"):
            headers["If-Modified-Since"] = validators["last-modified"]
        buf = io.BytesIO()
        got: Dict[str, str] = {}

        class _Cap:
            def write(self, data: bytes) -> int:
                if buf.tell() + len(data) > MAX_SET_BYTES:
                    raise SetError(f"manifest set {redact_url(url)} is larger than {MAX_SET_BYTES} bytes")
                return buf.write(data)
        try:
            get(url, _Cap(), headers=headers, timeout=60.0, response_headers=got)
        except NotModified:
            return None, validators.get("etag", "")
        except HTTPGetError as exc:
            raise SetError(f"could not fetch manifest set {redact_url(url)}: {exc}") from None
        validators.clear()
        validators.update({k: got[k] for k in ("etag", "last-modified") if k in got})
        return buf.getvalue(), got.get("etag", "")
    return fetch


class SetLoader:
    """Loads the set and keeps the last one that validated (thread-safe)."""

    def __init__(self, cfg: ManifestSetConfig, *, cache_dir: str, object_bytes: Callable[[str], bytes]):
        self.cfg = cfg
        self.mode = cfg.mode
        self._lock = threading.Lock()
        self.current: Optional[ManifestSet] = None
        self.last_load: Optional[float] = None      # wall time of the last successful load
        self.last_attempt: Optional[float] = None
        self.last_error: Optional[str] = None
        self._last_raw: Optional[bytes] = None
        self.relative_base: Optional[str] = None
        if self.mode == "git":
            from ccm.agent.gitsource import GitFetcher, parse_git_source

            git = GitFetcher(parse_git_source(cfg.source, cfg.ref, cfg.path), cache_dir)
            self.shown = git.src.shown
            self._fetch: Fetcher = git.fetch
        elif self.mode == "http":
            from ccm.httpget import redact_url

            self.shown = redact_url(cfg.source)
            self._fetch = _http_fetcher(cfg.source)
        elif self.mode == "obj":
            self.shown = cfg.source
            self._fetch = lambda: (object_bytes(cfg.source), "")
        else:
            path = cfg.source[len("file://"):] if cfg.source.startswith("file://") else cfg.source
            self.shown = path
            self.relative_base = os.path.dirname(path)
            self._fetch = _path_fetcher(path)

    def load(self) -> Tuple[ManifestSet, bool]:
        """-> (set, changed since the last good load); raises ``SetError``, keeping the
        last good set current."""
        with self._lock:
            self.last_attempt = time.time()
            try:
                raw, revision = self._fetch()
                if raw is None:          # 304: the last good bytes are still the set
                    raw = self._last_raw
                if raw is None:
                    raise SetError(f"manifest set {self.shown}: nothing fetched yet")
                members = parse_set(raw, self.shown, relative_base=self.relative_base)
            except CCMError as exc:
                self.last_error = str(exc)
                raise SetError(str(exc)) from None
            except OSError as exc:
                self.last_error = f"manifest set {self.shown}: {exc}"
                raise SetError(self.last_error) from None
            new = ManifestSet(members=members, revision=revision)
            changed = self.current is None or new != self.current
            self.current, self._last_raw = new, raw
            self.last_load, self.last_error = time.time(), None
            return new, changed

    def status(self) -> Dict[str, Any]:
        from ccm.gocompat.rfc3339 import rfc3339

        with self._lock:
            return {
                "mode": self.mode,
                "source": self.shown,
                "revision": self.current.revision if (self.current and self.mode == "git") else None,
                "last_load": rfc3339(int(self.last_load * 1e9)) if self.last_load else None,
                "last_error": self.last_error,
                "members": len(self.current.members) if self.current else 0,
            }
