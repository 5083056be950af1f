"""``cpu.info``: one object per logical CPU, parsed from ``/proc/cpuinfo`` like gopsutil."""
from __future__ import annotations


from ccm.facts.model import FactObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple


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


def _text(value: str) -> str:
    return value


def _words(value: str) -> List[str]:
    return value.split()


# cpuinfo key -> (fact field, conversion); x86 and ARM spell some keys differently.
_FIELDS: Dict[str, Tuple[str, Callable[[str], Any]]] = {
    "vendor_id": ("vendorId", _text), "vendor": ("vendorId", _text),
    "cpu family": ("family", _text),
    "model": ("model", _text),
    "model name": ("modelName", _text), "cpu": ("modelName", _text),
    "stepping": ("stepping", _int),
    "physical id": ("physicalId", _text),
    "core id": ("coreId", _text),
    "cpu cores": ("cores", _int),
    "cpu MHz": ("mhz", _float),
    "cache size": ("cacheSize", _int),
    "flags": ("flags", _words), "Features": ("flags", _words),
    "microcode": ("microcode", _text),
}


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
        field = _FIELDS.get(key)
        if current is not None and field is not None:
            current[field[0]] = field[1](value)
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
