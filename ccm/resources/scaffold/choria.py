"""choria provider for the scaffold type: renders template trees and syncs them to a target.

What: every render (dry or real) renders the **whole** source tree into a private temp
directory with the Jet or Go engine, then compares it with the target by SHA-256
(``add``/``update``/``equal``; target files not produced are ``remove``). A real render
copies changed files atomically (temp file in the destination directory, fsync,
rename, with the rendered file's permission bits) and deletes ``remove`` files when
``purge`` is set.

Post commands (product decisions): they run only in real renders, on the temp copy,
through the manager's runner (fixed ``PATH``/``LANG=C`` environment, not ccm's own;
wrap a command in ``env VAR=x ...`` if it needs more), with a 5 minute timeout. Because a
post command may change content, a real render records on each post-processed target
file the SHA-256 before and after post-processing (xattr ``user.ccm.scaffold``); a dry
render compares a post-processed file through that record instead of running the
commands. On a file system without user xattrs the dry render falls back to running
the post commands on its temp copy (upstream's behaviour).

Not: a URL source fetcher (sources are local directories).
"""
from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import shlex
import shutil
import stat
import tempfile
from dataclasses import dataclass, field

from ccm import fsafe
from ccm.clock import now_ns
from ccm.model.errors import CCMError, ProviderError
from ccm.model.events import ResourceState
from ccm.model.provider import AlwaysManageable
from ccm.redact import scrub_text
from ccm.resources.ownership import CHUNK, atomic_replace, remove_file, sha256_file
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

XATTR = "user.ccm.scaffold"
POST_TIMEOUT = 300.0


@dataclass
class RenderJob:
    """Everything one render needs; built by the type logic from the properties."""

    source: str
    target: str
    engine: str = "jet"
    left: str = "[["
    right: str = "]]"
    skip_empty: bool = False
    purge: bool = False
    post: Sequence[Tuple[str, str]] = ()
    variables: Mapping[str, Any] = field(default_factory=dict)   # facts/Facts/data/Data/environ/Environ
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)


@dataclass
class RenderResult:
    changed: List[str] = field(default_factory=list)   # add + update, absolute target paths
    stable: List[str] = field(default_factory=list)
    purged: List[str] = field(default_factory=list)    # target files the source does not produce



def post_argv(command: str, path: str) -> List[str]:
    """Shell-word split; ``{}`` in any argument becomes the path, else the path is appended."""
    argv = shlex.split(command)
    replaced = False
    out = []
    for arg in argv:
        if "{}" in arg:
            arg = arg.replace("{}", path)
            replaced = True
        out.append(arg)
    if not replaced:
        out.append(path)
    return out


def _inside(base: str, path: str) -> bool:
    base = os.path.normpath(base)
    path = os.path.normpath(path)
    return path == base or path.startswith(base.rstrip("/") + "/")


def _read_record(path: str) -> Tuple[Optional[Tuple[str, str]], bool]:
    """Return (record, xattrs_supported)."""
    try:
        raw = os.getxattr(path, XATTR, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return None, False
        return None, True
    pre, _, final = raw.decode("ascii", "replace").partition(":")
    return ((pre, final) if pre and final else None), True


def _write_record(path: str, pre: str, final: str) -> None:
    try:
        os.setxattr(path, XATTR, f"{pre}:{final}".encode("ascii"), follow_symlinks=False)
    except OSError:
        pass  # no xattrs here: dry renders fall back to running the post commands


class _Renderer:
    """One render of a source tree into ``out`` (a private temp dir)."""

    def __init__(self, provider: "ChoriaScaffoldProvider", job: RenderJob, out: str, *, real: bool):
        self.provider = provider
        self.job = job
        self.out = out
        self.real = real
        self.files: Dict[str, str] = {}          # relpath -> sha256 before post-processing
        self.post_processed: Dict[str, bool] = {}

    # template functions ------------------------------------------------------------
    def render_partial(self, relpath: Any, data: Any = None) -> str:
        if not isinstance(relpath, str):
            raise CCMError("render: path must be a string")
        path = os.path.normpath(os.path.join(self.job.source, relpath))
        if not _inside(self.job.source, path) or path == os.path.normpath(self.job.source):
            raise CCMError(f"render: {relpath} is outside the source directory")
        return self.render_text(self._read(path, relpath), self.job.variables if data is None else data, relpath)

    def write_extra(self, relpath: Any, content: Any) -> str:
        if not isinstance(relpath, str):
            raise CCMError("write: path must be a string")
        path = os.path.normpath(os.path.join(self.out, relpath))
        if not _inside(self.out, path) or path == os.path.normpath(self.out):
            raise CCMError(f"write: {relpath} is outside the target directory")
        text = content if isinstance(content, str) else str(content)
        self._emit(os.path.relpath(path, self.out), text)
        return ""

    # rendering ----------------------------------------------------------------------
    def _read(self, path: str, rel: str) -> str:
        try:
            with open(path, "rb") as fh:
                return fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = (exc.strerror if isinstance(exc, OSError) else None) or exc
            raise ProviderError(f"cannot read template {rel}: {reason}") from None

    def render_text(self, text: str, dot: Any, name: str) -> str:
        job = self.job
        funcs = dict(job.functions)
        funcs["render"] = self.render_partial
        funcs["write"] = self.write_extra
        if job.engine == "go":
            from ccm.templates.gotmpl import render_go

            funcs.pop("template", None)  # a Go keyword
            return render_go(text, dot, functions=funcs, left=job.left, right=job.right, name=name)
        from ccm.templates.jet import render_jet

        funcs.pop("jet", None)
        variables = dict(job.variables)
        variables.update(funcs)
        return render_jet(text, variables, functions=funcs, left=job.left, right=job.right,
                          context=dot, name=name)

    def run(self) -> None:
        source = self.job.source
        for dirpath, dirnames, filenames in os.walk(source):
            dirnames[:] = sorted(d for d in dirnames if d != "_partials")
            rel_dir = os.path.relpath(dirpath, source)
            for d in list(dirnames):
                full = os.path.join(dirpath, d)
                if os.path.islink(full):
                    raise ProviderError(f"invalid file in source: {os.path.normpath(os.path.join(rel_dir, d))}")
                os.makedirs(os.path.join(self.out, rel_dir, d), mode=0o755, exist_ok=True)
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.normpath(os.path.join(rel_dir, name))
                if not os.path.isfile(full):   # follows symlinks to regular files
                    raise ProviderError(f"invalid file in source: {rel}")
                try:
                    text = self.render_text(self._read(full, rel), self.job.variables, rel)
                except CCMError as exc:
                    raise ProviderError(f"rendering {rel} failed: {exc}") from None
                self._emit(rel, text)

    def _emit(self, rel: str, text: str) -> None:
        if self.job.skip_empty and not text.strip():
            return
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        data = text.encode("utf-8")
        with open(path, "wb") as fh:
            fh.write(data)
        os.chmod(path, 0o644)
        self.files[rel] = hashlib.sha256(data).hexdigest()
        commands = [cmd for pattern, cmd in self.job.post if fnmatch.fnmatchcase(os.path.basename(rel), pattern)]
        self.post_processed[rel] = bool(commands)
        if commands and self.run_post_now(rel):
            for cmd in commands:
                self.provider.post_process(path, cmd)

    def run_post_now(self, rel: str) -> bool:
        if self.real:
            return True
        target = os.path.join(self.job.target, rel)
        if not os.path.lexists(target):
            return False
        _record, supported = _read_record(target)
        return not supported


class ChoriaScaffoldProvider:
    name = "choria"

    def __init__(self, runner: Any = None, log: Any = None):
        self.runner = runner
        self.log = log

    # --- commands --------------------------------------------------------------------
    def post_process(self, path: str, command: str) -> None:
        try:
            argv = post_argv(command, path)
        except ValueError as exc:
            raise ProviderError(f"failed to post process {path}\nerror: {exc}\noutput: \"\"") from None
        result = self.runner.run(argv, cwd=os.path.dirname(path), timeout=POST_TIMEOUT)
        if not result.ok:
            err = result.error or f"exit status {result.exit_code}"
            raise ProviderError(scrub_text(result.with_output(f"failed to post process {path}\nerror: {err}")))

    # --- rendering -------------------------------------------------------------------
    def _render(self, job: RenderJob, out: str, *, real: bool) -> _Renderer:
        if not os.path.isdir(job.source):
            raise ProviderError(f"source directory {job.source} does not exist or is not a directory")
        renderer = _Renderer(self, job, out, real=real)
        renderer.run()
        return renderer

    def _compare(self, job: RenderJob, renderer: _Renderer, out: str) -> Tuple[List[str], List[str], List[str]]:
        add_update: List[str] = []
        equal: List[str] = []
        changed_rel: List[str] = []
        for rel in sorted(renderer.files):
            target = os.path.join(job.target, rel)
            if not os.path.isfile(target) or os.path.islink(target):
                add_update.append(target)
                changed_rel.append(rel)
                continue
            have = sha256_file(target)
            rendered = os.path.join(out, rel)
            if renderer.post_processed.get(rel) and not renderer.real:
                record, supported = _read_record(target)
                if supported:
                    same = record is not None and record == (renderer.files[rel], have)
                    if record is None:   # never recorded: compare the text before post-processing
                        same = have == renderer.files[rel]
                    (equal if same else add_update).append(target)
                    if not same:
                        changed_rel.append(rel)
                    continue
            if have == sha256_file(rendered):
                equal.append(target)
            else:
                add_update.append(target)
                changed_rel.append(rel)
        return add_update, equal, changed_rel

    def _extraneous(self, job: RenderJob, produced: Sequence[str]) -> List[str]:
        if not os.path.isdir(job.target):
            return []
        produced_set = set(produced)
        out = []
        for dirpath, dirnames, filenames in os.walk(job.target):
            dirnames.sort()
            for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
                path = os.path.join(dirpath, name)
                if os.path.relpath(path, job.target) not in produced_set:
                    out.append(path)
        return sorted(out)

    def dry_render(self, job: RenderJob) -> RenderResult:
        out = tempfile.mkdtemp(prefix="scaffold-")
        try:
            renderer = self._render(job, out, real=False)
            changed, equal, _ = self._compare(job, renderer, out)
            return RenderResult(changed, equal, self._extraneous(job, list(renderer.files)))
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def render(self, job: RenderJob) -> RenderResult:
        """Real render: sync the rendered tree into the target (and purge)."""
        out = tempfile.mkdtemp(prefix="scaffold-")
        try:
            renderer = self._render(job, out, real=True)
            changed, equal, changed_rel = self._compare(job, renderer, out)
            try:
                os.close(fsafe.open_dir(job.target, create=True))
                for dirpath, dirnames, _files in os.walk(out):
                    for d in dirnames:
                        rel = os.path.relpath(os.path.join(dirpath, d), out)
                        dest = os.path.join(job.target, rel)
                        if os.path.lexists(dest) and not stat.S_ISDIR(os.lstat(dest).st_mode):
                            os.unlink(dest)   # a file or symlink in the way (never followed)
                        fsafe.ensure_directory(dest, None, None, None, create_mode=0o755)
                for rel in changed_rel:
                    self._install(os.path.join(out, rel), os.path.join(job.target, rel))
                for rel, was_post in renderer.post_processed.items():
                    if was_post:
                        dest = os.path.join(job.target, rel)
                        _write_record(dest, renderer.files[rel], sha256_file(dest))
            except OSError as exc:
                raise ProviderError(f"cannot write scaffold files into {job.target}: {exc.strerror or exc}") from None
            purged = self._extraneous(job, list(renderer.files))
            if job.purge:
                for path in purged:
                    self._unlink(path)
            return RenderResult(changed, equal, purged)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def _install(self, src: str, dest: str) -> None:
        if os.path.isdir(dest) and not os.path.islink(dest):
            raise ProviderError(f"cannot replace directory {dest} with a file")
        mode = stat.S_IMODE(os.stat(src).st_mode)
        with atomic_replace(dest, mode=mode) as out, open(src, "rb") as fh:
            shutil.copyfileobj(fh, out, CHUNK)

    def _unlink(self, path: str) -> None:
        remove_file(path)

    # --- status and removal ----------------------------------------------------------
    def status(self, job: RenderJob, *, ensure: str) -> ResourceState:
        result = self.dry_render(job)
        changed, stable = result.changed, result.stable
        if ensure == "absent":
            changed = [p for p in changed if os.path.lexists(p)]
            stable = [p for p in stable if os.path.lexists(p)]
        meta: Dict[str, Any] = {"name": job.target, "provider": self.name}
        if os.path.isdir(job.target):
            meta["target_exists"] = True
        if changed:
            meta["changed"] = changed
        if result.purged:
            meta["purged"] = result.purged
        if stable:
            meta["stable"] = stable
        meta["engine"] = job.engine
        return ResourceState(type="scaffold", name=job.target, ensure="present", extra={"metadata": meta},
                             timestamp_ns=now_ns())

    def remove(self, target: str, files: Sequence[str]) -> None:
        """Delete ``files``, then the directories they leave empty (never ``target``
        itself first), then try ``target`` (only succeeds when empty)."""
        parents = set()
        for path in files:
            if not _inside(target, path) or os.path.normpath(path) == os.path.normpath(target):
                raise ProviderError(f"refusing to remove {path}: outside {target}")
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                if self.log is not None:
                    self.log.warn("Could not remove file", file=path, error=exc.strerror or str(exc))
            parent = os.path.dirname(path)
            while _inside(target, parent) and os.path.normpath(parent) != os.path.normpath(target):
                parents.add(parent)
                parent = os.path.dirname(parent)
        changed = True
        while changed:
            changed = False
            for d in sorted(parents, key=len, reverse=True):
                try:
                    os.rmdir(d)
                    parents.discard(d)
                    changed = True
                except OSError:
                    pass
        try:
            os.rmdir(target)
        except OSError:
            pass


class ChoriaFactory(AlwaysManageable):
    type_name = "scaffold"
    name = "choria"

    def new(self, runner: Any, log: Any) -> ChoriaScaffoldProvider:
        return ChoriaScaffoldProvider(runner, log)
