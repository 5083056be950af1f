"""Manifest resolution, in the spec's order (manifest.md §Resolution pipeline).

Everything that can be known without touching the host is checked here; a failure
raises ``ManifestError`` naming the resource and field, and nothing has run yet.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ccm import yamlio
from ccm.log import internal
from ccm.model.errors import CCMError, ManifestError, TemplateError, ValidationError
from ccm.model.resource import Properties, is_templated

log = internal("ccm.apply")

TOP_KEYS = ("data", "hierarchy", "overrides", "ccm")
CCM_KEYS = ("resources", "resources_jet_file", "fail_on_error", "pre_message", "post_message")
MAX_DEPTH = 10


@dataclass
class ResourceEntry:
    index: int          # 1-based position of the list item (before flattening)
    spec: Any
    props: Properties

    @property
    def label(self) -> str:
        return self.props.resource_id


@dataclass
class Manifest:
    source: str                       # what logs and metrics show (credentials redacted)
    path: str
    directory: str
    data: Dict[str, Any]
    resources: List[ResourceEntry]
    fail_on_error: bool = False
    pre_message: str = ""
    post_message: str = ""
    document: Dict[str, Any] = field(default_factory=dict)
    tmpdir: Optional[str] = None      # remote bundles: removed by cleanup()

    def cleanup(self) -> None:
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def _locate(source: str, manager: Any, checksum: Optional[str] = None) -> Tuple[str, str, Optional[str]]:
    """-> (path, display source, tmpdir to clean up); bundles and checksums: ``ccm.remote``
    (the object store goes through ``ccm.remote.bundle_from``, checksum included)."""
    from ccm.remote import open_source, parse_checksum

    wanted = None if checksum is None else parse_checksum(checksum)
    if source.split("://", 1)[0].lower() == "obj" and "://" in source:
        from ccm.nats.objstore import fetch_bundle as fetch_object

        path, tmpdir = fetch_object(manager.nats_connection(), source, checksum=wanted)
        return path, source, tmpdir
    return open_source(source, base_dir=manager.working_dir or os.getcwd(), checksum=wanted)


def _read_document(path: str) -> Tuple[Dict[str, Any], str]:
    from ccm.readfile import read_text

    try:
        text = read_text(path, "manifest")
    except ValidationError as exc:
        raise ManifestError(str(exc)) from None
    try:
        doc = yamlio.load_cached(text, source=path)
    except yamlio.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: a manifest must be a map with data, hierarchy, overrides and ccm keys")
    for k in doc:
        if k not in TOP_KEYS:
            raise ManifestError(f"{path}: unknown top-level key {k!r} (expected one of {', '.join(TOP_KEYS)})")
    ccm_block = doc.get("ccm") or {}
    if not isinstance(ccm_block, dict):
        raise ManifestError(f"{path}: ccm must be a map")
    for k in ccm_block:
        if k not in CCM_KEYS:
            raise ManifestError(f"{path}: unknown key {k!r} in ccm (expected one of {', '.join(CCM_KEYS)})")
    if "fail_on_error" in ccm_block and not isinstance(ccm_block["fail_on_error"], bool):
        raise ManifestError(f"{path}: ccm.fail_on_error must be a boolean")
    for k in ("pre_message", "post_message", "resources_jet_file"):
        if ccm_block.get(k) is not None and not isinstance(ccm_block[k], str):
            raise ManifestError(f"{path}: ccm.{k} must be a string")
    if ccm_block.get("resources") is not None and ccm_block.get("resources_jet_file"):
        raise ManifestError(f"{path}: jet_file and resources cannot be used together")
    return doc, text


def flatten(items: Any, registry: Any) -> List[Tuple[int, str, Dict[str, Any]]]:
    """The resource list -> ordered (item index, type, raw properties), defaults applied."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ManifestError("ccm.resources must be a list")
    out: List[Tuple[int, str, Dict[str, Any]]] = []
    for idx, item in enumerate(items, start=1):
        where = f"invalid manifest resource {idx}"
        if not isinstance(item, dict) or len(item) != 1:
            raise ManifestError(f"{where}: each resource list item must be a map with exactly one type key")
        (type_name, block), = item.items()
        if not registry.has_type(type_name):
            raise ManifestError(f"{where}: unknown resource type {type_name!r}")
        if isinstance(block, list) and block and all(isinstance(e, dict) for e in block):
            defaults: Optional[Dict[str, Any]] = None
            for element in block:
                if len(element) != 1:
                    raise ManifestError(f"{where}: multiple resource names found in {type_name} resource")
                (name, props), = element.items()
                if name == "defaults":
                    if defaults is not None:
                        raise ManifestError(f"{where}: multiple defaults found in {type_name} resource")
                    if props is not None and not isinstance(props, dict):
                        raise ManifestError(f"{where}: defaults must be a map")
                    defaults = dict(props or {})
            for element in block:
                (name, props), = element.items()
                if name == "defaults":
                    continue
                if props is not None and not isinstance(props, dict):
                    raise ManifestError(f"{where} ({type_name}#{name}): properties must be a map")
                merged = dict(defaults or {})
                merged.update(props or {})   # a null element is treated like {} (upstream drops defaults)
                merged["name"] = name if isinstance(name, str) else str(name)
                out.append((idx, type_name, merged))
        elif isinstance(block, dict):
            out.append((idx, type_name, dict(block)))
        else:
            raise ManifestError(f"{where}: {type_name} must be a list of name: properties maps or a properties map")
    return out


def build_entry(manager: Any, idx: int, type_name: str, raw: Dict[str, Any], env: Mapping[str, Any]) -> ResourceEntry:
    """One resource through the shared property pipeline; errors name the list item."""
    try:
        props = manager.prepare(type_name, raw, env)
    except ValidationError as exc:
        label = exc.resource or f"{type_name}#{raw.get('name', '?')}"
        raise ManifestError(f"invalid manifest resource {idx} ({label}): "
                            + (f"{exc.field}: " if exc.field else "") + exc.message) from None
    return ResourceEntry(idx, manager.spec(type_name), props)


def _resolve_data(manager: Any, doc: Dict[str, Any], text: str, path: str, *,
                  hiera_source: Optional[str], overriding_data: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    from ccm.data.hiera import resolve, validate_rules
    from ccm.data.merge import deep_merge

    facts = manager.facts_view()
    hiera_doc = {k: doc[k] for k in ("data", "hierarchy", "overrides") if k in doc}
    try:
        resolution = resolve(hiera_doc, facts, source_text=text, source_name=path)
        data, rules = dict(resolution.data), list(resolution.rules)
        if hiera_source:
            from ccm.data.sources import resolve_source

            overlay = resolve_source(hiera_source, facts, cwd=os.getcwd(), validate=False,
                                     kv_loader=getattr(manager, "kv_loader", None))
            data = deep_merge(data, overlay.data)
            rules += list(overlay.rules)
        if overriding_data:
            data = deep_merge(data, dict(overriding_data))
        validate_rules(rules, data, source_name=path)
    except ValidationError as exc:
        raise ManifestError(str(exc)) from None
    except CCMError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    return data


def _jet_resources(manager: Any, jet_file: str, directory: str) -> Any:
    from ccm.templates.jet import render_jet

    path = jet_file if os.path.isabs(jet_file) else os.path.join(directory, jet_file)
    from ccm.readfile import read_text

    try:
        source = read_text(path, "resources_jet_file")
    except ValidationError as exc:
        raise ManifestError(str(exc)) from None
    env = manager.template_environment()
    try:
        rendered = render_jet(source, env, functions={k: v for k, v in env.items() if callable(v)},
                              context=env, name=path)
    except TemplateError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    if not rendered.strip():
        raise ManifestError("resources jet template produced no output, check for syntax errors")
    try:
        return yamlio.load(rendered, source=f"{path} (rendered)")
    except yamlio.YAMLError as exc:
        raise ManifestError(f"rendered resources are not valid YAML: {exc}") from None


def load_manifest(source: str, manager: Any, *, hiera_source: Optional[str] = None,
                  overriding_data: Optional[Mapping[str, Any]] = None, deny_apply: bool = False,
                  schema: Optional[bool] = None, checksum: Optional[str] = None) -> Manifest:
    """Resolve ``source`` completely. Sets the manager's data and working directory.
    ``checksum`` (``sha256:HEX``) must match the bundle or manifest file."""
    path, shown, tmpdir = _locate(source, manager, checksum)
    try:
        doc, text = _read_document(path)
        directory = os.path.dirname(path)
        manager.working_dir = directory
        data = _resolve_data(manager, doc, text, path, hiera_source=hiera_source, overriding_data=overriding_data)
        manager.set_data(data)
        ccm_block = doc.get("ccm") or {}
        items = ccm_block.get("resources")
        if ccm_block.get("resources_jet_file"):
            items = _jet_resources(manager, ccm_block["resources_jet_file"], directory)
        env = manager.lazy_template_environment()
        messages = {}
        for key in ("post_message", "pre_message"):
            text = ccm_block.get(key) or ""
            if not is_templated(text):
                messages[key] = text
                continue
            try:
                from ccm.templates import render_string

                messages[key] = render_string(text, env)
            except TemplateError as exc:
                raise ManifestError(f"invalid {key} template: {exc}") from None
        flat = flatten(items, manager.registry)
        entries = [build_entry(manager, idx, t, raw, env) for idx, t, raw in flat]
        if deny_apply and any(e.props.type_name == "apply" for e in entries):
            raise ManifestError(f"{path}: apply resources are denied")
        if schema is None:
            schema = os.environ.get("NO_SCHEMA_VALIDATION") != "1"
        if schema:
            from ccm.apply.schema import validate_manifest

            validate_manifest(doc, data, entries, ccm_block, path)
        if not items:
            raise ManifestError(f"{path}: manifest must contain resources")
        return Manifest(source=shown, path=path, directory=directory, data=data, resources=entries,
                        fail_on_error=bool(ccm_block.get("fail_on_error")),
                        pre_message=messages.get("pre_message", ""),
                        post_message=messages.get("post_message", ""), document=doc, tmpdir=tmpdir)
    except BaseException:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
        raise


def render_manifest(manifest: Manifest) -> str:
    """``ccm apply --render``: the resolved manifest as YAML (manifest.md §--render)."""
    resources = [{e.props.type_name: e.props.to_dict()} for e in manifest.resources]
    doc = {"ccm": {"fail_on_error": manifest.fail_on_error, "resources": resources},
           "data": _sorted(manifest.data)}
    # Map keys sorted, except property sets, which keep their declared field order.
    return yamlio.dump(doc, sort_keys=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
