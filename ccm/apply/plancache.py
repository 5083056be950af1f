"""Compiled plans: an unchanged manifest whose resources hold no template, or templates
only in fields rendered at run time, is not loaded and validated again on every cron run.

What: after a full load succeeds, the validated resources (type, list index, property
values), the messages, ``fail_on_error`` and the manifest's ``data``/``hierarchy``/
``overrides`` are stored in ccm's private cache (``ccm.cache``: ours, 0700, entries owned
by us, no symlinks, written atomically through ``ccm.fsafe``) under a key made of

* the build (``ccm.buildinfo.build_id``; from a source tree, a digest of the path, size
  and mtime of every source file of ccm) and the interpreter (``sys.version``: marshal's format and PyYAML's behaviour);
* the manifest's path and the sha256 of its bytes (a manifest has no includes: nested
  ``apply`` manifests, ``source`` files and ``--hiera`` data are read by their own steps);
* what else decides validation: ``deny_apply``, schema validation on/off, the resource
  types registered and the extra template functions of the manager.

A later load reads the entry, resolves the Hiera data again from the stored document
(facts, ``--hiera`` and a parent manifest's data included, exactly as a full load does)
and uses the stored plan only when the digest of that data equals the one the plan was
validated with: changed data, a changed manifest or another build means a full load.
Facts need no place in the key: without templates no property depends on them, and the
data that does is resolved on every run. A templated manifest (``ccm.tmplcache``, off with
``CCM_TEMPLATE_CACHE=0``) is stored only when every template sits in a ``DEFERRED`` field
(``deferred_only``: a file's ``content``, not a name, key or field rendered while loading):
the plan holds the templates as written, never what they render, so neither the values
they read nor any fact belongs in the key; with them it stores each template's scanned
parts and probe paths (``template_table``), and a run from the plan only evaluates them.

Cached only: a local manifest file (not a bundle or URL), no ``resources_jet_file``, no
template in the messages or outside ``DEFERRED`` fields of the resources, every
``require``/``subscribe`` naming a resource of the same manifest (not the session store),
property values of plain data only, no secret anywhere (``holds_secret``: URL user info, a
redacted field such as an archive's ``password`` or ``headers``, data marked
``# @sensitive``). The entry is ``MAGIC``, the sha256 of the payload and a marshal (version 2, no
references: the same value always gives the same bytes) of plain data: loading it never
runs code. Anything unexpected in an entry (truncated, corrupt, foreign, another key)
means a full load, never an error. Not: a place for anything a run depends on.
"""
from __future__ import annotations

import marshal
import os
import sys
from sys import intern
from functools import lru_cache

from ccm.digest import sha256
from ccm.model.resource import DEFERRED, Properties, is_templated
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

MAGIC = b"ccm-plan 3\n"
PREFIX = "plan-"
KEEP = 64              # entries kept (one per manifest path and content)
_MARSHAL_VERSION = 2   # data digests: no FLAG_REF, so the bytes depend on the value only
# The stored plan: version 4 writes a repeated object (a property key, "present") once and
# refers to it after; its bytes need not be the same each time (they are checked by digest).
_PLAN_MARSHAL_VERSION = 4
_SHARED_MAX = 64       # string values up to this length are shared between resources

_TEXTINT = "\x00ccm:TextInt"
_TUPLE = "\x00ccm:tuple"


class Uncacheable(Exception):
    """A value a plan cannot hold as plain data."""


@lru_cache(maxsize=None)
def build_digest() -> str:
    """The running build: the pyz's build id, else the digest of ccm's source files."""
    from ccm.buildinfo import build_id

    bid = build_id()
    if bid:
        return "pyz:" + bid
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the ccm package
    listing = []   # every source file's path, size and mtime: an edit changes the build
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json")):
                full = os.path.join(top, name)
                try:
                    st = os.stat(full)
                except OSError:
                    return ""   # cannot tell which code this is: no caching
                listing.append(f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}")
    digest: str = sha256("\n".join(listing).encode("utf-8", "surrogateescape")).hexdigest()
    return "src:" + digest


# --- plain data <-> marshal -------------------------------------------------------------

def encode(value: Any) -> Any:
    """``value`` as marshal-able plain data; ``TextInt`` and tuples become tagged lists.
    Raises ``Uncacheable`` for anything but None, bool, int, float, str, bytes, list,
    tuple, dict, set and frozenset."""
    kind = type(value)
    if kind in (str, int, bool, float, bytes) or value is None:
        return value
    if kind is list:
        return [encode(v) for v in value]
    if kind is dict:
        return {encode(k): encode(v) for k, v in value.items()}
    from ccm.model.textint import TextInt   # here: plain data (most plans) never needs it

    if kind is TextInt:
        return (_TEXTINT, int(value), value.text)
    if kind is tuple:
        return (_TUPLE, [encode(v) for v in value])
    if kind in (set, frozenset):
        out = {encode(v) for v in value}
        return out if kind is set else frozenset(out)
    raise Uncacheable(kind.__name__)


def _tagged(value: Any) -> bool:
    """Whether ``encode(value)`` holds a tag (so ``decode`` must walk it)."""
    kind = type(value)
    if kind is tuple:
        return True
    if kind is list or kind in (set, frozenset):
        return any(_tagged(v) for v in value)
    if kind is dict:
        return any(_tagged(k) or _tagged(v) for k, v in value.items())
    return False


def _plain(value: Any) -> bool:
    """Whether ``value`` is its own encoding (no copy needed): nothing but str, int,
    bool, float, None, bytes, lists and dicts."""
    kind = type(value)
    if kind in (str, int, bool, float, bytes) or value is None:
        return True
    if kind is list:
        return all(_plain(v) for v in value)
    if kind is dict:
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


def decode(value: Any) -> Any:
    kind = type(value)
    if kind is tuple:
        if value[0] == _TEXTINT:
            from ccm.model.textint import TextInt

            return TextInt(value[1], value[2])
        return tuple(decode(v) for v in value[1])
    if kind is list:
        return [decode(v) for v in value]
    if kind is dict:
        return {decode(k): decode(v) for k, v in value.items()}
    if kind in (set, frozenset):
        out = {decode(v) for v in value}
        return out if kind is set else frozenset(out)
    return value


def data_digest(data: Any) -> Optional[str]:
    """The sha256 of resolved data, or None when it is not plain data."""
    try:
        return str(sha256(marshal.dumps(encode(data), _MARSHAL_VERSION)).hexdigest())
    except (Uncacheable, ValueError, TypeError):   # TypeError: a tuple key holding a list
        return None


# --- keys and entries ----------------------------------------------------------------------

def key(manager: Any, path: str, text: str, *, deny_apply: bool, schema: bool) -> Optional[str]:
    """The entry name for this manifest and run settings, or None (no caching)."""
    build = build_digest()
    if not build:
        return None
    parts = [MAGIC.decode(), build, sys.version, path,
             sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
             f"deny_apply={bool(deny_apply)}", f"schema={bool(schema)}",
             ",".join(manager.registry.type_names()),
             ",".join(sorted(manager.extra_template_functions))]   # NATS's: the build's
    return PREFIX + str(sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest())


class Plan:
    """A stored plan: what ``load_manifest`` needs to rebuild the ``Manifest``."""

    def __init__(self, hiera: Dict[str, Any], digest: str, fail_on_error: bool, pre_message: str,
                 post_message: str, resources: List[Tuple[int, str, Any, bool]],
                 templates: Optional[Dict[str, Any]] = None) -> None:
        self.hiera = hiera
        # every template of the resources (all in DEFERRED fields) -> its scanned parts
        # (``ccm.tmplcache.stored_parts``); empty: no template anywhere
        self.templates = templates or {}
        self.template_free = not self.templates
        self.digest = digest
        self.fail_on_error = fail_on_error
        self.pre_message = pre_message
        self.post_message = post_message
        self.resources = resources

    def entries(self, manager: Any) -> List[Any]:
        from ccm.apply.manifest import ResourceEntry

        if self.templates:   # scanned when stored: the run only evaluates them
            from ccm.tmplcache import preload

            try:
                preload(self.templates)
            except (ValueError, TypeError, IndexError) as exc:
                raise Uncacheable(f"damaged plan: {exc}") from None

        out = []
        specs: Dict[str, Tuple[Any, Any]] = {}   # type -> (spec, fields): asked once per type, not per resource
        for index, type_name, values, tagged in self.resources:
            known = specs.get(type_name)
            if known is None:
                if type(type_name) is not str:
                    raise Uncacheable("damaged plan: a type name that is not a string")
                spec = manager.spec(type_name)
                known = specs[type_name] = (spec, spec.all_fields)
            if type(index) is not int or type(values) is not dict:   # a damaged entry: load in full
                raise Uncacheable("damaged plan: a resource that is not (index, type, values)")
            out.append(ResourceEntry(index, known[0], Properties(type_name, decode(values) if tagged else values,
                                                                 known[1])))
        return out


def read(name: str) -> Optional[Plan]:
    """The plan stored under ``name``; None for a missing, foreign or damaged entry."""
    from ccm import cache

    raw = cache.read(name)
    if raw is None or not raw.startswith(MAGIC):
        return None
    head = len(MAGIC)
    digest, payload = raw[head:head + 64], memoryview(raw)[head + 65:]
    if raw[head + 64:head + 65] != b"\n" or sha256(payload).hexdigest().encode() != digest:
        return None
    try:
        stored = marshal.loads(payload)
        stored_name, hiera, data_sha, fail_on_error, pre, post, resources, templates = stored
        if stored_name != name or not isinstance(resources, list) or not isinstance(data_sha, str):
            return None
        if type(templates) is not dict:
            return None
        if templates:
            from ccm.tmplcache import enabled

            if not enabled():   # CCM_TEMPLATE_CACHE=0: a templated manifest loads in full
                return None
        return Plan(decode(hiera), data_sha, bool(fail_on_error), str(pre), str(post), resources, templates)
    except Exception:   # corrupt beyond the digest (another Python's marshal): load in full
        return None


def write(name: str, *, hiera: Dict[str, Any], data: Any, fail_on_error: bool, pre_message: str,
          post_message: str, entries: List[Any], template_free: bool = True) -> None:
    """Store the plan of a manifest just loaded in full (nothing when it cannot be)."""
    from ccm import cache

    digest = data_digest(data)
    if digest is None or holds_secret(hiera, entries, pre_message, post_message):
        return
    try:
        resources = []
        shared: Dict[str, str] = {}   # one object per short string value ("present", "0644" ...)
        for e in entries:
            values = e.props.values
            if _plain(values):   # the common case: marshal it as it is
                tagged = False
            else:
                values = encode(values)
                tagged = _tagged(values)
            # interned keys and shared short values are written once and referenced after:
            # the entry loads faster (no string made, no hash computed per key per resource)
            values = {intern(k) if type(k) is str else k:
                      shared.setdefault(v, v) if type(v) is str and len(v) <= _SHARED_MAX else v
                      for k, v in values.items()}
            resources.append((e.index, intern(e.props.type_name), values, tagged))
        templates = {} if template_free else template_table(entries)
        payload = marshal.dumps((name, encode(hiera), digest, bool(fail_on_error), pre_message, post_message,
                                 resources, templates), _PLAN_MARSHAL_VERSION)
    except (Uncacheable, ValueError, TypeError):
        return
    cache.write(name, MAGIC + sha256(payload).hexdigest().encode() + b"\n" + payload,
                keep=KEEP, prefix=PREFIX)


def holds_secret(hiera: Dict[str, Any], entries: List[Any], *messages: str) -> bool:
    """Whether a plan would hold a secret: a value of a redacted field (an archive's
    ``password``, its ``headers``), URL user info or a value marked ``# @sensitive``
    anywhere in the data, the resources or the messages. Such a plan is not stored: the
    cache outlives the run, and a secret is never kept at rest."""
    from ccm import redact
    from ccm.model.resource import is_empty

    for e in entries:
        values = e.props.values
        for f in e.props.fields:
            if f.redact is not None and not is_empty(values.get(f.key)) and f.redact(values[f.key]) != values[f.key]:
                return True   # what events show redacted
    return (redact.holds_secret(hiera) or redact.holds_secret(list(messages))
            or any(redact.holds_secret(e.props.values) for e in entries))


def templated_anywhere(value: Any, depth: int = 0) -> bool:
    """Whether a template hides anywhere in ``value`` (strings, map keys, nested)."""
    if isinstance(value, str):
        return is_templated(value)
    if depth > 100:
        return True
    if isinstance(value, dict):
        return any(templated_anywhere(k, depth + 1) or templated_anywhere(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(templated_anywhere(v, depth + 1) for v in value)
    return False


def deferred_only(flat: List[Tuple[int, str, Dict[str, Any]]], registry: Any) -> bool:
    """Whether every template of these raw resources sits in a field rendered at run time
    (``DEFERRED``: a file's ``content``...), never in a key, a name or a field rendered
    while loading: then the validated resources hold the templates as written and do not
    depend on ``Data`` or ``Facts``, and their plan may be stored (``ccm.tmplcache``: not
    when it is off)."""
    from ccm import tmplcache

    if not tmplcache.enabled():
        return False
    fields: Dict[str, Dict[str, Any]] = {}   # type -> key -> field
    for _idx, type_name, raw in flat:
        known = fields.get(type_name)
        if known is None:
            known = fields[type_name] = {f.key: f for f in registry.spec(type_name).all_fields}
        for k, v in raw.items():
            if templated_anywhere(k):
                return False
            if templated_anywhere(v):
                f = known.get(k)
                if f is None or f.template != DEFERRED:
                    return False
    return True


def template_table(entries: List[Any]) -> Dict[str, Any]:
    """Every template in the DEFERRED fields of ``entries`` -> its scanned parts, as plain
    data (``ccm.tmplcache.stored_parts``; the very string objects of the values, so the
    stored plan holds each text once)."""
    from ccm.tmplcache import stored_parts

    table: Dict[str, Any] = {}
    for e in entries:
        values = e.props.values
        for f in e.props.fields:
            if f.template == DEFERRED and f.key in values:
                for text in _strings(values[f.key]):
                    if text not in table and is_templated(text):
                        table[text] = stored_parts(text)
    return table


def _strings(value: Any, depth: int = 0) -> List[str]:
    """The strings of ``value``: itself, or those in its lists and maps (keys too)."""
    if type(value) is str:
        return [value]
    out: List[str] = []
    if depth > 100:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out += _strings(k, depth + 1) + _strings(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            out += _strings(v, depth + 1)
    return out
