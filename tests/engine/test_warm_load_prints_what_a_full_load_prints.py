"""The compiled-plan cache (``ccm.apply.plancache``): a warm run of an unchanged manifest
without templates skips loading (PyYAML is not even imported) and prints exactly what a
full load prints; every part of the key, and every kind of damaged entry, means a full
load."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest

from ccm.apply import plancache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs the real CLI, then says whether PyYAML was imported (a full load parses YAML; a
# plan from the cache does not). CCM_TEST_BUILD stands in for the pyz boot stub's build id.
PROBE = textwrap.dedent("""\
    import os, sys, types
    if os.environ.get("CCM_TEST_BUILD"):
        sys.modules["_ccm_stub"] = types.SimpleNamespace(BUILD_ID=os.environ["CCM_TEST_BUILD"])
    from ccm.cli.main import main
    rc = main(sys.argv[1:])
    with open(os.environ["CCM_TEST_PROBE"], "w") as fh:
        fh.write("full" if "yaml" in sys.modules else "plan")
    sys.exit(rc)
    """)


class Runner:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.cache = tmp_path / "cache"
        self.probe = tmp_path / "probe"
        self.cacheable = True

    def __call__(self, *args, **env):
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_") and k != "NO_SCHEMA_VALIDATION"}
        full_env.update(PYTHONPATH=ROOT, NO_COLOR="1", CCM_CACHE_DIR=str(self.cache),
                        CCM_LOCK_DIR=os.environ["CCM_LOCK_DIR"], CCM_TEST_PROBE=str(self.probe))
        full_env.update(env)
        before = self.entries()
        r = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=str(self.tmp), env=full_env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        # a full load of a manifest that can be cached (re)writes its entry; a plan does not
        written = not self.entries() <= before
        if "--render" not in args:   # --render prints YAML: it imports PyYAML either way
            assert self.probe.read_text() == ("full" if written or not self.cacheable else "plan")
        return r.stdout + r.stderr, "full" if written or not self.cacheable else "plan"

    def entries(self):
        return {(n, (self.cache / n).lstat().st_ino, (self.cache / n).lstat().st_mtime_ns) for n in self.plans()}

    def plans(self):
        return sorted(p.name for p in self.cache.iterdir() if p.name.startswith(plancache.PREFIX)) \
            if self.cache.is_dir() else []


@pytest.fixture
def run(tmp_path):
    return Runner(tmp_path)


def manifest(tmp_path, content="a\n", extra=""):
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(f"""\
        data:
          motd: plain
          port: 0644
        hierarchy:
          order: ["role:{{{{ lookup('facts.role') }}}}"]
        overrides:
          "role:web":
            motd: for the web
        ccm:
          pre_message: starting
          post_message: done
          resources:
            - file:
                - defaults: {{owner: root, group: root, mode: "0644", ensure: present}}
                - {tmp_path}/a: {{content: {json.dumps(content)}}}
                - {tmp_path}/b: {{content: "b\\n"}}
            - exec:
                - /bin/true: {{require: ["file#{tmp_path}/a"], returns: [0]}}
            - apply:
                - child.yaml: {{data: {{a: 0644, b: [1, 2.5, ~, yes, !!binary aGk=]}}}}
        {extra}"""))
    (tmp_path / "child.yaml").write_text(textwrap.dedent(f"""\
        ccm:
          resources:
            - file:
                - {tmp_path}/c: {{ensure: present, content: "c\\n", owner: root, group: root, mode: "0600"}}
        """))
    return str(path)


def normal(text):
    """Output with times and ids taken out (they differ between any two runs)."""
    text = re.sub(r"\b(runtime|Run Time:) ?=?\S+", r"\1 T", text)
    text = re.sub(r'"(event_id|timestamp|start_time|end_time|mtime)": "[^"]*"', r'"\1": "X"', text)
    return re.sub(r'"(duration|total_duration)": \d+', r'"\1": 0', text)


def test_a_warm_run_uses_the_plan_and_prints_what_a_full_load_prints(run, tmp_path):
    m = manifest(tmp_path)
    for flags in ([], ["--json"], ["--render"], ["--noop"]):
        run.cache.mkdir(exist_ok=True)
        for p in run.cache.iterdir():
            p.unlink()
        if not flags:   # the files are in place from here on: cold and warm both change nothing
            run("apply", m)
            for p in run.cache.iterdir():
                p.unlink()
        cold, how_cold = run("apply", *flags, m, "--fact", "role=web")
        warm, how_warm = run("apply", *flags, m, "--fact", "role=web")
        assert (how_cold, how_warm) == ("full", "plan"), flags
        assert normal(warm) == normal(cold), flags
    assert "motd: for the web" in run("apply", "--render", m, "--fact", "role=web")[0]


def test_the_nested_manifest_gets_its_own_plan(run, tmp_path):
    m = manifest(tmp_path)
    run("apply", m)
    assert len(run.plans()) == 2   # the top manifest and child.yaml
    assert run("apply", m)[1] == "plan"


def test_facts_that_change_the_resolved_data_mean_a_full_load(run, tmp_path):
    m = manifest(tmp_path)
    run("apply", "--render", m, "--fact", "role=web")
    out, how = run("apply", "--render", m, "--fact", "role=db")
    assert how == "full" and "motd: plain" in out
    out, how = run("apply", "--render", m, "--fact", "role=db")
    assert how == "plan" and "motd: plain" in out
    out, how = run("apply", "--render", m, "--fact", "role=web")
    assert how == "full" and "motd: for the web" in out


def test_changed_hiera_data_means_a_full_load(run, tmp_path):
    m = manifest(tmp_path)
    hiera = tmp_path / "extra.yaml"
    hiera.write_text("data:\n  motd: from the overlay\n")
    assert "from the overlay" in run("apply", "--render", m, "--hiera", str(hiera))[0]
    assert run("apply", "--render", m, "--hiera", str(hiera))[1] == "plan"
    hiera.write_text("data:\n  motd: changed overlay\n")
    out, how = run("apply", "--render", m, "--hiera", str(hiera))
    assert how == "full" and "changed overlay" in out


def test_a_changed_manifest_means_a_full_load(run, tmp_path):
    m = manifest(tmp_path)
    run("apply", m)
    manifest(tmp_path, content="changed\n")
    out, how = run("apply", m)
    assert how == "full" and (tmp_path / "a").read_text() == "changed\n"
    assert run("apply", m)[1] == "plan"


def test_another_build_means_a_full_load(run, tmp_path):
    m = manifest(tmp_path)
    assert run("apply", m, CCM_TEST_BUILD="1" * 64)[1] == "full"
    assert run("apply", m, CCM_TEST_BUILD="1" * 64)[1] == "plan"
    assert run("apply", m, CCM_TEST_BUILD="2" * 64)[1] == "full"
    assert run("apply", m)[1] == "full"   # a source tree: the digest of ccm's sources


def test_schema_validation_setting_is_part_of_the_key(run, tmp_path):
    m = manifest(tmp_path)
    run("apply", m, NO_SCHEMA_VALIDATION="1")
    assert run("apply", m, NO_SCHEMA_VALIDATION="1")[1] == "plan"
    assert run("apply", m)[1] == "full"


def test_validate_always_validates_in_full(run, tmp_path):
    m = manifest(tmp_path)
    run("apply", m)
    run.cacheable = False   # validate writes no plan either
    assert run("validate", m)[1] == "full"


@pytest.mark.parametrize("content", ["{{ Facts.role }}\n", "${ Facts.role }\n"])
def test_templated_manifests_are_not_cached_with_the_template_cache_off(run, tmp_path, content):
    m = manifest(tmp_path, content=content)
    run.cacheable = False
    run("apply", m, "--fact", "role=web", CCM_TEMPLATE_CACHE="0")
    assert len(run.plans()) == 1   # child.yaml's: it has no template
    assert run("apply", m, "--fact", "role=web", CCM_TEMPLATE_CACHE="0")[1] == "full"
    assert len(run.plans()) == 1


@pytest.mark.parametrize("content", ["{{ Facts.site }}\n", "${ Facts.site }\n", "{{ upper(Data.motd) }}\n"])
def test_templates_rendered_at_run_time_are_cached_with_the_plan(run, tmp_path, content):
    m = manifest(tmp_path, content=content)
    site = ("--fact", "role=web", "--fact", "site=zrh")
    run("apply", m, *site)   # the files in place: cold and warm both change nothing
    for p in run.cache.iterdir():
        p.unlink()
    cold, how_cold = run("apply", m, *site)
    warm, how_warm = run("apply", m, *site)
    assert (how_cold, how_warm) == ("full", "plan")
    assert normal(warm) == normal(cold)
    assert len(run.plans()) == 2
    # another fact the data does not read: the same plan (it holds the template, not what
    # it renders), rendered again
    other, how = run("apply", m, "--fact", "role=web", "--fact", "site=gva")
    assert how == "plan"
    assert (tmp_path / "a").read_text() == ("FOR THE WEB\n" if "upper" in content else "gva\n")
    # another role: other data (the override), a full load
    assert run("apply", m, "--fact", "role=db", "--fact", "site=gva")[1] == "full"
    assert (tmp_path / "a").read_text() == ("PLAIN\n" if "upper" in content else "gva\n")


def test_a_template_rendered_while_loading_is_not_cached(run, tmp_path):
    m = manifest(tmp_path, extra="")
    text = open(m).read().replace('mode: "0644", ensure', 'mode: "{{ Facts.mode }}", ensure')
    open(m, "w").write(text)
    run.cacheable = False
    run("apply", m, "--fact", "mode=0644")
    assert len(run.plans()) == 1   # child.yaml's
    assert run("apply", m, "--fact", "mode=0644")[1] == "full"


def _damage(entry, how):
    data = entry.read_bytes()
    if how == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif how == "flipped":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif how == "garbage":
        entry.write_bytes(b"\x00" * 100)
    elif how == "empty":
        entry.write_bytes(b"")
    elif how == "foreign":
        os.chown(entry, 65534, 65534)
    elif how == "group-writable":
        os.chmod(entry, 0o664)
    elif how == "symlink":
        other = entry.parent.parent / "elsewhere"
        other.write_bytes(data)
        entry.unlink()
        entry.symlink_to(other)
    elif how == "other-key":
        body = data[len(plancache.MAGIC) + 65:]
        import hashlib
        import marshal

        stored = list(marshal.loads(body))
        stored[0] = plancache.PREFIX + "0" * 64   # a valid entry, written for another key
        payload = marshal.dumps(tuple(stored), 2)
        entry.write_bytes(plancache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


@pytest.mark.parametrize("how", ["truncated", "flipped", "garbage", "empty", "foreign", "group-writable",
                                 "symlink", "other-key"])
def test_a_damaged_or_foreign_entry_means_a_full_load(run, tmp_path, how):
    if how == "foreign" and os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    m = manifest(tmp_path)
    run("apply", "--json", m)   # the files are in place from here on
    reference, how_loaded = run("apply", "--json", m)
    assert how_loaded == "plan"
    for name in run.plans():
        _damage(run.cache / name, how)
    out, how_loaded = run("apply", "--json", m)
    assert how_loaded == "full" and normal(out) == normal(reference)
    assert run("apply", "--json", m)[1] == "plan"   # written anew, as a regular file of ours
    assert all(not (run.cache / n).is_symlink() and (run.cache / n).stat().st_uid == os.geteuid()
               for n in run.plans())


def test_a_symlinked_cache_directory_is_not_used(run, tmp_path):
    m = manifest(tmp_path)
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    link = tmp_path / "link-cache"
    link.symlink_to(real)
    run.cacheable = False
    run("apply", m, CCM_CACHE_DIR=str(link))
    assert list(real.iterdir()) == []
    assert run("apply", m, CCM_CACHE_DIR=str(link))[1] == "full"


def test_plain_data_round_trips_exactly():
    from ccm.yamlio import TextInt

    value = {"a": TextInt(420, "0644"), TextInt(1, "01"): [1.5, None, True, b"\x00", "x"],
             "t": ("p", TextInt(2, "2")), "s": {1, 2}, "f": frozenset({"x"}), "n": [[{"deep": "er"}]]}
    back = plancache.decode(plancache.encode(value))
    assert back == value
    assert type(back["a"]) is TextInt and back["a"].text == "0644"
    assert [type(k) for k in back] == [type(k) for k in value] and next(k for k in back if k == 1).text == "01"
    assert type(back["t"]) is tuple and back["t"][1].text == "2"
    assert math.isnan(plancache.decode(plancache.encode(float("nan"))))
    assert plancache.data_digest({"a": 1}) == plancache.data_digest({"a": 1}) != plancache.data_digest({"a": 2})
    assert plancache.data_digest({"a": TextInt(1, "1")}) != plancache.data_digest({"a": TextInt(1, "01")})


def test_anything_but_plain_data_is_not_cached():
    with pytest.raises(plancache.Uncacheable):
        plancache.encode({"a": object()})
    assert plancache.data_digest({"a": object()}) is None
