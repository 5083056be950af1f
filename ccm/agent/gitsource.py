"""A manifest set kept in a git repository, pulled with the host's ``git``.

What: ``git+https://host/repo.git?ref=main&path=sets/web.yaml`` (or ``git+file:///srv/repo.git``,
with ``ref``/``path`` as query parameters or config keys). ``GitFetcher.fetch()`` fetches
the ref into a private bare repository under ``cache_dir`` and reads the set file
straight out of the fetched commit with ``git cat-file`` (no work tree, so nothing in
the repository is ever checked out or executed), returning the bytes and the commit id.
Guarantees: git runs with a fixed argv (no shell), no terminal prompts, no hooks, a
time limit and a size limit on the file; URL credentials never reach logs or errors.
Not: a git client; ``git`` must be installed on the host.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass

from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Tuple

DEFAULT_REF = "HEAD"
DEFAULT_PATH = "manifests.yaml"
GIT_TIMEOUT = 120.0
MAX_SET_BYTES = 1 << 20


@dataclass(frozen=True)
class GitSource:
    url: str       # what git is given (without the git+ prefix and our query parameters)
    ref: str
    path: str

    @property
    def shown(self) -> str:
        from ccm.httpget import redact_url

        return redact_url(self.url)


def parse_git_source(source: str, ref: str = "", path: str = "") -> GitSource:
    if not source.lower().startswith("git+"):
        raise ValidationError(f"not a git source: {source}")
    parts = urllib.parse.urlsplit(source[len("git+"):])
    if parts.scheme not in ("https", "http", "file", "ssh"):
        raise ValidationError(f"unsupported git transport {parts.scheme!r}")
    query: Dict[str, List[str]] = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    for k in query:
        if k not in ("ref", "path"):
            raise ValidationError(f"unknown git source parameter {k!r} (expected ref, path)")
    q_ref = query.get("ref", [""])[-1]
    q_path = query.get("path", [""])[-1]
    if ref and q_ref and ref != q_ref:
        raise ValidationError(f"ref given twice with different values ({q_ref!r} and {ref!r})")
    if path and q_path and path != q_path:
        raise ValidationError(f"path given twice with different values ({q_path!r} and {path!r})")
    ref = ref or q_ref or DEFAULT_REF
    path = path or q_path or DEFAULT_PATH
    if ref.startswith("-") or any(c in ref for c in " \t\n\x00~^:?*[\\") or ".." in ref:
        raise ValidationError(f"invalid git ref {ref!r}")
    norm = posixpath.normpath(path)
    if path.startswith("/") or norm.startswith("..") or norm == "." or "\x00" in path:
        raise ValidationError(f"path {path!r} must be a relative path inside the repository")
    if parts.scheme == "file" and not parts.path.startswith("/"):
        raise ValidationError("git+file:// needs an absolute path (git+file:///srv/repo.git)")
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return GitSource(url=url, ref=ref, path=norm)


class GitError(ValidationError):
    """git failed; the message carries git's last line of stderr (redacted)."""


class GitFetcher:
    def __init__(self, src: GitSource, cache_dir: str):
        self.src = src
        key = hashlib.sha256(f"{src.url}\n{src.ref}".encode()).hexdigest()[:16]
        self.repo = os.path.join(cache_dir, f"set-git-{key}")

    def _git(self, *args: str, timeout: float = GIT_TIMEOUT) -> bytes:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_TERMINAL_PROMPT": "0", "LANG": "C",
               "LC_ALL": "C", "HOME": os.environ.get("HOME", "/"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_ASKPASS": "/bin/false", "GIT_SSH_COMMAND": "ssh -oBatchMode=yes"}
        argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never", *args]
        try:
            proc = subprocess.run(argv, cwd=self.repo, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=timeout, check=False)
        except FileNotFoundError:
            raise GitError("git is not installed on this host") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} of {self.src.shown} timed out after {timeout:g}s") from None
        if proc.returncode != 0:
            from ccm.httpget import redact_url

            lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
            last = redact_url(lines[-1].strip()) if lines else f"exit status {proc.returncode}"
            if self.src.url in last:
                last = last.replace(self.src.url, self.src.shown)
            raise GitError(f"git {args[0]} {self.src.shown} ({self.src.ref}): {last}")
        return proc.stdout

    def _ensure_repo(self) -> None:
        if os.path.isdir(os.path.join(self.repo, "objects")):
            return
        shutil.rmtree(self.repo, ignore_errors=True)
        os.makedirs(self.repo, mode=0o700)
        self._git("init", "--quiet", "--bare")

    def fetch(self) -> Tuple[bytes, str]:
        """-> (set file bytes, commit id) at the ref's current tip."""
        self._ensure_repo()
        self._git("fetch", "--quiet", "--no-tags", "--depth=1", "--", self.src.url, self.src.ref)
        rev = self._git("rev-parse", "--verify", "FETCH_HEAD^{commit}").decode().strip()
        spec = f"{rev}:{self.src.path}"
        try:
            kind = self._git("cat-file", "-t", spec).decode().strip()
        except GitError:
            raise GitError(f"{self.src.path} not found in {self.src.shown} at {rev[:12]}") from None
        if kind != "blob":
            raise GitError(f"{self.src.path} in {self.src.shown} is a {kind}, not a file")
        size = int(self._git("cat-file", "-s", spec).decode().strip() or 0)
        if size > MAX_SET_BYTES:
            raise GitError(f"{self.src.path} in {self.src.shown} is larger than {MAX_SET_BYTES} bytes")
        return self._git("cat-file", "blob", spec), rev
