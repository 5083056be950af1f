"""System facts: five built-in families plus file facts (data-and-templates.md §1).

``gather()`` never raises. Each family (host, network, partition, cpu, memory; ``swap``
for ``memory.swap``) can be skipped by name; a family that cannot be read (partial
``/proc`` in a chroot or container, permission errors) or that misses the deadline keeps
its empty shape and is logged at DEBUG. File facts from the system directory, then the
user directory, are deep-merged on top. psutil is imported only by the collectors.
Not: a cache; the manager owns caching.

Unlike upstream, whose built-in objects are Go structs that a file fact naming e.g.
``host.info`` replaces wholesale, our facts are a plain JSON tree, so file facts
deep-merge into every level (data-and-templates.md §1.2, known gaps).
"""
from __future__ import annotations

import time

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from ccm.facts.model import FactObject, canonical
from ccm.log import internal

__all__ = ["gather", "gather_system", "empty_family", "FAMILIES", "FactObject", "canonical"]

log = internal("ccm.facts")

FAMILIES = ("host", "network", "partition", "cpu", "memory")
SYSTEM_DIR = "/etc/choria/ccm"


def empty_family(name: str) -> Dict[str, Any]:
    """The shape a disabled or failed family keeps."""
    if name == "host":
        return {"info": {}}
    if name == "network":
        return {"addresses": [], "default_ipv4": "", "default_ipv6": "", "interfaces": []}
    if name == "partition":
        return {"partitions": [], "usage": []}
    if name == "cpu":
        return {"info": []}
    if name == "memory":
        return {"swap": {"devices": {}, "info": {}}, "virtual": {}}
    raise KeyError(name)


def _collector(name: str, include_swap: bool) -> Callable[[], Dict[str, Any]]:
    if name == "host":
        from ccm.facts import host

        return lambda: {"info": host.gather()}
    if name == "network":
        from ccm.facts import network

        return network.gather
    if name == "partition":
        from ccm.facts import partition

        return partition.gather
    if name == "cpu":
        from ccm.facts import cpu

        return cpu.gather
    from ccm.facts import memory

    return lambda: memory.gather(include_swap=include_swap)


def gather_system(*, skip: Iterable[str] = (), timeout: float = 2.0) -> Dict[str, Any]:
    """The built-in families, each in its own daemon thread under one deadline."""
    import threading   # here: probing one fact (``probe_system``) needs no thread
    skipped = set(skip)
    results: Dict[str, Any] = {}
    threads = {}

    def run(name: str) -> None:
        try:
            results[name] = _collector(name, "swap" not in skipped)()
        except Exception as exc:  # a broken family must never break gathering
            log.debug("could not gather %s facts: %s", name, exc)

    for name in FAMILIES:
        if name in skipped:
            continue
        thread = threading.Thread(target=run, args=(name,), name=f"facts-{name}", daemon=True)
        thread.start()
        threads[name] = thread
    deadline = time.monotonic() + timeout
    for name, thread in threads.items():
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.debug("gathering %s facts timed out after %ss", name, timeout)
    facts: Dict[str, Any] = {}
    for name in FAMILIES:
        value = results.get(name) if not threads.get(name, None) or not threads[name].is_alive() else None
        facts[name] = value if value is not None else empty_family(name)
    return facts


def gather(
    *,
    skip: Iterable[str] = (),
    timeout: float = 2.0,
    system_dir: Optional[str] = SYSTEM_DIR,
    user_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """System facts with file facts deep-merged on top (user directory wins).

    ``user_dir`` defaults to ``$XDG_CONFIG_HOME/choria/ccm`` (``~/.config/choria/ccm``);
    pass ``""`` to read no user directory, ``system_dir=None`` for no system directory.
    """
    from ccm.data.merge import deep_merge

    facts = gather_system(skip=skip, timeout=timeout)
    file_facts = load_file_facts(system_dir=system_dir, user_dir=user_dir)
    if file_facts:
        facts = deep_merge(facts, file_facts)
    return facts


def load_file_facts(*, system_dir: Optional[str] = SYSTEM_DIR, user_dir: Optional[str] = None) -> Dict[str, Any]:
    """The file facts ``gather`` merges on top of the system's (``user_dir`` as there)."""
    from ccm.facts.files import load_file_facts as load, user_dir as default_user_dir

    if user_dir is None:
        user_dir = default_user_dir()
    return load([d for d in (system_dir, user_dir) if d])


def probe_system(path: Tuple[str, ...]) -> Tuple[bool, Any]:
    """(True, value) for a fact at ``path`` that the system gather reports, read from its
    own cheap source without gathering (value None: the gather reports nothing there);
    (False, None) when only a gather can tell. Known: ``host.info.platformFamily`` (from
    the etc tree, as ``ccm.facts.host`` reads it), ``host.info.hostname`` (the gather's
    ``socket.gethostname()``: the kernel's node name), and that the host family holds only
    ``info``."""
    if path == ("host", "info", "platformFamily"):
        from ccm.facts.platform import etc_reader, platform_information

        return True, platform_information(etc_reader())[1]
    if path == ("host", "info", "hostname"):
        import os   # uname's node name is what socket.gethostname() reads, without importing socket

        return True, os.uname().nodename
    if len(path) >= 2 and path[0] == "host" and path[1] != "info":
        return True, None
    return False, None
