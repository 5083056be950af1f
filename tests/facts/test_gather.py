from __future__ import annotations

import json
import logging
import os
import threading
import time

import pytest

import ccm.facts as facts
from ccm.facts import FactObject, canonical, empty_family, gather, gather_system
from ccm.facts.files import files_in, load_file_facts, user_dir

HOST_INFO_KEYS = ["hostname", "uptime", "bootTime", "procs", "os", "platform", "platformFamily", "platformVersion",
                  "kernelVersion", "kernelArch", "virtualizationSystem", "virtualizationRole", "hostId"]


def test_real_gather_has_the_spec_tree(tmp_path):
    out = gather(system_dir=None, user_dir=str(tmp_path))
    assert list(canonical(out)) == ["cpu", "host", "memory", "network", "partition"]
    assert list(out["host"]["info"]) == HOST_INFO_KEYS
    assert out["host"]["info"]["os"] == "linux"
    assert isinstance(out["host"]["info"]["uptime"], int) and out["host"]["info"]["procs"] > 0
    assert sorted(out["network"]) == ["addresses", "default_ipv4", "default_ipv6", "interfaces"]
    lo = [i for i in out["network"]["interfaces"] if i["name"] == "lo"]
    assert lo and list(lo[0]) == ["index", "mtu", "name", "hardwareAddr", "flags", "addrs"]
    assert "loopback" in lo[0]["flags"] and {"addr": "127.0.0.1/8"} in lo[0]["addrs"]
    assert all(a["address"] != "127.0.0.1" for a in out["network"]["addresses"])
    assert sorted(out["partition"]) == ["partitions", "usage"]
    for part in out["partition"]["partitions"]:
        assert list(part) == ["device", "mountpoint", "fstype", "opts"] and isinstance(part["opts"], list)
    for usage in out["partition"]["usage"]:
        assert list(usage)[:3] == ["path", "fstype", "total"] and len(usage) == 10
    assert len(out["cpu"]["info"]) >= 1
    assert out["memory"]["virtual"]["total"] > 0
    assert sorted(out["memory"]["swap"]) == ["devices", "info"]
    json.dumps(out)  # plain JSON data


def test_skip_families_keeps_empty_shapes(tmp_path):
    out = gather(skip=["host", "network", "partition", "cpu", "memory"], system_dir=None, user_dir=str(tmp_path))
    assert out == {
        "host": {"info": {}},
        "network": {"addresses": [], "default_ipv4": "", "default_ipv6": "", "interfaces": []},
        "partition": {"partitions": [], "usage": []},
        "cpu": {"info": []},
        "memory": {"swap": {"devices": {}, "info": {}}, "virtual": {}},
    }


def test_skip_swap_only():
    out = gather_system(skip=["host", "network", "partition", "cpu", "swap"])
    assert out["memory"]["swap"] == {"devices": {}, "info": {}}
    assert out["memory"]["virtual"]["total"] > 0


def test_broken_family_is_empty_not_a_crash(monkeypatch, caplog):
    def boom():
        raise PermissionError("/proc/cpuinfo: permission denied")

    real = facts._collector
    monkeypatch.setattr(facts, "_collector", lambda name, swap: boom if name == "cpu" else real(name, swap))
    with caplog.at_level(logging.DEBUG, logger="ccm.facts"):
        out = gather_system(skip=["network", "partition"])
    assert out["cpu"] == {"info": []}
    assert out["host"]["info"]["os"] == "linux"
    assert "could not gather cpu facts: /proc/cpuinfo: permission denied" in caplog.text


def test_slow_family_misses_deadline(monkeypatch):
    release = threading.Event()

    def slow():
        release.wait(5)
        return {"info": [{"cpu": 0}]}

    real = facts._collector
    monkeypatch.setattr(facts, "_collector", lambda name, swap: slow if name == "cpu" else real(name, swap))
    start = time.monotonic()
    out = gather_system(skip=["network", "partition", "host"], timeout=0.3)
    elapsed = time.monotonic() - start
    release.set()
    assert out["cpu"] == {"info": []}
    assert out["memory"]["virtual"]
    assert elapsed < 2.0


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def test_file_facts_order_and_merge(tmp_path):
    sysd, usr = str(tmp_path / "sys"), str(tmp_path / "usr")
    _write(f"{sysd}/facts.json", '{"a": "sys.json", "l": [1], "m": {"x": 1}}')
    _write(f"{sysd}/facts.yaml", "a: sys.yaml\nl: [2]\n")
    _write(f"{sysd}/facts.d/20.json", '{"d": "20"}')
    _write(f"{sysd}/facts.d/10.YAML", "d: '10'\nm: {y: 2}\n")
    _write(f"{sysd}/facts.d/05.yml", "ignored: true\n")
    _write(f"{sysd}/facts.d/06.txt", "ignored: true\n")
    os.makedirs(f"{sysd}/facts.d/sub.json")
    _write(f"{usr}/facts.yaml", "a: user\nl: [3]\n")
    out = load_file_facts([sysd, usr])
    assert out == {"a": "user", "l": [1, 2, 3], "m": {"x": 1, "y": 2}, "d": "20"}


def test_file_facts_security_rules(tmp_path, caplog):
    real = str(tmp_path / "real")
    _write(f"{real}/facts.json", '{"linked": true}')
    _write(f"{real}/other.yaml", "linked_entry: true\n")
    d = str(tmp_path / "d")
    os.makedirs(f"{d}/facts.d")
    os.symlink(f"{real}/facts.json", f"{d}/facts.json")
    os.symlink(f"{real}/other.yaml", f"{d}/facts.d/10.yaml")
    _write(f"{d}/facts.d/20.yaml", "ok: true\n")
    _write(f"{d}/facts.d/30.yaml", "- a list\n")
    _write(f"{d}/facts.d/40.json", "{broken")
    d2 = str(tmp_path / "d2")
    os.makedirs(d2)
    os.symlink(f"{d}/facts.d", f"{d2}/facts.d")
    with caplog.at_level(logging.ERROR, logger="ccm.facts"):
        out = load_file_facts([d, d2, "relative/dir", f"{d}/../d"])
    assert out == {"ok": True}
    text = caplog.text
    assert f"skipping symlinked facts file {d}/facts.json" in text
    assert f"skipping symlinked facts file {d}/facts.d/10.yaml" in text
    assert f"skipping symlinked facts directory {d2}/facts.d" in text
    assert "skipping facts directory relative/dir: not an absolute path" in text
    assert "does not contain a map" in text and "could not decode facts file" in text
    assert files_in(f"{d}/../d") == [f"{d}/facts.d/20.yaml", f"{d}/facts.d/30.yaml", f"{d}/facts.d/40.json"]


def test_gather_merges_file_facts_over_system(tmp_path):
    _write(str(tmp_path / "u" / "facts.yaml"), "role: web\nhost:\n  info:\n    extra: 1\n")
    out = gather(skip=["network", "partition", "cpu", "memory"], system_dir=None, user_dir=str(tmp_path / "u"))
    assert out["role"] == "web"
    assert out["host"]["info"]["extra"] == 1 and out["host"]["info"]["os"] == "linux"
    # a merged object is a plain map now: printed sorted
    assert list(canonical(out)["host"]["info"])[:2] == ["bootTime", "extra"]


def test_user_dir_default(monkeypatch, tmp_path):
    assert user_dir({"XDG_CONFIG_HOME": "/x"}) == "/x/choria/ccm"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_dir({}) == f"{tmp_path}/.config/choria/ccm"


def test_canonical_order():
    value = {"b": FactObject(z=1, a=2), "a": [{"y": 1, "x": 2}]}
    out = canonical(value)
    assert list(out) == ["a", "b"] and list(out["b"]) == ["z", "a"] and list(out["a"][0]) == ["x", "y"]
    with pytest.raises(KeyError):
        empty_family("nope")


def test_host_survives_unreadable_psutil_sources(monkeypatch):
    import psutil

    from ccm.facts import host

    def denied():
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil, "boot_time", denied)
    monkeypatch.setattr(psutil, "pids", denied)
    info = host.gather()
    assert list(info) == HOST_INFO_KEYS
    assert info["bootTime"] == 0 and info["uptime"] == 0 and info["procs"] == 0
    assert info["os"] == "linux" and info["hostname"]
