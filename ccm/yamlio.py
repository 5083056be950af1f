"""YAML in and out, with YAML 1.2 core-schema scalars.

PyYAML implements YAML 1.1, where ``0644`` is the octal integer 420 and ``yes``/``on``
are booleans. Upstream CCM (Go, yaml.v3) reads YAML 1.2: ``0644`` is 644 and only
``true``/``false`` are booleans. Manifests written for upstream must mean the same here,
so our loader resolves plain scalars with the 1.2 core rules. Uses libyaml when present.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Loader(_Base):  # type: ignore[misc,valid-type]
    pass


Loader.yaml_implicit_resolvers = {}
for first, (tag, regexp) in {
    "-+0123456789": ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
}.items():
    for ch in first:
        Loader.add_implicit_resolver(tag, re.compile(regexp), [ch])
Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."),
)
Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])


def _construct_int(loader: Any, node: Any) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _construct_bool(loader: Any, node: Any) -> bool:
    return loader.construct_scalar(node).lower() == "true"


Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def load(text: Any) -> Any:
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a safe loader subclass


def dump(value: Any, *, sort_keys: bool = True) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=sort_keys, default_flow_style=False,
                     allow_unicode=True, width=1 << 16)


YAMLError = yaml.YAMLError
