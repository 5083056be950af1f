"""A manifest set kept in a git repository, pulled with the host's ``git``.

What: ``git+https://host/repo.git?ref=main&path=sets/web.yaml`` (or ``git+file:///srv/repo.git``,
with ``ref``/``path`` as query parameters or config keys). ``GitFetcher.fetch()`` fetches
the ref's commit and trees into a private bare repository under ``cache_dir``, then the
set file's blob alone, and reads it with ``git cat-file`` (no work tree, so nothing in
the repository is ever checked out or executed), returning the bytes and the commit id.
Guarantees: git runs with a fixed argv (no shell), no terminal prompts, no hooks, a
time limit, a size limit on the file and a disk budget on the repository (old commits
pruned); URL credentials never reach logs, errors or the repository's config; an error
carries git's own cause (its first ``fatal:`` line).
Not: a git client; ``git`` must be installed on the host.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import signal
import subprocess
import time
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
DISK_BUDGET = 64 << 20     # the most one repository under cache_dir may hold
BUDGET_POLL = 0.2          # seconds between disk checks of a running fetch
REMOTE = "ccm"
KEEP_REF = "refs/ccm/set"


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
    """git failed; the message carries git's first ``fatal:`` line (else its last line), redacted."""


def git_reason(stderr: str, returncode: int) -> str:
    """The line of git's stderr that says why: the first ``fatal:`` (git's own cause, e.g.
    ``detected dubious ownership``, comes before the generic ``Could not read from remote
    repository``), else the first ``error:``, else the last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for prefix in ("fatal:", "error:"):
        for line in lines:
            if line.startswith(prefix):
                return line
    return lines[-1] if lines else f"exit status {returncode}"


def tree_bytes(path: str) -> int:
    """Bytes allocated under ``path`` (symlinks not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


class GitFetcher:
    """Fetches the set file of one ``GitSource`` into a private bare repository.

    Only what the set needs crosses the wire and stays on disk: the ref's commit and its
    trees (``--depth=1 --filter=blob:none``), then the one blob of the set file. After a
    new commit was read, everything else is pruned (``gc --prune=now``), so the cache
    holds one commit's trees and one file whatever the repository's history and size.
    The repository may never exceed ``budget`` bytes: a fetch that grows it past that
    (a server that ignores the filter, an enormous file) is stopped, the repository is
    removed and the error says so.
    """

    def __init__(self, src: GitSource, cache_dir: str, *, budget: int = DISK_BUDGET):
        self.src = src
        self.budget = budget
        key = hashlib.sha256(f"{src.url}\n{src.ref}".encode()).hexdigest()[:16]
        self.repo = os.path.join(cache_dir, f"set-git-{key}")
        self._kept = ""   # the commit the repository was last pruned to

    def _argv(self, args: Tuple[str, ...]) -> List[str]:
        argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never", "-c", "gc.auto=0"]
        if args[0] in ("fetch", "gc"):
            # The remote is given per command, never written to the repository's config: the
            # URL may hold credentials. Only fetch and gc see it as a promisor (gc must accept
            # the blobs the filter left out); a read that knew it would fetch missing objects
            # lazily, past the size and disk checks here.
            argv += ["-c", f"remote.{REMOTE}.url={self.src.url}", "-c", f"remote.{REMOTE}.promisor=true",
                     "-c", f"remote.{REMOTE}.partialclonefilter=blob:none"]
        return argv + list(args)

    def _git(self, *args: str, timeout: float = GIT_TIMEOUT) -> bytes:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_TERMINAL_PROMPT": "0", "LANG": "C",
               "LC_ALL": "C", "HOME": os.environ.get("HOME", "/"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_ASKPASS": "/bin/false", "GIT_SSH_COMMAND": "ssh -oBatchMode=yes"}
        try:
            proc = subprocess.Popen(self._argv(args), cwd=self.repo, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise GitError("git is not installed on this host") from None
        out, err, problem = self._watch(proc, args[0], timeout)
        if problem:
            raise GitError(problem)
        if proc.returncode != 0:
            from ccm.httpget import redact_url

            reason = redact_url(git_reason(err.decode("utf-8", "replace"), proc.returncode))
            reason = reason.replace(self.src.url, self.src.shown)
            raise GitError(f"git {args[0]} {self.src.shown} ({self.src.ref}): {reason}")
        return out

    def _watch(self, proc: "subprocess.Popen[bytes]", command: str, timeout: float) -> Tuple[bytes, bytes, str]:
        """Wait for ``proc`` (output, errors, problem); a fetch is stopped past the time
        limit or the disk budget (its whole process group: git runs helpers)."""
        deadline = time.monotonic() + timeout
        problem = ""
        while True:
            try:
                out, err = proc.communicate(timeout=BUDGET_POLL if command == "fetch" else timeout)
                return out, err, problem
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= deadline:
                problem = f"git {command} of {self.src.shown} timed out after {timeout:g}s"
            elif tree_bytes(self.repo) > self.budget:
                problem = (f"git {command} of {self.src.shown} ({self.src.ref}) stopped: the cache would exceed "
                           f"its disk budget of {self.budget >> 20} MiB (is {self.src.path} that large, or does the "
                           "server ignore partial fetches?)")
            else:
                continue
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.communicate()
            shutil.rmtree(self.repo, ignore_errors=True)   # whatever it wrote: the next pass starts clean
            self._kept = ""
            return b"", b"", problem

    def _ensure_repo(self) -> None:
        if os.path.isdir(os.path.join(self.repo, "objects")):
            return
        shutil.rmtree(self.repo, ignore_errors=True)
        os.makedirs(self.repo, mode=0o700)
        self._git("init", "--quiet", "--bare")

    def fetch(self) -> Tuple[bytes, str]:
        """-> (set file bytes, commit id) at the ref's current tip."""
        self._ensure_repo()
        self._git("fetch", "--quiet", "--no-tags", "--depth=1", "--filter=blob:none", REMOTE, self.src.ref)
        rev = self._git("rev-parse", "--verify", "FETCH_HEAD^{commit}").decode().strip()
        listed = self._git("ls-tree", "-z", rev, "--", self.src.path).decode("utf-8", "replace")
        meta, _, name = listed.rstrip("\0").partition("\t")
        if not listed or name != self.src.path:
            raise GitError(f"{self.src.path} not found in {self.src.shown} at {rev[:12]}")
        _mode, kind, oid = meta.split(" ", 2)
        if kind != "blob":
            raise GitError(f"{self.src.path} in {self.src.shown} is a {kind}, not a file")
        if not self._has(oid):
            self._git("fetch", "--quiet", "--no-tags", "--filter=blob:none", REMOTE, oid)
        size = int(self._git("cat-file", "-s", oid).decode().strip() or 0)
        if size > MAX_SET_BYTES:
            raise GitError(f"{self.src.path} in {self.src.shown} is larger than {MAX_SET_BYTES} bytes")
        data = self._git("cat-file", "blob", oid)
        if rev != self._kept:
            self._prune(rev)
        return data, rev

    def _has(self, oid: str) -> bool:
        try:
            self._git("cat-file", "-e", oid)
        except GitError:
            return False
        return True

    def _prune(self, rev: str) -> None:
        """Keep only ``rev`` (its trees and the set file): a ref to it, then gc. The
        ``shallow`` list is cut to it too (git keeps a line per commit ever fetched)."""
        self._git("update-ref", KEEP_REF, rev)
        self._git("reflog", "expire", "--expire=now", "--all")
        self._git("gc", "--quiet", "--prune=now")
        shallow = os.path.join(self.repo, "shallow")
        if os.path.exists(shallow):
            with open(shallow, "w") as fh:
                fh.write(rev + "\n")
        self._kept = rev
