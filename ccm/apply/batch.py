"""Batched durability for a first run: many file writes, one sync pass (issue 16).

What: during ``apply`` (not noop, not health-check-only) the run's write sink
(``ccm.model.run.RunSink``) is a ``RunBatch``. The file provider writes through the sink
as always (``stage``); for consecutive file resources the batch admits, the temp files are
staged in one ``ccm.fsafe.DurableBatch`` instead of each paying a full fsync, and the batch
holds their events. At a boundary the batch commits: the staged files are made durable
together, renamed over the targets in declaration order, the directories are fsynced, and
only then does the engine publish, log and record the held events, in order. So anything
that can observe an outcome (a later resource, a ``require``/``subscribe``, the summary,
the session store, a health check, a subscriber refresh) only ever sees a resource
reported "changed" once its file is in place and durable. The plain path, the reference
the batch is held to, is ``ccm.fsafe.DirectWrites``: every write in place as it ends.

A batch ends (commits) before any resource it does not admit: another type (an
``exec``, a package, a nested apply ...), a file resource that is not ``ensure: present``,
has ``require``/``subscribe``, ``control``, health checks, ``register_when_stable`` or a template in its name,
content or source, or whose path or source is, holds or lies under a staged target. It
also ends right after a resource another one depends on, after an event that failed or
was interrupted, after any event that staged nothing, when the batch is full (open
descriptors), at the end of the run, and on an unexpected error (then the staged temp
files are removed and the targets keep their old content).

Signals: SIGINT/SIGTERM/SIGHUP only record themselves (``ccm.interrupt``); the batch then
commits what it holds, the interrupted resource included, exactly as the unbatched flow
leaves those files written, and starts nothing more. ``CCM_WRITE_BATCH=0`` turns batching
off (every run's sink is then the direct one); a number sets the batch size (tests).

Not: a weaker guarantee. A ``kill -9`` or power loss at any moment leaves every target
with its old or its new content (a rename only follows a successful sync) and at most
temp files, which the next run removes (``fsafe.sweep_stale``).
"""
from __future__ import annotations

import os

from ccm import fsafe
from ccm.log import internal
from ccm.model.events import TransactionEvent
from ccm.model.resource import Properties, is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, ContextManager, List, Optional, Sequence, Set

log = internal("ccm.apply")

# Files per batch. Each commit costs about one journal commit, so 64 already removes ~98% of
# them; smaller batches also keep the window in which a crash leaves all files old short.
DEFAULT_LIMIT = 64

# properties whose (non-empty) value keeps a resource out of a batch: ``admit`` tests each
# with ``in`` (values holds only the keys that are set; a frozenset.isdisjoint(values)
# iterates the whole dict, several times the cost, once per resource)
_UNBATCHED = ("health_checks", "control", "require", "subscribe", "register_when_stable")


class Held:
    """An event of the batch's window, settled (published/logged/recorded) at the commit."""

    __slots__ = ("event", "props", "write", "interrupted")

    def __init__(self, event: TransactionEvent, props: Properties, write: Optional[fsafe.StagedWrite],
                 interrupted: bool):
        self.event, self.props, self.write, self.interrupted = event, props, write, interrupted


def _never(content: str) -> bool:
    return False


def _refs(props: Properties) -> List[Any]:
    """``require`` and ``subscribe`` entries (validation admits them only where declared)."""
    return list(props.get("require") or []) + list(props.get("subscribe") or [])


class RunBatch:
    """The write sink of a first run (``ccm.model.run.RunSink``): providers stage into it
    (``stage``, ``staged``), the engine tells it each resource (``admit``) and event
    (``take``) and settles what ``take`` and ``commit`` hand back."""

    def __init__(self, resources: Sequence[Any], working_dir: Optional[str], limit: int = DEFAULT_LIMIT, *,
                 template_free: bool = False, fail_on_error: bool = False):
        self.fs = fsafe.DurableBatch(limit)
        self._template_free = template_free   # no name or content to test
        self._fail_on_error = fail_on_error
        self._staging = False   # the resource running now was admitted: its writes are staged
        self.pending: List[Held] = []
        self._taken = 0   # writes of fs already attributed to a held event
        self.working_dir = working_dir
        self._resources = resources
        self._depended: Optional[Set[str]] = None   # found when first asked: a steady run stages nothing
        self._any_templated_ref = False
        self._probes: Optional[Callable[[str], bool]] = None   # ccm.tmplcache.only_probes, when on

    @classmethod
    def for_run(cls, manifest: Any, working_dir: Optional[str], *, noop: bool,
                health_check_only: bool) -> Optional["RunBatch"]:
        """A batch for this run, or None where nothing may be batched (noop, health checks
        only, no file resource, ``CCM_WRITE_BATCH`` 0 or 1; a larger value sets the limit)."""
        setting = os.environ.get("CCM_WRITE_BATCH", "").strip()
        limit = int(setting) if setting.isdigit() else DEFAULT_LIMIT
        if noop or health_check_only or limit < 2:
            return None
        if not any(e.props.type_name == "file" for e in manifest.resources):
            return None
        return cls(manifest.resources, working_dir, limit, template_free=manifest.template_free,
                   fail_on_error=manifest.fail_on_error)

    # --- what providers see (ccm.model.provider.WriteSink) ------------------------------

    def stage(self, path: str, *, mode: int, uid: Optional[int] = None,
              gid: Optional[int] = None) -> ContextManager[Any]:
        """The write of an admitted resource is staged (renamed at the commit); any other
        is an ``atomic_replace`` of its own, as in a run that batches nothing."""
        if self._staging:
            return self.fs.stage(path, mode=mode, uid=uid, gid=gid)
        return fsafe.atomic_replace(path, mode=mode, uid=uid, gid=gid)

    def staged(self, path: str) -> Optional[fsafe.StagedWrite]:
        fs = self.fs
        return fs.staged(path) if fs.writes else None   # nothing staged: every file of a steady run

    # --- what the engine sees (ccm.model.run.RunSink) -----------------------------------

    def admit(self, entry: Any) -> bool:
        """The batch decision: whether ``entry`` may stage its write while the held events
        wait (then its writes are staged); False: the engine commits first, and its writes
        go to disk at once."""
        props: Properties = entry.props
        values = props.values
        if props.type_name != "file" or values.get("ensure") != "present":
            self._staging = False
            return False
        for key in _UNBATCHED:   # a refused publish fails the event after the write
            if key in values and values[key]:
                self._staging = False
                return False
        name = values.get("name")
        source = values.get("source")
        if self._template_free and not source and type(name) is str:   # a steady run's resources
            content = values.get("content")
            admitted = (content is None or type(content) is str) and not (self.fs.writes and self.fs.conflicts(name))
        else:
            admitted = self._admits_any(name, values.get("content"), source)
        self._staging = admitted
        return admitted

    def take(self, event: TransactionEvent, props: Properties, interrupted: bool) -> Optional[Sequence[Held]]:
        """None: nothing is held and the resource just run staged nothing (every resource
        of a steady run), settle ``event`` now, which is all a commit of it alone would do;
        else the events to settle now (none while the batch may hold them)."""
        fs = self.fs
        if not self.pending and not fs.writes:
            if fs.has_open_dirs:   # a stage that failed after opening its directory
                fs.close()
            return None
        if self.hold(event, props, interrupted):
            return ()
        return self.commit()

    # --- the batch decision -------------------------------------------------------------

    def _find_depended(self) -> Set[str]:
        """The references some resource makes (``require``/``subscribe``)."""
        depended: Set[str] = set()
        for entry in self._resources:
            values = entry.props.values
            if not (values.get("require") or values.get("subscribe")):   # most resources: no list built
                continue
            for ref in _refs(entry.props):
                if isinstance(ref, str) and not is_templated(ref):
                    depended.add(ref)
                else:
                    self._any_templated_ref = True
        self._depended = depended
        return depended

    def _admits_any(self, name: Any, content: Any, source: Any) -> bool:
        """``admit`` for a resource that may hold templates or a source."""
        # is_templated inlined (every resource of a run asks) and conflicts only once something is staged
        if not isinstance(name, str) or "{{" in name or "${" in name or (self.fs.writes and self.fs.conflicts(name)):
            return False
        if content is not None and (not isinstance(content, str) or (("{{" in content or "${" in content)
                                                                     and not self._reads_nothing(content))):
            return False
        if source:
            if not isinstance(source, str) or is_templated(source):
                return False
            if self.fs.conflicts(os.path.normpath(os.path.join(self.working_dir or os.getcwd(), source))):
                return False
        return True

    def _reads_nothing(self, content: str) -> bool:
        """A templated content that reads only ``Data`` values and facts (``ccm.tmplcache``,
        when on) reads no file another write of the batch may not have renamed yet."""
        if self._probes is None:
            from ccm import tmplcache

            self._probes = tmplcache.only_probes if tmplcache.enabled() else _never
        return self._probes(content)

    def _depended_on(self, props: Properties) -> bool:
        depended = self._depended if self._depended is not None else self._find_depended()
        if self._any_templated_ref:
            return True
        t = props.type_name
        return f"{t}#{props.name}" in depended or bool(props.alias and f"{t}#{props.alias}" in depended)

    def hold(self, event: TransactionEvent, props: Properties, interrupted: bool) -> bool:
        """Take the event of the resource just run; True when it may stay held (it staged
        a write and nothing forces the batch to end), False when it must commit now."""
        staged = self.fs.writes[self._taken:]
        self._taken = len(self.fs.writes)
        write = staged[-1] if staged else None
        self.pending.append(Held(event, props, write, interrupted))
        if write is None or event.failed or interrupted or self.fs.full:
            return False
        return not self._depended_on(props)

    def commit(self, fail_on_error: Optional[bool] = None) -> List[Held]:
        """Make the staged writes durable, rename them in order and return the held events
        to settle, in order; with ``fail_on_error`` (the manifest's, unless given) the list
        ends at the first failed event (the writes after it are discarded, as if they
        never ran)."""
        if not self.pending:
            return []
        if fail_on_error is None:
            fail_on_error = self._fail_on_error
        items, self.pending, self._taken = self.pending, [], 0
        out: List[Held] = []
        try:
            if any(h.write is not None for h in items):
                self.fs.sync()
            for held in items:
                if held.write is not None:
                    try:
                        self.fs.install(held.write)
                    except OSError as exc:
                        _failed_write(held, exc)
                out.append(held)
                if fail_on_error and held.event.failed:
                    break
        finally:
            try:
                self.fs.close()   # fsync of the directories renamed into; removes what was not renamed
            except OSError as exc:
                log.warning("could not make renames durable", extra={"kv": {"error": str(exc)}})
        return out

    def discard(self) -> None:
        """Drop every staged write (temp files removed, targets untouched) and held event."""
        self.pending, self._taken, self._staging = [], 0, False
        try:
            self.fs.close()
        except OSError:
            pass


def _failed_write(held: Held, exc: OSError) -> None:
    """The event a failed store gets in the unbatched flow (``base._flow``)."""
    event = held.event
    event.status = None
    event.final_ensure = ""
    event.changed = event.refreshed = False
    event.fail(f"cannot write {held.props.name}: {exc.strerror or exc}")
