"""YAML in and out, decoding scalars the way upstream's Go yaml.v3 does.

PyYAML implements YAML 1.1: ``yes``/``on`` are booleans, ``1:30`` is sexagesimal and
dates become ``datetime``. Upstream reads YAML with yaml.v3 into plain values: only
``true``/``false`` are booleans, dates stay strings, and integers parse like Go's
``strconv.ParseInt(s, 0, 64)`` (``0x``/``0o``/``0b`` prefixes, a leading ``0`` is octal).

yaml.v3 decodes an integer-looking scalar into a *string* field as its literal text, so
``mode: 0644`` is the string ``"0644"`` there. Our integers remember their text
(``TextInt``) so string-typed properties get exactly what was written. Uses libyaml when
present. This is the only YAML loader in ccm: manifests, Hiera data, facts files, config
and set files all come through ``load``.

Hostile input is bounded here, before anything walks the value:

* duplicate mapping keys are an error naming the key and both lines (yaml.v3 rejects
  them too; PyYAML silently keeps the last);
* nesting deeper than ``MAX_DEPTH`` is an error, raised by our composer as the collection
  starts (libyaml's C composer recurses and would crash the process with SIGSEGV at
  ~40,000 levels);
* alias expansion ("billion laughs") is counted on the node graph before construction:
  more than ``MAX_ALIAS_NODES`` nodes produced by aliases is an error, found in
  milliseconds because each node is counted once;
* every syntax error is a ``YAMLLoadError`` rendered ``FILE:LINE:COLUMN: message``.

Memory: libyaml's parser feeds a composer of ours (``StreamLoader``) that builds each item
of a plain sequence into Python values as soon as the item is complete, and drops its
nodes, whenever the item has no anchor or alias (nothing can refer back into it). So a
10,000-resource manifest never holds PyYAML's whole node graph (two ``Mark`` objects and
a node per scalar), only the values and the nodes of items that anchors or aliases tie
together. Values and positions are exactly those of composing the whole graph first, and
a document fails exactly when it would have (an item whose early build fails keeps its
error, raised when the document is built; with two or more construction errors the one
reported may differ, as the order of building does).
"""
from __future__ import annotations

import yaml

from ccm.model.textint import TextInt  # made in ccm.model; ccm.yamlio.TextInt stays its public name
from ccm.typing_guard import TYPE_CHECKING
from ccm.yamlio.compose import StreamLoader, _check_aliases
from ccm.yamlio.decode import (MAX_ALIAS_NODES, MAX_DEPTH, Loader, YAMLLoadError, _Dumper, _wrap, parse_go_int)

if TYPE_CHECKING:
    from typing import Any, Optional

    from ccm.yamlio.decode import Positions

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "Dumper", "Loader", "StreamLoader", "TextInt", "YAMLError",
           "YAMLLoadError", "_check_aliases", "check_depth", "dump", "line_of", "load", "load_cached", "parse_go_int"]


def load(text: Any, *, source: str = "", positions: Optional[Positions] = None) -> Any:
    """Decode one YAML document; ``YAMLLoadError`` names ``source``, line and column.

    With ``positions`` (a dict), every mapping and sequence built is recorded there as
    ``id(obj) -> (line, column)`` (1-based); see ``line_of``.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YAMLLoadError(f"invalid UTF-8 at byte offset {exc.start}", source=source) from None
    try:
        loader = StreamLoader(text)
        loader.source = source
        loader.positions = positions
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if "*" in text:
                _check_aliases(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _wrap(exc, source, text) from None
    except RecursionError:
        raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", source=source) from None
    except (KeyError, ValueError, TypeError, IndexError, OverflowError) as exc:  # an explicit tag's constructor
        raise YAMLLoadError(f"cannot decode the document: {exc}", source=source) from None


def check_depth(value: Any, source: str = "") -> Any:
    """``value`` (parsed JSON) unless it nests deeper than ``MAX_DEPTH`` (iterative walk)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", source=source)
        todo.extend((child, depth + 1) for child in children)
    return value


def line_of(positions: Positions, obj: Any) -> int:
    """The 1-based line where ``obj`` (a mapping or sequence from ``load``) starts, or 0."""
    return positions.get(id(obj), (0, 0))[0]


_CACHE_PREFIX = "yaml-"
_CACHE_KEEP = 32
_CACHE_MIN_BYTES = 16 * 1024   # below this, parsing is cheaper than the cache round trip


def load_cached(text: str, *, source: str = "") -> Any:
    """``load`` for large documents parsed again and again (manifests on every cron run).

    The parsed value is kept in ccm's private cache (``ccm.cache``) keyed by the sha256 of
    the text, so an unchanged manifest is not re-parsed: PyYAML builds several Python
    objects per node, a pickle load builds only the result. Any cache problem means parsing.
    """
    if len(text) < _CACHE_MIN_BYTES:
        return load(text, source=source)
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
    value = load(text, source=source)
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
