"""Instance ids and subjects, exactly as upstream computes them (spec registration.md).

``instance_id`` is FNV-1a 64 over ``cluster+service+protocol+address+port_text`` (no
separators; a missing port is Go's ``%!d(<nil>)``), as 16 lowercase hex digits. Publish
subjects order the tokens cluster, protocol, service, address (dots as ``_``), id.
"""
from __future__ import annotations


from ccm.registration import SUBJECT_PREFIX
from ccm.registration.entry import Entry
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Optional, Tuple

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1
NIL_PORT = "%!d(<nil>)"


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def port_text(port: Optional[int]) -> str:
    return NIL_PORT if port is None else str(int(port))


def instance_id(e: Entry) -> str:
    text = e.cluster + e.service + e.protocol + e.address + port_text(e.port)
    return format(fnv1a64(text.encode("utf-8")), "016x")


def address_token(address: str) -> str:
    return address.replace(".", "_")


def publish_subject(e: Entry) -> str:
    return ".".join((SUBJECT_PREFIX, e.cluster, e.protocol, e.service, address_token(e.address), instance_id(e)))


def _token(value: str) -> str:
    return "*" if value in ("", "*") else value


def filter_subject(cluster: str = "*", protocol: str = "*", service: str = "*", address: str = "*") -> str:
    addr = "*" if address in ("", "*") else address_token(address)
    return ".".join((SUBJECT_PREFIX, _token(cluster), _token(protocol), _token(service), addr, "*"))


def parse_subject(subject: str) -> Tuple[str, str, str, str]:
    """(cluster, protocol, service, address) of a publish subject, or empty strings."""
    tokens = subject.split(".")
    if len(tokens) < 9:
        return "", "", "", ""
    return tokens[4], tokens[5], tokens[6], tokens[7].replace("_", ".")


def entry_from_subject(subject: str) -> Entry:
    cluster, protocol, service, address = parse_subject(subject)
    return Entry(cluster=cluster, service=service, protocol=protocol, address=address)
