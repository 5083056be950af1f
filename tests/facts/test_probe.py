"""Probing one fact without a gather (``FactsCache.probe``, ``ccm.facts.probe_system``):
every answer is what the gathered, merged facts say at that path, and nothing is gathered
while the layers can tell."""
from __future__ import annotations

import json

import pytest

import ccm.facts
from ccm.manager import FactsCache, NoopMetrics
from ccm.lazymap import LazyMapping, value_at

FAMILY = ("host", "info", "platformFamily")


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """Private system and user fact directories (none of the host's)."""
    system, user = tmp_path / "etc", tmp_path / "config"
    (user / "choria" / "ccm").mkdir(parents=True)
    system.mkdir()
    monkeypatch.setattr(ccm.facts, "SYSTEM_DIR", str(system))
    monkeypatch.setattr(ccm.facts.load_file_facts, "__kwdefaults__", {"system_dir": str(system), "user_dir": None})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    return system, user / "choria" / "ccm"


@pytest.fixture
def gathers(monkeypatch):
    """Every full gather of the system's facts (``ccm.facts.gather``), as it happens."""
    seen = []
    real = ccm.facts.gather
    monkeypatch.setattr(ccm.facts, "gather", lambda: seen.append(1) or real())
    return seen


def _cache(extra=None, facts=None):
    return FactsCache(facts, extra or {}, NoopMetrics())


def _gathered(extra):
    """What the full path says: gather, merge, read."""
    return value_at(_cache(extra).get(), FAMILY)


def test_the_platform_family_without_a_gather_is_the_gathered_one(dirs, monkeypatch, gathers):
    cache = _cache()
    value = cache.probe(FAMILY)
    assert gathers == []   # nothing gathered
    assert value == _gathered({}) and value   # this host has one (/etc/os-release)
    calls = []
    monkeypatch.setattr(ccm.facts, "probe_system", lambda path: calls.append(path) or (True, "x"))
    assert cache.probe(FAMILY) == value and calls == []   # remembered until the next gather
    cache.refresh()
    assert cache.probe(FAMILY) == "x" and calls == [FAMILY]


@pytest.mark.parametrize("extra,files,expected_gather", [
    ({"host": {"info": {"platformFamily": "rhel"}}}, {}, False),                   # --fact wins
    ({}, {"host": {"info": {"platformFamily": "suse"}}}, False),                   # a facts file
    ({"host": {"info": {"platformFamily": "rhel"}}}, {"host": {"info": {"platformFamily": "suse"}}}, False),
    ({"host": "flat"}, {}, False),                                                  # replaces host: none
    ({}, {"host": {"info": "flat"}}, False),
    ({"host": {}}, {"host": {"info": {"platformFamily": "suse"}}}, False),        # an empty map merges
    ({"host": {"info": {}}}, {}, False),                                            # the system's shows through
    ({"host": {"info": {"platformFamily": ["a"]}}}, {"host": {"info": {"platformFamily": ["b"]}}}, True),
    ({"host": {"info": {"platformFamily": {"k": 1}}}}, {}, True),                   # maps merge: gathered
])
def test_each_layer_as_the_merge_has_it(dirs, gathers, extra, files, expected_gather):
    _system, user = dirs
    if files:
        (user / "facts.json").write_text(json.dumps(files))
    cache = _cache(extra)
    value = cache.probe(FAMILY)
    assert bool(gathers) == expected_gather
    assert value == _gathered(extra)


def test_given_or_gathered_facts_are_read_as_they_are(dirs):
    given = _cache(facts={"host": {"info": {"platformFamily": "arch"}}})
    assert given.probe(FAMILY) == "arch"
    cache = _cache()
    facts = cache.get()
    assert cache.probe(FAMILY) == value_at(facts, FAMILY)
    assert cache.probe(("cpu", "info")) == facts["cpu"]["info"]   # no cheap source: the facts


def test_a_fact_without_a_cheap_source_is_gathered(dirs, gathers):
    cache = _cache()
    value = cache.probe(("cpu", "info"))
    assert gathers == [1]
    assert value == value_at(cache.get(), ("cpu", "info")) and gathers == [1]   # gathered once
    assert ccm.facts.probe_system(("host", "platformFamily")) == (True, None)   # the host family is only info
    assert ccm.facts.probe_system(("network", "interfaces")) == (False, None)


def test_the_view_probes_through_its_owner_until_resolved():
    seen = []
    view = LazyMapping(lambda: {"a": {"b": 1}}, lambda path: seen.append(path) or 7)
    assert view.probe(("a", "b")) == 7 and seen == [("a", "b")]
    assert view["a"] == {"b": 1}
    assert view.probe(("a", "b")) == 1 and view.probe(("a", "x")) is None and len(seen) == 1
    assert LazyMapping(lambda: {"a": 2}).probe(("a",)) == 2


def test_the_package_tie_is_broken_without_gathering_every_fact(dirs, monkeypatch, gathers):
    from ccm.resources.package import apt, dnf
    from tests import kit

    monkeypatch.setattr(apt, "on_path", lambda t: True)
    monkeypatch.setattr(dnf, "on_path", lambda t: True)
    for family, want in (("rhel", "dnf"), ("debian", "apt")):
        m = kit.manager()
        props = m.prepare("package", {"name": "zsh", "ensure": "present"})   # (a template environment: facts)
        m._facts_cache = FactsCache(None, {"host": {"info": {"platformFamily": family}}}, NoopMetrics())   # --fact
        assert m.registry.select("package", m.facts_view(), props).name == want
        assert gathers == []   # no gather
