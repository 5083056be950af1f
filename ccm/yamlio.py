"""YAML in and out, decoding scalars the way upstream's Go yaml.v3 does.

PyYAML implements YAML 1.1: ``yes``/``on`` are booleans, ``1:30`` is sexagesimal and
dates become ``datetime``. Upstream reads YAML with yaml.v3 into plain values: only
``true``/``false`` are booleans, dates stay strings, and integers parse like Go's
``strconv.ParseInt(s, 0, 64)`` (``0x``/``0o``/``0b`` prefixes, a leading ``0`` is octal).

yaml.v3 decodes an integer-looking scalar into a *string* field as its literal text, so
``mode: 0644`` is the string ``"0644"`` there. Our integers remember their text
(``TextInt``) so string-typed properties get exactly what was written. Uses libyaml when
present. This is the only YAML loader in ccm.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class TextInt(int):
    """An int that remembers the YAML text it was written as."""

    text: str

    def __new__(cls, value: int, text: str) -> "TextInt":
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __reduce__(self) -> Any:  # copy/deepcopy/pickle keep the text
        return (TextInt, (int(self), self.text))


class Loader(_Base):  # type: ignore[misc,valid-type]
    pass


_DROP = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
         "tag:yaml.org,2002:timestamp"}
Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                             re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:int",
                             re.compile(r"^[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$"),
                             list("-+0123456789"))
Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def parse_go_int(text: str) -> int:
    """Go ``strconv.ParseInt(text, 0, 64)`` (a leading 0 means octal; ``_`` allowed)."""
    s = text.replace("_", "")
    sign = 1
    if s[:1] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if len(s) > 1 and s[0] == "0" and s[1].isdigit():
        try:
            return sign * int(s, 8)
        except ValueError:
            return sign * int(s, 10)
    return sign * int(s, 0)


def _construct_int(loader: Any, node: Any) -> int:
    text = str(loader.construct_scalar(node))
    return TextInt(parse_go_int(text), text)


def _construct_float(loader: Any, node: Any) -> float:
    text = str(loader.construct_scalar(node)).replace("_", "").lower()
    if text.endswith("inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text.endswith("nan"):
        return float("nan")
    return float(text)


Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def load(text: Any) -> Any:
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a safe loader subclass


_CACHE_PREFIX = "yaml-"
_CACHE_KEEP = 32
_CACHE_MIN_BYTES = 16 * 1024   # below this, parsing is cheaper than the cache round trip


def load_cached(text: str) -> Any:
    """``load`` for large documents parsed again and again (manifests on every cron run).

    The parsed value is kept in ccm's private cache (``ccm.cache``) keyed by the sha256 of
    the text, so an unchanged manifest is not re-parsed: PyYAML builds several Python
    objects per node, a pickle load builds only the result. Any cache problem means parsing.
    """
    if len(text) < _CACHE_MIN_BYTES:
        return load(text)
    import hashlib
    import pickle

    from ccm import cache

    name = _CACHE_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()
    raw = cache.read(name)
    if raw is not None:
        try:
            return pickle.loads(raw)  # noqa: S301 - written by us into our private 0700 cache
        except Exception:
            pass
    value = load(text)
    try:
        data = pickle.dumps(value, protocol=4)
    except Exception:
        return value
    cache.write(name, data, keep=_CACHE_KEEP, prefix=_CACHE_PREFIX)
    return value


class Dumper(_Dumper):  # type: ignore[misc,valid-type]
    pass


Dumper.add_representer(TextInt, lambda d, v: d.represent_int(int(v)))


def dump(value: Any, *, sort_keys: bool = True) -> str:
    return yaml.dump(value, Dumper=Dumper, sort_keys=sort_keys, default_flow_style=False,
                     allow_unicode=True, width=1 << 16)


YAMLError = yaml.YAMLError
