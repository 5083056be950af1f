"""Distribution identification from release files under ``/etc`` (or ``$HOST_ETC``).

Pure: every function takes a ``read(name) -> str | None`` callable over the etc
directory, so tests drive it with fixture trees. Mirrors the gopsutil v4 rules that
upstream reports as ``platform``, ``platformFamily`` and ``platformVersion``
(data-and-templates.md §1.1). Not: checked on every exotic distribution.
"""
from __future__ import annotations

import os

from ccm.lazyre import LazyPattern
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:   # the manager probes the platform family here: no typing or re at run time
    from typing import Callable, Dict, Optional, Tuple

    Reader = Callable[[str], Optional[str]]

_FAMILIES = {
    "debian": ("debian", "ubuntu", "linuxmint", "raspbian", "pop", "elementary", "kali", "neon", "zorin"),
    "rhel": ("oracle", "centos", "redhat", "scientific", "enterpriseenterprise", "amazon", "xenserver",
             "cloudlinux", "ibm_powerkvm", "rocky", "almalinux"),
    "fedora": ("fedora",),
    "suse": ("suse", "opensuse", "opensuse-leap", "opensuse-tumbleweed", "opensuse-tumbleweed-kubic",
             "sles", "sled", "tumbleweed"),
    "gentoo": ("gentoo",),
    "slackware": ("slackware",),
    "arch": ("arch", "archlinux", "antergos", "manjaro"),
    "alpine": ("alpine",),
    "coreos": ("coreos",),
    "solus": ("solus",),
    "neokylin": ("neokylin",),
    "anolis": ("anolis",),
}
_FAMILY_OF = {p: fam for fam, members in _FAMILIES.items() for p in members}
_LSB_DERIVATIVES = ("ubuntu", "linuxmint", "pop", "elementary", "neon", "zorin")
_RELEASE_NUMBER = LazyPattern(r"release (\w[\d.]*)", 2)   # re.IGNORECASE
_SUSE_VERSION = LazyPattern(r"VERSION = ([\d.]+)")


def etc_reader(etc: Optional[str] = None) -> Reader:
    base = etc or os.environ.get("HOST_ETC") or "/etc"

    def read(name: str) -> Optional[str]:
        try:
            with open(os.path.join(base, name), "r", encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None

    return read


def parse_keyvals(text: Optional[str]) -> Dict[str, str]:
    """``KEY=value`` / ``KEY="value"`` lines (os-release, lsb-release)."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def _first_line(text: str) -> str:
    return text.splitlines()[0].strip() if text.strip() else ""


def _release_number(text: str) -> str:
    match = _RELEASE_NUMBER.search(text)
    return match.group(1) if match else ""


def _redhatish_platform(text: str) -> str:
    words = text.lower().split()
    if not words:
        return ""
    if words[0] == "red":
        return "redhat"
    if words[0] == "enterprise":
        return "enterpriseenterprise"
    return words[0]


def platform_family(platform: str) -> str:
    return _FAMILY_OF.get(platform, "")


def platform_information(read: Reader) -> Tuple[str, str, str]:
    """(platform, platformFamily, platformVersion) from the etc tree behind ``read``."""
    lsb = parse_keyvals(read("lsb-release"))
    osrel = parse_keyvals(read("os-release"))
    platform = ""
    version = ""
    oracle = read("oracle-release")
    debian = read("debian_version")
    redhat = read("redhat-release")
    system = read("system-release")
    alpine = read("alpine-release")
    if oracle is not None:
        platform, version = "oracle", _release_number(oracle)
    elif read("enterprise-release") is not None:
        platform, version = "oracle", _release_number(read("enterprise-release") or "")
    elif read("slackware-version") is not None:
        platform = "slackware"
        version = (read("slackware-version") or "").strip().split(" ")[-1]
    elif debian is not None and debian.strip():
        lsb_id = lsb.get("DISTRIB_ID", "").lower()
        if lsb_id in _LSB_DERIVATIVES:
            platform, version = lsb_id, lsb.get("DISTRIB_RELEASE", "")
        else:
            platform = "raspbian" if os.path.exists("/usr/bin/raspi-config") else "debian"
            version = _first_line(debian)
    elif redhat is not None:
        platform, version = _redhatish_platform(redhat), _release_number(redhat)
    elif system is not None:
        platform, version = _redhatish_platform(system), _release_number(system)
        if platform == "amazon" or "amazon" in system.lower():
            platform = "amazon"
    elif read("gentoo-release") is not None:
        platform, version = "gentoo", _release_number(read("gentoo-release") or "")
    elif read("SuSE-release") is not None:
        text = read("SuSE-release") or ""
        platform = "opensuse" if "opensuse" in text.lower() else "suse"
        match = _SUSE_VERSION.search(text)
        version = match.group(1) if match else ""
    elif read("arch-release") is not None:
        platform, version = "arch", lsb.get("DISTRIB_RELEASE", "")
    elif alpine is not None:
        platform, version = "alpine", _first_line(alpine)
    elif osrel:
        platform = osrel.get("ID", "")
        version = osrel.get("VERSION_ID", "")
    elif lsb:
        platform = lsb.get("DISTRIB_ID", "").lower()
        version = lsb.get("DISTRIB_RELEASE", "")
    # gopsutil renames a few os-release ids
    platform = {"rhel": "redhat", "ol": "oracle", "amzn": "amazon", "sles_sap": "sles"}.get(platform, platform)
    return platform, platform_family(platform), version
