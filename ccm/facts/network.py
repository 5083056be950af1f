"""``network``: interfaces, routable addresses and the default IPv4/IPv6 address.

The default interface of a family is the one owning the local address the kernel picks
for a UDP "connection" to a public resolver; no packet is sent.
"""
from __future__ import annotations

import ipaddress
import socket

from ccm.facts.model import FactObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

_FLAG_ORDER = ("up", "broadcast", "loopback", "pointtopoint", "multicast", "running")
_PROBES = ((socket.AF_INET, ("1.1.1.1", 53)), (socket.AF_INET6, ("2001:4860:4860::8888", 53)))


def _prefix(netmask: Optional[str]) -> Optional[int]:
    if not netmask:
        return None
    try:
        return ipaddress.ip_network(f"0.0.0.0/{netmask}").prefixlen if "." in netmask else bin(
            int(ipaddress.IPv6Address(netmask))).count("1")
    except ValueError:
        return None


def routable(ip: str) -> bool:
    """False for loopback, link-local, multicast and unspecified addresses."""
    try:
        addr = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return False
    return not (addr.is_loopback or addr.is_link_local or addr.is_multicast or addr.is_unspecified)


def _local_address(family: int, target: Any) -> Optional[str]:
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect(target)
            return str(sock.getsockname()[0]).split("%", 1)[0]
    except OSError:
        return None


def build_addresses(interfaces: List[Dict[str, Any]], default_if: Dict[bool, Optional[str]]) -> Dict[str, Any]:
    """``addresses``, ``default_ipv4`` and ``default_ipv6`` from interface objects."""
    addresses: List[Dict[str, Any]] = []
    defaults = {True: "", False: ""}
    for iface in interfaces:
        for entry in iface["addrs"]:
            ip = entry["addr"].split("/", 1)[0]
            if not routable(ip):
                continue
            is_v4 = ipaddress.ip_address(ip).version == 4
            is_default = default_if.get(is_v4) == iface["name"]
            addresses.append({"address": ip, "default": is_default, "interface": iface["name"], "ipv4": is_v4})
            if is_default:
                defaults[is_v4] = ip  # upstream keeps the last one listed
    return {"addresses": addresses, "default_ipv4": defaults[True], "default_ipv6": defaults[False]}


def gather() -> Dict[str, Any]:
    import psutil

    stats = psutil.net_if_stats()
    addrs = psutil.net_if_addrs()
    interfaces: List[Dict[str, Any]] = []
    for name in set(stats) | set(addrs):
        st = stats.get(name)
        flags = set((st.flags or "").split(",")) if st else set()
        if st and st.isup:
            flags.add("up")
        hw = ""
        ips = []
        for a in addrs.get(name, []):
            if a.family in (psutil.AF_LINK, socket.AF_PACKET):
                hw = "" if a.address == "00:00:00:00:00:00" else a.address
            elif a.family in (socket.AF_INET, socket.AF_INET6):
                ip = a.address.split("%", 1)[0]
                prefix = _prefix(a.netmask)
                ips.append({"addr": f"{ip}/{prefix}" if prefix is not None else ip})
        try:
            index = socket.if_nametoindex(name)
        except OSError:
            index = 0
        interfaces.append(FactObject(
            index=index,
            mtu=st.mtu if st else 0,
            name=name,
            hardwareAddr=hw,
            flags=[f for f in _FLAG_ORDER if f in flags],
            addrs=ips,
        ))
    interfaces.sort(key=lambda i: (i["index"], i["name"]))
    owners: Dict[str, str] = {}
    for iface in interfaces:
        for entry in iface["addrs"]:
            owners.setdefault(entry["addr"].split("/", 1)[0], iface["name"])
    default_if: Dict[bool, Optional[str]] = {}
    for family, target in _PROBES:
        local = _local_address(family, target)
        default_if[family == socket.AF_INET] = owners.get(local) if local else None
    out = build_addresses(interfaces, default_if)
    out["interfaces"] = interfaces
    return out
