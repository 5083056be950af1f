from __future__ import annotations

import os

from ccm.facts.cpu import parse_cpuinfo
from ccm.facts.memory import parse_meminfo, parse_swaps, parse_vmstat, swap_info, virtual_memory
from ccm.facts.network import build_addresses, routable

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


def _read(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def test_cpuinfo_fixture():
    cpus = parse_cpuinfo(_read("cpuinfo_amd_epyc_2cpu.txt"))
    assert len(cpus) == 2
    first = cpus[0]
    assert list(first) == ["cpu", "vendorId", "family", "model", "stepping", "physicalId", "coreId", "cores",
                           "modelName", "mhz", "cacheSize", "flags", "microcode"]
    assert first["cpu"] == 0 and cpus[1]["cpu"] == 1 and cpus[1]["coreId"] == "1"
    assert first["vendorId"] == "AuthenticAMD" and first["family"] == "26" and first["model"] == "2"
    assert first["stepping"] == 1 and first["cores"] == 2 and first["cacheSize"] == 1024
    assert first["mhz"] == 2596.098 and first["microcode"] == "0x1000065"
    assert "avx2" in first["flags"] and first["flags"][0] == "fpu"


def test_cpuinfo_max_freq_overrides_mhz():
    cpus = parse_cpuinfo(_read("cpuinfo_amd_epyc_2cpu.txt"), lambda n: "3500000\n" if n == 1 else None)
    assert cpus[0]["mhz"] == 2596.098 and cpus[1]["mhz"] == 3500.0


def test_meminfo_fixture():
    info = parse_meminfo(_read("meminfo_debian12.txt"))
    vm = virtual_memory(info)
    assert vm["total"] == info["MemTotal"] and vm["total"] % 1024 == 0
    assert vm["used"] == vm["total"] - vm["available"]
    assert abs(vm["usedPercent"] - vm["used"] / vm["total"] * 100) < 1e-9
    assert vm["hugePageSize"] == 2048 * 1024
    assert vm["hugePagesTotal"] == info["HugePages_Total"]  # a count, not kB
    assert vm["wired"] == 0 and vm["laundry"] == 0
    assert list(vm)[:5] == ["total", "available", "used", "usedPercent", "free"]
    assert len(vm) == 38


def test_meminfo_without_memavailable():
    vm = virtual_memory(parse_meminfo("MemTotal: 100 kB\nMemFree: 10 kB\nBuffers: 5 kB\nCached: 20 kB\n"))
    assert vm["available"] == 35 * 1024 and vm["used"] == 65 * 1024


def test_swap_parsers():
    devices = parse_swaps(_read("swaps_two_devices.txt"))
    assert devices == [
        {"name": "/dev/dm-1", "usedBytes": 52224 * 1024, "freeBytes": (1003516 - 52224) * 1024},
        {"name": "/swapfile", "usedBytes": 0, "freeBytes": 2097148 * 1024},
    ]
    vmstat = parse_vmstat(_read("vmstat_debian12.txt"))
    info = swap_info({"SwapTotal": 4096, "SwapFree": 1024}, vmstat)
    assert info["used"] == 3072 and info["usedPercent"] == 75.0
    assert info["pgIn"] == vmstat["pgpgin"] * 4096
    assert list(info) == ["total", "used", "free", "usedPercent", "sin", "sout", "pgIn", "pgOut", "pgFault",
                          "pgMajFault"]


def test_routable_addresses():
    assert routable("192.0.2.1") and routable("fd00::2")
    for ip in ("127.0.0.1", "::1", "fe80::1%eth0", "169.254.1.1", "224.0.0.1", "ff02::1", "0.0.0.0", "::"):
        assert not routable(ip), ip


def test_build_addresses_defaults_use_last_address():
    interfaces = [
        {"name": "lo", "addrs": [{"addr": "127.0.0.1/8"}]},
        {"name": "eth0", "addrs": [{"addr": "10.0.0.2/24"}, {"addr": "fe80::1/64"}, {"addr": "10.0.0.3/24"},
                                   {"addr": "2001:db8::2/64"}]},
        {"name": "eth1", "addrs": [{"addr": "192.168.1.2/24"}]},
    ]
    out = build_addresses(interfaces, {True: "eth0", False: None})
    assert out["default_ipv4"] == "10.0.0.3" and out["default_ipv6"] == ""
    assert out["addresses"] == [
        {"address": "10.0.0.2", "default": True, "interface": "eth0", "ipv4": True},
        {"address": "10.0.0.3", "default": True, "interface": "eth0", "ipv4": True},
        {"address": "2001:db8::2", "default": False, "interface": "eth0", "ipv4": False},
        {"address": "192.168.1.2", "default": False, "interface": "eth1", "ipv4": True},
    ]
