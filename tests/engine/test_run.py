"""The per-run object (``ccm.model.run.Run``) and the run's ``Publisher``: every run gets
its own settings, nothing of a run stays on the manager, publishers hear each event
(nested runs' too) and one end per top-level run."""
from __future__ import annotations

import ast
import grp
import os
import pwd

import pytest

from ccm.apply import load_manifest
from ccm.fsafe import DIRECT
from ccm.model.provider import ProviderFactory
from ccm.model.run import NO_PUBLISHER, Publisher, Publishers, Run, combine
from ccm.registry import Registry
from tests import kit
from tests.kit import output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name


class Recorder(Publisher):
    hears_events = True

    def __init__(self, name="r", calls=None, fail=None):
        self.name, self.calls, self.fail = name, [] if calls is None else calls, fail

    def event(self, run, event, props):
        self.calls.append((self.name, "event", run, event.type, event.name))
        if event.name == self.fail:
            event.fail("refused by the publisher")

    def finished(self, run, result):
        self.calls.append((self.name, "finished", run, result.summary.total_resources))


class EndOnly(Recorder):
    hears_events = False


def _file(path, content):
    return (f"    - file:\n        - {path}:\n            ensure: present\n            content: \"{content}\"\n"
            f"            owner: {ME}\n            group: {MYGROUP}\n            mode: \"0644\"\n")


def _nested(tmp_path):
    (tmp_path / "child.yaml").write_text("ccm:\n  resources:\n" + _file(tmp_path / "c1", "c1")
                                         + _file(tmp_path / "c2", "c2"))
    top = tmp_path / "top.yaml"
    top.write_text("ccm:\n  resources:\n" + _file(tmp_path / "t1", "t1")
                   + "    - apply:\n        - child.yaml: {}\n" + _file(tmp_path / "t2", "t2"))
    return top


def test_combine_leaves_out_the_default_and_flattens_composites():
    a, b, c = Recorder("a"), EndOnly("b"), Recorder("c")
    assert combine() is NO_PUBLISHER and combine(None, NO_PUBLISHER) is NO_PUBLISHER
    assert combine(None, a) is a
    ab = combine(a, NO_PUBLISHER, b)
    assert isinstance(ab, Publishers) and ab.members == (a, b) and ab.hears_events
    assert combine(ab, c).members == (a, b, c)
    assert not combine(b, EndOnly("d")).hears_events
    assert not NO_PUBLISHER.hears_events


def test_a_composite_tells_events_to_those_that_hear_them_and_the_end_to_all():
    calls = []
    both = combine(Recorder("a", calls), EndOnly("b", calls))
    m = kit.manager()
    run = m.single_run()

    class E:
        type, name = "file", "/x"

    both.event(run, E(), None)

    class R:
        class summary:
            total_resources = 3

    both.finished(run, R())
    assert [c[:2] for c in calls] == [("a", "event"), ("a", "finished"), ("b", "finished")]


def test_a_child_run_is_one_level_deeper_and_shares_cache_diff_and_publisher():
    m = kit.manager()
    publisher, cache = Recorder(), object()
    top = Run(log=m.user_log, sink=DIRECT, cache=cache, diff=True, publisher=publisher, chain=("/top.yaml",),
              source="top.yaml")
    log = m.user_log.bind(manifest="child")
    kid = top.child("/child.yaml", noop=True, health_check_only=False, log=log, sink=DIRECT, source="child.yaml")
    assert (kid.depth, kid.chain, kid.noop, kid.health_check_only) == (1, ("/top.yaml", "/child.yaml"), True, False)
    assert kid.cache is cache and kid.diff and kid.publisher is publisher and kid.log is log
    assert kid.parent is top and top.top and not kid.top and top.noop is False
    grandchild = kid.child("/g.yaml", noop=False, health_check_only=True, log=log, sink=DIRECT, source="g.yaml")
    assert grandchild.noop and grandchild.health_check_only, "a mode is switched on, never off"


def test_publishers_hear_every_event_nested_ones_too_and_one_end_per_top_level_run(tmp_path):
    calls = []
    m = kit.manager()
    m.add_publisher(Recorder("manager", calls))
    top = load_manifest(str(_nested(tmp_path)), m)
    result = m.execute(top, publisher=Recorder("run", calls))
    assert not result.failed
    events = [(c[0], c[3], c[4]) for c in calls if c[1] == "event"]
    order = [("file", str(tmp_path / "t1")), ("file", str(tmp_path / "c1")), ("file", str(tmp_path / "c2")),
             ("apply", "child.yaml"), ("file", str(tmp_path / "t2"))]
    assert [e[1:] for e in events if e[0] == "run"] == [e[1:] for e in events if e[0] == "manager"] == order
    assert [e[0] for e in events] == ["manager", "run"] * 5, "the manager's publisher first, then the run's"
    runs = {c[4]: c[2] for c in calls if c[1] == "event"}
    assert runs[str(tmp_path / "c1")].parent is runs[str(tmp_path / "t1")], "a child's events come with its run"
    assert runs[str(tmp_path / "c1")].depth == 1 and runs["child.yaml"].top
    ends = [c for c in calls if c[1] == "finished"]
    assert [(c[0], c[3]) for c in ends] == [("manager", 5), ("run", 5)], "the nested run folds into its parent's"
    assert ends[0][2] is runs[str(tmp_path / "t1")]


def test_a_publisher_can_fail_an_event_before_it_is_logged_and_recorded(tmp_path):
    m = kit.manager()
    top = load_manifest(str(_nested(tmp_path)), m)
    result = m.execute(top, publisher=Recorder(fail=str(tmp_path / "t2")))
    failed = [e for e in result.events if e.failed]
    assert [e.name for e in failed] == [str(tmp_path / "t2")]
    assert m.session.summary().failed_resources == 1
    assert f"file#{tmp_path / 't2'} failed" in output(m) and "refused by the publisher" in output(m)


def test_a_run_leaves_the_manager_as_it_was(tmp_path):
    """No per-run setting is stored on the manager, not even for the run's duration:
    every attribute holds the same object before and after runs with every option."""
    m = kit.manager()
    top = load_manifest(str(_nested(tmp_path)), m)
    before = dict(vars(m))
    log = m.user_log
    m.execute(top, publisher=Recorder(), quiet=True, diff=True)
    m.execute(top, noop=True, diff=True)
    m.execute(top, health_check_only=True)
    assert vars(m).keys() == before.keys()
    changed = [k for k, v in vars(m).items() if v is not before[k]]
    assert changed == [], changed
    assert m.user_log is log and log.quiet is False and log.attrs == []


def test_a_quiet_run_logs_nothing_and_the_next_run_logs_again(tmp_path):
    m = kit.manager()
    top = load_manifest(str(_nested(tmp_path)), m)
    m.execute(top, quiet=True)
    assert output(m) == ""
    m.execute(top)
    assert "Executing manifest" in output(m) and "stable" in output(m)


def test_the_registry_takes_only_declared_factories():
    class Duck:
        type_name, name = "widget", "duck"

        def is_manageable(self, facts, props):
            return (True, 1)

    with pytest.raises(TypeError, match="not a ccm.model.provider.ProviderFactory"):
        Registry().register(Duck())
    declared = ProviderFactory()
    assert not (declared.manageable_is_constant or declared.split_probe or declared.provider_per_run
                or declared.prefetches or declared.stages_writes), "every capability is off unless declared"


# the modules that declare capabilities instead of probing for them; the only getattr left
# is the registry's lookup of a name in an imported module ("module:attr" paths)
NO_PROBES = ("ccm/resources/base.py", "ccm/registry.py", "ccm/apply/engine.py", "ccm/apply/batch.py",
             "ccm/registration/publish.py", "ccm/manager.py", "ccm/report.py", "ccm/cli/apply_cmd.py",
             "ccm/model/run.py")
ALLOWED = {("ccm/registry.py", "getattr(mod, attr)")}


def test_no_capability_probes():
    found = []
    for rel in NO_PROBES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            source = fh.read()
        for node in ast.walk(ast.parse(source)):
            probe = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            if probe and node.func.id in ("getattr", "hasattr"):
                call = ast.get_source_segment(source, node)
                if (rel, call) not in ALLOWED:
                    found.append(f"{rel}:{node.lineno}: {call}")
    assert found == [], found


@pytest.mark.parametrize("template_free", [True, False])
def test_each_gate_of_the_flow_is_honoured_with_or_without_templates(tmp_path, template_free):
    """``RunFlow`` tests every key of ``_GATES`` on its own (not through the set): each one
    set gates its resource, in a template-free manifest (the plan cache's) as in any other."""
    from ccm.resources.base import _GATES

    bad = "    - exec:\n        - bad:\n            command: /bin/false\n"
    gated = {
        "control": _file(tmp_path / "c", "c") + "            control:\n              if: \"1 == 2\"\n",
        "require": _file(tmp_path / "r", "r") + "            require: [\"exec#bad\"]\n",
        "health_checks": _file(tmp_path / "h", "h")
        + "            health_checks:\n              - command: /bin/false\n",
    }
    assert set(gated) == set(_GATES)
    path = tmp_path / "m.yaml"
    path.write_text("ccm:\n  resources:\n" + bad + "".join(gated[k] for k in _GATES) + _file(tmp_path / "p", "p"))
    m = kit.manager()
    manifest = load_manifest(str(path), m)
    manifest.template_free = template_free
    result = m.execute(manifest)
    by_name = {os.path.basename(e.name): e for e in result.events}
    assert by_name["c"].skipped and not (tmp_path / "c").exists(), "control"
    assert by_name["r"].skipped and by_name["r"].unmet_requirements == ["exec#bad"], "require"
    assert by_name["h"].failed and by_name["h"].health_checks[0].status == 1, "health_checks"
    assert by_name["p"].changed and not by_name["p"].skipped and not by_name["p"].health_checks
