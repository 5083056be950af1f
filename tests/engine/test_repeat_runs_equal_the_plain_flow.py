"""Steady runs (issue 16): the fast paths of a run that changes nothing give the events
and lines of the plain flow.

The plain flow is the unbatched one (``CCM_WRITE_BATCH=0``: every event settled as it
comes, every file hashed); the default flow settles steady events without a batch
flush and compares files with their desired bytes. Both run the same mixed manifest
(files in place, a changed, a missing, a wrong-mode and a too-long file, a directory,
an exec, a failing resource, a source copy) twice, first and steady, and everything but
ids, times and durations must be equal: every event's wire dict, the summary, the log.
"""
from __future__ import annotations

import grp
import os
import pwd

import pytest

from ccm.apply import load_manifest
from ccm.model.events import EventRecord, TransactionEvent
from tests import twins
from tests import kit
from tests.kit import output

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name


def _file(path, content=None, *, mode="0644", owner=ME, ensure="present", source=None):
    lines = [f"    - file:\n        - {path}:\n            ensure: {ensure}\n",
             f"            owner: {owner}\n            group: {MYGROUP}\n            mode: \"{mode}\"\n"]
    if content is not None:
        lines.append(f"            content: {content!r}\n".replace("'", '"'))
    if source is not None:
        lines.append(f"            source: {source}\n")
    return "".join(lines)


def _workspace(root):
    d = root / "d"
    d.mkdir(parents=True)
    (d / "same").write_text("same\n")
    (d / "changed").write_text("old\n")
    (d / "longer").write_text("desired\nand more\n")
    (d / "shorter").write_text("des")
    (d / "mode").write_text("mode\n")
    os.chmod(d / "mode", 0o600)
    (d / "src").write_text("copied\n")
    (d / "empty").write_text("")
    resources = [
        _file(d / "same", "same\n"),
        _file(d / "changed", "new\n"),
        _file(d / "longer", "desired\n"),
        _file(d / "shorter", "desired\n"),
        _file(d / "missing", "created\n"),
        _file(d / "mode", "mode\n"),
        _file(d / "empty", ""),
        _file(d / "copy", source=d / "src"),
        _file(d / "sub", ensure="directory", mode="0755"),
        "    - exec:\n        - /bin/true:\n            command: /bin/true\n",
        _file(d / "bad", "x\n", owner="ccm-no-such-user"),
        _file(d / "after", "after\n"),
    ]
    manifest = root / "m.yaml"
    manifest.write_text("ccm:\n  resources:\n" + "".join(resources))
    return manifest


def _runs(root):
    manifest = _workspace(root)
    out = []
    for _ in range(2):   # first, then steady
        m = kit.manager()
        result = m.execute(load_manifest(str(manifest), m))
        out.append(([twins.wire(root, e) for e in result.events], twins.summary(result),
                    twins.log_text(root, output(m))))
    return out


def test_steady_and_first_runs_equal_the_plain_flow(tmp_path, monkeypatch):
    monkeypatch.setenv("CCM_WRITE_BATCH", "0")
    plain = _runs(tmp_path / "plain")
    monkeypatch.delenv("CCM_WRITE_BATCH")
    fast = _runs(tmp_path / "fast")
    assert len(plain[0][0]) == 12
    for (p_events, p_summary, p_text), (f_events, f_summary, f_text) in zip(plain, fast):
        assert f_events == p_events
        assert f_summary == p_summary
        assert f_text == p_text
    first, steady = fast
    assert first[1]["changed_resources"] == 9 and first[1]["failed_resources"] == 1
    assert steady[1]["changed_resources"] == 1   # the exec runs every time
    assert steady[1]["stable_resources"] == 10 and steady[1]["failed_resources"] == 1


@pytest.mark.parametrize("keep", [True, False])
def test_steady_run_keeps_what_the_store_keeps(tmp_path, monkeypatch, keep):
    """Records or whole events, as the store is told; counts unchanged."""
    manifest = _workspace(tmp_path)
    m = kit.manager()
    m.execute(load_manifest(str(manifest), m))
    m = kit.manager()
    m.session.keep_events = keep
    result = m.execute(load_manifest(str(manifest), m))
    assert [isinstance(e, TransactionEvent if keep else EventRecord) for e in result.events] == [True] * 12
    assert [e.changed for e in result.events].count(True) == 1


def test_the_resource_log_binds_on_first_use_and_logs_as_the_bound_log():
    from ccm.resources.base import RunFlow

    m = kit.manager()
    parent = m.user_log
    ctx = RunFlow(m, m.single_run()).context("file", "/etc/x")
    eager = parent.bind(type="file", name="/etc/x")
    ctx.log.info("Would have removed file", file="/a")
    eager.info("Would have removed file", file="/a")
    ctx.log.bind(check="c").warn("w", ("k", 1))
    eager.bind(check="c").warn("w", ("k", 1))
    lines = parent.stream.getvalue().splitlines()
    assert lines[0] == lines[1] == " INFO  Would have removed file type=file name=/etc/x file=/a"
    assert lines[2] == lines[3] == " WARN  w type=file name=/etc/x check=c k=1"
    assert parent.records[0] == parent.records[1] and len(parent.records) == 4
    assert ctx.log is ctx.log and ctx.log.attrs == eager.attrs


def test_a_run_flow_context_holds_what_the_plain_context_holds():
    """RunFlow's per-resource context (run-wide fields as class attributes) against
    ``base.context``, field by field; each resource's context is its own."""
    from ccm.fsafe import DIRECT
    from ccm.model.run import Run
    from ccm.resources.base import RunFlow, context

    m = kit.manager(noop=True, working_dir="/srv/w")
    run = Run(log=m.user_log, sink=DIRECT, noop=True, depth=1, chain=("/a.yaml", "/b.yaml"))
    flow = RunFlow(m, run)
    ctx, other = flow.context("file", "/etc/x"), flow.context("exec", "y")
    plain = context(m, run, flow.facts)
    for field in ("noop", "working_dir", "runner", "facts", "depth", "chain", "run_log"):
        assert getattr(ctx, field) == getattr(plain, field), field
    assert (ctx.nested.manager, ctx.nested.run) == (plain.nested.manager, plain.nested.run) == (m, run)
    assert ctx.template_environment().keys() == plain.template_environment().keys()   # made afresh per call
    assert ctx._template_environment == plain._template_environment   # the manager's own method
    assert ctx.log.attrs == [("type", "file"), ("name", "/etc/x")] and other.log.attrs == [("type", "exec"), ("name", "y")]
    ctx.noop = False   # a type may set its own: the run's stays
    assert other.noop is True and flow.context("file", "z").noop is True

