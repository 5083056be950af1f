"""``host.info``: identity, uptime, distribution, kernel, virtualization, host id."""
from __future__ import annotations

import os
import platform as _platform
import socket
import time

from ccm.facts.model import FactObject
from ccm.facts.platform import etc_reader, platform_information
from ccm.log import internal
from ccm.typing_guard import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from typing import Callable, Optional, Tuple

log = internal("ccm.facts")
T = TypeVar("T")


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def format_machine_id(text: str) -> str:
    """``/etc/machine-id`` (32 hex digits) as 8-4-4-4-12; other text trimmed as is."""
    mid = text.strip().lower()
    if len(mid) == 32:
        return f"{mid[:8]}-{mid[8:12]}-{mid[12:16]}-{mid[16:20]}-{mid[20:]}"
    return mid


def host_id() -> str:
    uuid = _read("/sys/class/dmi/id/product_uuid")
    if uuid and uuid.strip():
        return uuid.strip().lower()
    mid = _read("/etc/machine-id")
    if mid and mid.strip():
        return format_machine_id(mid)
    boot = _read("/proc/sys/kernel/random/boot_id")
    return boot.strip() if boot else ""


def virtualization() -> Tuple[str, str]:
    """(system, role) in the spirit of gopsutil's Virtualization()."""
    if os.path.exists("/proc/xen"):
        caps = _read("/proc/xen/capabilities") or ""
        return "xen", "host" if "control_d" in caps else "guest"
    modules = _read("/proc/modules") or ""
    for name, system in (("kvm", "kvm"), ("vboxdrv", "vbox"), ("vboxguest", "vbox"), ("vmw_balloon", "vmware")):
        if any(line.split(" ", 1)[0] == name for line in modules.splitlines()):
            return system, "host" if name in ("kvm", "vboxdrv") else "guest"
    if os.path.exists("/proc/bc/0"):
        return "openvz", "host"
    if os.path.exists("/proc/vz"):
        return "openvz", "guest"
    status = _read("/proc/self/status") or ""
    if "s_context:" in status or "VxID:" in status:
        return "linux-vserver", "guest"
    environ = (_read("/proc/1/environ") or "").split("\x00")
    if "container=lxc" in environ:
        return "lxc", "guest"
    if "container=podman" in environ or os.path.exists("/run/.containerenv"):
        return "podman", "guest"
    cgroup = _read("/proc/self/cgroup") or ""
    if "docker" in cgroup or os.path.exists("/.dockerenv"):
        return "docker", "guest"
    if "lxc" in cgroup:
        return "lxc", "guest"
    container = (_read("/run/systemd/container") or "").strip()
    if container:
        return container, "guest"
    product = ((_read("/sys/class/dmi/id/product_name") or "") + (_read("/sys/class/dmi/id/sys_vendor") or "")).lower()
    for marker, system in (("kvm", "kvm"), ("qemu", "kvm"), ("vmware", "vmware"), ("virtualbox", "vbox"),
                           ("xen", "xen"), ("microsoft", "hyperv")):
        if marker in product:
            return system, "guest"
    return "", ""


def _guard(fn: Callable[[], T], default: T, what: str) -> T:
    """One unreadable source (partial /proc in a container) must not empty the family."""
    try:
        return fn()
    except Exception as exc:  # psutil and OS errors alike
        log.debug("could not read %s: %s", what, exc)
        return default


def gather() -> FactObject:
    import psutil

    boot = _guard(lambda: int(psutil.boot_time()), 0, "boot time")
    plat, family, version = platform_information(etc_reader())
    uname = _platform.uname()
    virt_system, virt_role = _guard(virtualization, ("", ""), "virtualization")
    return FactObject(
        hostname=socket.gethostname(),
        uptime=max(0, int(time.time()) - boot) if boot else 0,
        bootTime=boot,
        procs=_guard(lambda: len(psutil.pids()), 0, "process count"),
        os=uname.system.lower(),
        platform=plat,
        platformFamily=family,
        platformVersion=version,
        kernelVersion=uname.release,
        kernelArch=uname.machine,
        virtualizationSystem=virt_system,
        virtualizationRole=virt_role,
        hostId=_guard(host_id, "", "host id"),
    )
