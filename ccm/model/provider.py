"""Provider contracts.

A ``Provider`` is anything with a ``name``; each resource type widens it into its own
capability protocol. A ``ProviderFactory`` is the registration unit.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Protocol

from ccm.model.resource import Properties


class Manageable(NamedTuple):
    usable: bool
    priority: int = 1


class Provider(Protocol):
    name: str


class ProviderFactory(Protocol):
    type_name: str
    name: str

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable: ...

    def new(self, runner: Any, log: Any) -> Provider: ...
