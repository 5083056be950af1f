"""package type: validation, the pure decision table, and the whole flow with a fake provider."""
from __future__ import annotations

from typing import List, Optional

import pytest

from ccm.model.errors import ProviderError, ValidationError
from ccm.model.events import ResourceState
from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources import properties as P
from ccm.resources.package.logic import PackageLogic

from tests import kit

REG = Registry(BUILTIN_TYPES)
SPEC = REG.spec("package")


def props(name="zsh", ensure="present", **extra):
    p = P.build(SPEC, dict(name=name, ensure=ensure, **extra))
    P.validate(SPEC, p)
    return p


def state(ensure, scheme="deb", candidate=None, versions=None):
    st = ResourceState(type="package", name="zsh", ensure=ensure, extra={"metadata": {"name": "zsh"}})
    st.internal["scheme"] = scheme
    if candidate is not None:
        st.internal["candidate"] = candidate
    if versions:
        st.internal["versions"] = versions
    return st


# --- validation ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,ensure,message", [
    ("zsh;rm", "present", 'package#zsh;rm: name: package name contains dangerous characters: "zsh;rm"'),
    ("zsh rm", "present", 'package#zsh rm: name: package name contains invalid characters: "zsh rm" (allowed: alphanumeric, ._+:~-)'),
    ("zsh\n", "present", 'package#zsh\n: name: package name contains dangerous characters: "zsh\\n"'),
    ("zsh", "1.0$(id)", 'package#zsh: ensure: package version/ensure contains dangerous characters: "1.0$(id)"'),
])
def test_validation_errors(name, ensure, message):
    with pytest.raises(ValidationError) as err:
        props(name, ensure)
    assert str(err.value) == message


def test_validation_accepts():
    for n in ("zsh", "libstdc++6", "python3.11", "g++:amd64", "a~b", "x-y_z".replace("_", "")):
        props(n, "2:1.0-1+b1~rc")
    with pytest.raises(ValidationError) as err:
        P.validate(SPEC, P.build(SPEC, {"name": "zsh"}))
    assert "ensure is required" in str(err.value)


# --- pure decisions ------------------------------------------------------------------------

@pytest.mark.parametrize("want,have,kw,actions,message", [
    ("latest", "absent", {}, ("install",), "Would have installed latest"),
    ("latest", "5.9-8", {"candidate": "5.9-8"}, (), ""),                      # already latest: stable (gap)
    ("latest", "5.9-9", {"candidate": "5.9-8"}, (), ""),                      # newer than the candidate
    ("latest", "5.9-8", {"candidate": "5.9-8+b1"}, ("upgrade",), "Would have upgraded to latest"),
    ("latest", "5.9-8", {}, ("upgrade",), "Would have upgraded to latest"),   # candidate unknown: as upstream
    ("latest", "5.8", {"scheme": "rpm", "candidate": "0:5.8-9.el9",
                       "versions": ["5.8", "5.8-9.el9", "0:5.8-9.el9"]}, (), ""),
    ("latest", "5.8", {"scheme": "rpm", "candidate": "5.8-10.el9",
                       "versions": ["5.8", "5.8-9.el9", "0:5.8-9.el9"]}, ("upgrade",), "Would have upgraded to latest"),
    ("present", "5.9-8", {}, (), ""),
    ("present", "absent", {}, ("install",), "Would have installed version present"),
    ("absent", "absent", {}, (), ""),
    ("absent", "5.9-8", {}, ("uninstall",), "Would have uninstalled"),
    ("5.9-8", "absent", {}, ("install",), "Would have installed version 5.9-8"),
    ("5.9-8", "5.9-8", {}, (), ""),
    ("5.9-9", "5.9-8", {}, ("upgrade",), "Would have upgraded to 5.9-9"),
    ("5.9~rc1", "5.9", {}, ("downgrade",), "Would have downgraded to 5.9~rc1"),   # deb ordering: ~ first
    ("1.0a", "1.0+", {}, ("downgrade",), "Would have downgraded to 1.0a"),     # dpkg, not upstream's rule
    ("5.8-9.el9", "5.8", {"scheme": "rpm", "versions": ["5.8", "5.8-9.el9", "0:5.8-9.el9"]}, (), ""),  # V-R converges
    ("5.8-10.el9", "5.8", {"scheme": "rpm", "versions": ["5.8", "5.8-9.el9", "0:5.8-9.el9"]},
     ("upgrade",), "Would have upgraded to 5.8-10.el9"),
    ("5.7", "5.8", {"scheme": "rpm", "versions": ["5.8", "5.8-9.el9", "0:5.8-9.el9"]},
     ("downgrade",), "Would have downgraded to 5.7"),
])
def test_plan_table(want, have, kw, actions, message):
    kw = dict(kw)
    st = state(have, scheme=kw.pop("scheme", "deb"), **kw)
    plan = PackageLogic().plan(props("zsh", want), st)
    assert plan.actions == actions
    assert plan.noop_message == message
    if actions and actions[0] != "uninstall":
        assert plan.params["ensure"] == want


@pytest.mark.parametrize("want,have,ok,reason", [
    ("present", "absent", False, "package is absent, expected present"),
    ("present", "1.0", True, ""),
    ("absent", "1.0", False, "package version 1.0 installed, expected absent"),
    ("latest", "absent", False, "package is absent, expected latest"),
    ("2.0", "1.0", False, "version mismatch: state=1.0 requested=2.0"),
    ("2.0", "absent", False, "version mismatch: state=absent requested=2.0"),
    ("2.0", "2.0", True, ""),
])
def test_is_desired(want, have, ok, reason):
    assert PackageLogic().is_desired(props("zsh", want), state(have)) == (ok, reason)


def test_unparseable_version_fails_with_the_parse_error():
    from ccm.model.errors import ResourceError

    with pytest.raises(ResourceError) as err:
        PackageLogic().plan(props("zsh", "1.0"), state("bad_version"))
    assert 'unable to parse "bad_version" as a debian version identifier' in str(err.value)


# --- the whole flow with a recording fake provider ----------------------------------------

class FakePackageProvider:
    name = "fake"
    scheme = "deb"

    def __init__(self, installed: Optional[str] = None, candidate: Optional[str] = "2.0", fail: str = ""):
        self.installed = installed
        self.candidate = candidate
        self.fail = fail
        self.calls: List[tuple] = []

    def status(self, pkg):
        self.calls.append(("status", pkg))
        return ResourceState(type="package", name=pkg, ensure=self.installed or "absent",
                             extra={"metadata": {"name": pkg, "version": self.installed or "absent", "provider": "fake"}})

    def available(self, pkg):
        self.calls.append(("available", pkg))
        return self.candidate

    def _set(self, op, pkg, ensure):
        self.calls.append((op, pkg, ensure))
        if self.fail:
            raise ProviderError(self.fail)
        self.installed = {"present": self.candidate, "latest": self.candidate}.get(ensure, ensure)

    def install(self, pkg, ensure):
        self._set("install", pkg, ensure)

    def upgrade(self, pkg, ensure):
        self._set("upgrade", pkg, ensure)

    def downgrade(self, pkg, version):
        self._set("downgrade", pkg, version)

    def uninstall(self, pkg):
        self.calls.append(("uninstall", pkg))
        self.installed = None


def run(provider, ensure, noop=False, name="zsh"):
    reg = Registry(BUILTIN_TYPES)
    reg.register(kit.StaticFactory("package", "fake", provider))
    m = kit.manager(log_level=None, registry=reg, noop=noop)
    p = P.build(reg.spec("package"), {"name": name, "ensure": ensure})
    P.validate(reg.spec("package"), p)
    return m.apply_resource(p)


def mutations(provider):
    return [c for c in provider.calls if c[0] not in ("status", "available")]


def test_flow_latest_already_latest_is_stable_and_runs_nothing():
    fake = FakePackageProvider(installed="2.0", candidate="2.0")
    ev = run(fake, "latest")
    assert not ev.failed and not ev.changed
    assert ev.status.stable and ev.final_ensure == "2.0"
    assert mutations(fake) == []


def test_flow_latest_upgrades_and_reports_change():
    fake = FakePackageProvider(installed="1.0", candidate="2.0")
    ev = run(fake, "latest")
    assert not ev.failed and ev.changed and ev.final_ensure == "2.0"
    assert mutations(fake) == [("upgrade", "zsh", "latest")]


def test_flow_install_then_stable():
    fake = FakePackageProvider()
    ev = run(fake, "present")
    assert ev.changed and not ev.failed and ev.final_ensure == "2.0" and ev.provider == "fake"
    ev2 = run(fake, "present")
    assert not ev2.changed and ev2.status.stable


def test_flow_noop_changes_nothing():
    fake = FakePackageProvider(installed="1.0")
    ev = run(fake, "absent", noop=True)
    assert ev.changed and ev.noop and ev.noop_message == "Would have uninstalled"
    assert ev.status.noop_message == "Would have uninstalled"
    assert mutations(fake) == [] and fake.installed == "1.0"


def test_flow_provider_failure_fails_only_the_resource():
    fake = FakePackageProvider(fail='failed to install package "zsh", apt-get exited 100: E: Unable to locate package zsh')
    ev = run(fake, "present")
    assert ev.failed
    assert ev.errors == ['failed to install package "zsh", apt-get exited 100: E: Unable to locate package zsh']


def test_flow_not_converged_reports_reason():
    class Stuck(FakePackageProvider):
        def _set(self, op, pkg, ensure):
            self.calls.append((op, pkg, ensure))   # the package manager "succeeds" but nothing changes

    ev = run(Stuck(installed="1.0"), "3.0")
    assert ev.failed
    assert ev.errors == ["failed to reach desired state: 3.0: version mismatch: state=1.0 requested=3.0"]


def test_selection_prefers_platform_family(monkeypatch):
    from ccm.resources.package import apt, dnf

    monkeypatch.setattr(apt, "on_path", lambda t: True)
    monkeypatch.setattr(dnf, "on_path", lambda t: True)
    reg = Registry(BUILTIN_TYPES)
    p = props()
    for family, want in (("debian", "apt"), ("rhel", "dnf"), ("fedora", "dnf"), ("", "apt")):
        facts = {"host": {"info": {"platformFamily": family}}}
        assert reg.select("package", facts, p).name == want


class CountingFacts(dict):
    """Facts that count how often a probe reads them (a real view gathers on first read)."""

    reads = 0

    def get(self, key, default=None):
        self.reads += 1
        return super().get(key, default)


@pytest.mark.parametrize("apt_on,dnf_on", [(True, False), (False, True), (True, True), (False, False)])
@pytest.mark.parametrize("family", ["debian", "rhel", ""])
@pytest.mark.parametrize("forced", [None, "apt", "dnf"])
def test_split_probe_chooses_as_is_manageable_and_reads_facts_only_for_a_tie(monkeypatch, apt_on, dnf_on,
                                                                           family, forced):
    from ccm.model.errors import NoSuitableProvider
    from ccm.resources.package import apt, dnf

    monkeypatch.setattr(apt, "on_path", lambda t: apt_on)
    monkeypatch.setattr(dnf, "on_path", lambda t: dnf_on)
    reg = Registry(BUILTIN_TYPES)
    p = props(provider=forced) if forced else props()
    facts = CountingFacts(host={"info": {"platformFamily": family}})
    # what the registry chose before the split: every usable factory's is_manageable, lowest priority
    # first, ties by registration order; a forced provider must be usable
    answers = [(f.is_manageable(facts, p), order, f.name) for order, f in enumerate(reg.factories("package"))]
    usable = sorted((m.priority, order, name) for m, order, name in answers if m.usable)
    if forced:
        expected = forced if any(name == forced for _, _, name in usable) else None
    else:
        expected = usable[0][2] if usable else None
    facts.reads = 0
    if expected is None:
        with pytest.raises(NoSuitableProvider):
            reg.select("package", facts, p)
    else:
        assert reg.select("package", facts, p).name == expected
    # facts are read (gathered, on a real run) only when two managers' tools are on PATH
    assert (facts.reads > 0) == (apt_on and dnf_on and not forced)


def test_name_check_allows_exactly_what_the_upstream_pattern_allows():
    """``check_name`` tests characters against a set instead of ``^[a-zA-Z0-9._+:~-]+$``
    (no ``re`` on a steady run): every verdict is the pattern's."""
    import re

    from ccm.resources.package import check_name

    pattern = re.compile(r"^[a-zA-Z0-9._+:~-]+$")
    samples = ["", "zsh", "libc6:amd64", "g++-12", "a b", "ä", "zsh\u00e9", "x/y", "x,y", "x=y", "%", "#x", "x#"]
    samples += [f"a{chr(c)}b" for c in range(32, 127)] + [chr(c) for c in range(32, 127)]
    for name in samples:
        try:
            check_name(name)
            ok = True
        except ValidationError:
            ok = False
        assert ok == bool(pattern.match(name)), repr(name)
