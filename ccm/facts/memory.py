"""``memory``: virtual memory, swap totals and swap devices from ``/proc``."""
from __future__ import annotations


from ccm.facts.model import FactObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List

# field -> (meminfo key, is a kB value)
_VIRTUAL = (
    ("total", "MemTotal", True), ("available", "MemAvailable", True), ("used", None, True),
    ("usedPercent", None, False), ("free", "MemFree", True), ("active", "Active", True),
    ("inactive", "Inactive", True), ("wired", None, True), ("laundry", None, True),
    ("buffers", "Buffers", True), ("cached", "Cached", True), ("writeBack", "Writeback", True),
    ("dirty", "Dirty", True), ("writeBackTmp", "WritebackTmp", True), ("shared", "Shmem", True),
    ("slab", "Slab", True), ("sreclaimable", "SReclaimable", True), ("sunreclaim", "SUnreclaim", True),
    ("pageTables", "PageTables", True), ("swapCached", "SwapCached", True),
    ("commitLimit", "CommitLimit", True), ("committedAS", "Committed_AS", True),
    ("highTotal", "HighTotal", True), ("highFree", "HighFree", True), ("lowTotal", "LowTotal", True),
    ("lowFree", "LowFree", True), ("swapTotal", "SwapTotal", True), ("swapFree", "SwapFree", True),
    ("mapped", "Mapped", True), ("vmallocTotal", "VmallocTotal", True), ("vmallocUsed", "VmallocUsed", True),
    ("vmallocChunk", "VmallocChunk", True), ("hugePagesTotal", "HugePages_Total", False),
    ("hugePagesFree", "HugePages_Free", False), ("hugePagesRsvd", "HugePages_Rsvd", False),
    ("hugePagesSurp", "HugePages_Surp", False), ("hugePageSize", "Hugepagesize", True),
    ("anonHugePages", "AnonHugePages", True),
)


def parse_meminfo(text: str) -> Dict[str, int]:
    """``Key: value [kB]`` lines; kB values in bytes, counts as is."""
    out: Dict[str, int] = {}
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, rest = line.split(":", 1)
        parts = rest.split()
        if not parts:
            continue
        try:
            number = int(parts[0])
        except ValueError:
            continue
        out[key.strip()] = number * 1024 if len(parts) > 1 and parts[1] == "kB" else number
    return out


def virtual_memory(meminfo: Dict[str, int]) -> FactObject:
    obj = FactObject()
    for field, key, _ in _VIRTUAL:
        obj[field] = meminfo.get(key, 0) if key else 0
    if "MemAvailable" not in meminfo:
        obj["available"] = obj["free"] + obj["buffers"] + obj["cached"]
    obj["used"] = max(0, obj["total"] - obj["available"])
    obj["usedPercent"] = obj["used"] / obj["total"] * 100.0 if obj["total"] else 0.0
    return obj


def parse_vmstat(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def swap_info(meminfo: Dict[str, int], vmstat: Dict[str, int]) -> FactObject:
    total = meminfo.get("SwapTotal", 0)
    free = meminfo.get("SwapFree", 0)
    used = max(0, total - free)
    page = 4 * 1024
    return FactObject(
        total=total,
        used=used,
        free=free,
        usedPercent=used / total * 100.0 if total else 0.0,
        sin=vmstat.get("pswpin", 0) * page,
        sout=vmstat.get("pswpout", 0) * page,
        pgIn=vmstat.get("pgpgin", 0) * page,
        pgOut=vmstat.get("pgpgout", 0) * page,
        pgFault=vmstat.get("pgfault", 0) * page,
        pgMajFault=vmstat.get("pgmajfault", 0) * page,
    )


def parse_swaps(text: str) -> List[FactObject]:
    """``/proc/swaps`` rows (sizes in kB) as ``{name, usedBytes, freeBytes}``."""
    devices: List[FactObject] = []
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 4:
            continue
        try:
            size, used = int(parts[2]), int(parts[3])
        except ValueError:
            continue
        devices.append(FactObject(name=parts[0], usedBytes=used * 1024, freeBytes=(size - used) * 1024))
    return devices


def _read(path: str) -> str:
    with open(path, "r", encoding="utf-8", errors="replace") as fh:
        return fh.read()


def gather(include_swap: bool = True) -> Dict[str, Any]:
    meminfo = parse_meminfo(_read("/proc/meminfo"))
    swap: Dict[str, Any] = {"devices": {}, "info": {}}
    if include_swap:
        try:
            vmstat = parse_vmstat(_read("/proc/vmstat"))
        except OSError:
            vmstat = {}
        swap["info"] = swap_info(meminfo, vmstat)
        try:
            swap["devices"] = parse_swaps(_read("/proc/swaps"))
        except OSError:
            swap["devices"] = []
    return {"swap": swap, "virtual": virtual_memory(meminfo)}
