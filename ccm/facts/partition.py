"""``partition``: real mounts and their space/inode usage (statvfs, gopsutil arithmetic)."""
from __future__ import annotations

import os

from ccm.facts.model import FactObject
from ccm.log import internal
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List

log = internal("ccm.facts")


def usage_of(path: str, fstype: str) -> FactObject:
    st = os.statvfs(path)
    total = st.f_blocks * st.f_frsize
    free = st.f_bavail * st.f_frsize
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    inodes_total = st.f_files
    inodes_free = st.f_ffree
    inodes_used = max(0, inodes_total - inodes_free)
    return FactObject(
        path=path,
        fstype=fstype,
        total=total,
        free=free,
        used=used,
        usedPercent=(used / (used + free) * 100.0) if used + free else 0.0,
        inodesTotal=inodes_total,
        inodesUsed=inodes_used,
        inodesFree=inodes_free,
        inodesUsedPercent=(inodes_used / inodes_total * 100.0) if inodes_total else 0.0,
    )


def gather() -> Dict[str, Any]:
    import psutil

    partitions: List[FactObject] = []
    usage: List[FactObject] = []
    for part in psutil.disk_partitions(all=False):
        partitions.append(FactObject(
            device=part.device,
            mountpoint=part.mountpoint,
            fstype=part.fstype,
            opts=[o for o in part.opts.split(",") if o],
        ))
        try:
            usage.append(usage_of(part.mountpoint, part.fstype))
        except OSError as exc:
            log.debug("skipping usage of %s: %s", part.mountpoint, exc)
    return {"partitions": partitions, "usage": usage}
