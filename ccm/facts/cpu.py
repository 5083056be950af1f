"""``cpu.info``: one object per logical CPU, parsed from ``/proc/cpuinfo`` like gopsutil."""
from __future__ import annotations


from ccm.facts.model import FactObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional


def _int(text: str) -> int:
    try:
        return int(text.strip().split()[0])
    except (ValueError, IndexError):
        return 0


def _float(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        return 0.0


def _new(index: int) -> FactObject:
    return FactObject(cpu=index, vendorId="", family="", model="", stepping=0, physicalId="", coreId="",
                      cores=1, modelName="", mhz=0.0, cacheSize=0, flags=[], microcode="")


def parse_cpuinfo(text: str, max_freq_khz: Optional[Callable[[int], Optional[str]]] = None) -> List[FactObject]:
    """CPU objects from cpuinfo text; ``max_freq_khz(n)`` reads cpufreq's cpuinfo_max_freq."""
    cpus: List[FactObject] = []
    current: Optional[FactObject] = None
    for line in text.splitlines():
        if ":" not in line:
            continue
        key, value = (s.strip() for s in line.split(":", 1))
        if key == "processor":
            current = _new(_int(value))
            cpus.append(current)
            continue
        if current is None:
            continue
        if key in ("vendor_id", "vendor"):
            current["vendorId"] = value
        elif key == "cpu family":
            current["family"] = value
        elif key == "model":
            current["model"] = value
        elif key in ("model name", "cpu"):
            current["modelName"] = value
        elif key == "stepping":
            current["stepping"] = _int(value)
        elif key == "physical id":
            current["physicalId"] = value
        elif key == "core id":
            current["coreId"] = value
        elif key == "cpu cores":
            current["cores"] = _int(value)
        elif key == "cpu MHz":
            current["mhz"] = _float(value)
        elif key == "cache size":
            current["cacheSize"] = _int(value)
        elif key in ("flags", "Features"):
            current["flags"] = value.split()
        elif key == "microcode":
            current["microcode"] = value
    if max_freq_khz is not None:
        for cpu in cpus:
            raw = max_freq_khz(cpu["cpu"])
            if raw and raw.strip().isdigit():
                cpu["mhz"] = int(raw.strip()) / 1000.0
    return cpus


def _max_freq(index: int) -> Optional[str]:
    try:
        with open(f"/sys/devices/system/cpu/cpu{index}/cpufreq/cpuinfo_max_freq", "r") as fh:
            return fh.read()
    except OSError:
        return None


def gather() -> Dict[str, Any]:
    with open("/proc/cpuinfo", "r", encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return {"info": parse_cpuinfo(text, _max_freq)}
