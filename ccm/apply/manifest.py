"""Manifest resolution, in the spec's order (manifest.md §Resolution pipeline).

Everything that can be known without touching the host is checked here; a failure
raises ``ManifestError`` naming the resource and field, and nothing has run yet.
"""
from __future__ import annotations

import os

from ccm.log import internal
from ccm.model.errors import CCMError, ManifestError, TemplateError, ValidationError, did_you_mean
from ccm.model.resource import Properties, is_templated
from ccm.model.value import ValueObject
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

log = internal("ccm.apply")

TOP_KEYS = ("data", "hierarchy", "overrides", "ccm")
CCM_KEYS = ("resources", "resources_jet_file", "fail_on_error", "pre_message", "post_message")
MAX_DEPTH = 10


class ResourceEntry(ValueObject):
    __slots__ = ("index", "spec", "props")   # one per resource: no __dict__ each

    index: int          # 1-based position of the list item (before flattening)
    spec: Any
    props: Properties

    _value_fields = ("index", "spec", "props")

    def __init__(self, index: int, spec: Any, props: Properties) -> None:
        self.index = index
        self.spec = spec
        self.props = props

    @property
    def label(self) -> str:
        return self.props.resource_id


class Manifest(ValueObject):
    source: str                       # what logs and metrics show (credentials redacted)
    path: str
    directory: str
    data: Dict[str, Any]
    resources: List[ResourceEntry]
    fail_on_error: bool
    pre_message: str
    post_message: str
    tmpdir: Optional[str]             # remote bundles: removed by cleanup()
    # no resource holds a template anywhere (``plancache.templated_anywhere``), so the apply
    # flow has nothing to render at run time (a plan without a template table is so)
    template_free: bool

    _value_fields = (
        "source", "path", "directory", "data", "resources", "fail_on_error", "pre_message", "post_message",
        "tmpdir", "template_free",
    )

    def __init__(self, source: str, path: str, directory: str, data: Dict[str, Any], resources: List[ResourceEntry],
                 fail_on_error: bool = False, pre_message: str = "", post_message: str = "",
                 tmpdir: Optional[str] = None, template_free: bool = False) -> None:
        self.source = source
        self.path = path
        self.directory = directory
        self.data = data
        self.resources = resources
        self.fail_on_error = fail_on_error
        self.pre_message = pre_message
        self.post_message = post_message
        self.tmpdir = tmpdir
        self.template_free = template_free

    def cleanup(self) -> None:
        if self.tmpdir:
            import shutil

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


def _read_text(path: str) -> str:
    from ccm.readfile import read_text

    try:
        return read_text(path, "manifest")
    except ValidationError as exc:
        raise ManifestError(str(exc)) from None


def _read_document(path: str, text: Optional[str] = None) -> Tuple[Dict[str, Any], str]:
    from ccm import yamlio

    if text is None:
        text = _read_text(path)
    try:
        doc = yamlio.load_cached(text, source=path)
    except yamlio.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: a manifest must be a map with data, hierarchy, overrides and ccm keys")
    _refuse_unknown_keys(path, doc, TOP_KEYS, "top-level key {!r}")
    ccm_block = doc.get("ccm") or {}
    if not isinstance(ccm_block, dict):
        raise ManifestError(f"{path}: ccm must be a map")
    _refuse_unknown_keys(path, ccm_block, CCM_KEYS, "key {!r} in ccm")
    if "fail_on_error" in ccm_block and not isinstance(ccm_block["fail_on_error"], bool):
        raise ManifestError(f"{path}: ccm.fail_on_error must be a boolean")
    for k in ("pre_message", "post_message", "resources_jet_file"):
        if ccm_block.get(k) is not None and not isinstance(ccm_block[k], str):
            raise ManifestError(f"{path}: ccm.{k} must be a string")
    if ccm_block.get("resources") is not None and ccm_block.get("resources_jet_file"):
        raise ManifestError(f"{path}: jet_file and resources cannot be used together")
    if ccm_block.get("resources") is None and not ccm_block.get("resources_jet_file"):
        found = "ccm has no resources" if "ccm" in doc else "it has no ccm key"
        raise ManifestError(f"{path}: a manifest must contain ccm.resources, the list of resources to manage "
                            f"({found})")
    return doc, text


def _refuse_unknown_keys(path: str, block: Dict[Any, Any], known: Tuple[str, ...], what: str) -> None:
    """The first key of ``block`` not in ``known``, named by ``what`` (a format of the key)."""
    for k in block:
        if k not in known:
            raise ManifestError(f"{path}: unknown {what.format(k)}{did_you_mean(k, known)} "
                                f"(expected one of {', '.join(known)})")


def build_entry(manager: Any, idx: int, type_name: str, raw: Dict[str, Any], env: Mapping[str, Any]) -> ResourceEntry:
    """One resource through the shared property pipeline; errors name the list item."""
    try:
        props = manager.prepare(type_name, raw, env)
    except ValidationError as exc:
        label = exc.resource or f"{type_name}#{raw.get('name', '?')}"
        raise ManifestError(f"invalid manifest resource {idx} ({label}): "
                            + (f"{exc.field}: " if exc.field else "") + exc.message) from None
    return ResourceEntry(idx, manager.spec(type_name), props)


class ManifestProblems(ManifestError):
    """Every load-time problem of one manifest (``problems``), not just the first."""

    def __init__(self, problems: List[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def _in_file(path: str, message: str) -> str:
    """Every rejected manifest names its file."""
    return message if message.startswith(path) else f"{path}: {message}"


def build_entries(manager: Any, flat: List[Tuple[int, str, Dict[str, Any]]],
                  env: Mapping[str, Any]) -> Tuple[List[Optional[ResourceEntry]], List[str]]:
    """``build_entry`` for every resource, collecting every problem instead of stopping
    at the first; the entry list is index-aligned with ``flat`` (None where rejected)."""
    entries: List[Optional[ResourceEntry]] = []
    problems: List[str] = []
    for idx, type_name, raw in flat:
        try:
            entries.append(build_entry(manager, idx, type_name, raw, env))
        except ManifestError as exc:
            entries.append(None)
            problems.append(str(exc))
    return entries, problems


def _resolve_data(manager: Any, doc: Dict[str, Any], text: str, path: str, *,
                  hiera_source: Optional[str], overriding_data: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    hiera_doc = {k: doc[k] for k in ("data", "hierarchy", "overrides") if k in doc}
    if not hiera_doc and not hiera_source and not overriding_data:
        return {}   # what resolving nothing gives (no data, no rules), without loading the resolver
    from ccm.data.hiera import resolve, validate_rules
    from ccm.data.merge import deep_merge

    facts = manager.facts_view()
    try:
        resolution = resolve(hiera_doc, facts, source_text=text, source_name=path)
        data, rules = dict(resolution.data), list(resolution.rules)
        if hiera_source:
            overlay = _hiera_overlay(manager, hiera_source, facts)
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


def _hiera_overlay(manager: Any, source: str, facts: Any) -> Any:
    """The ``--hiera`` source (or ``CCM_HIERA_DATA``) resolved; its errors name the flag."""
    from ccm.data.sources import resolve_source

    try:
        return resolve_source(source, facts, cwd=os.getcwd(), validate=False,
                              kv_loader=manager.kv_loader)
    except CCMError as exc:
        from ccm.data.sources import hiera_flag

        raise ManifestError(f"{hiera_flag(source)} {source}: {exc}") from None


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
    from ccm import yamlio

    try:
        return yamlio.load(rendered, source=f"{path} (rendered)")
    except yamlio.YAMLError as exc:
        raise ManifestError(f"rendered resources are not valid YAML: {exc}") from None


def load_manifest(source: str, manager: Any, *, hiera_source: Optional[str] = None,
                  overriding_data: Optional[Mapping[str, Any]] = None, deny_apply: bool = False,
                  schema: Optional[bool] = None, checksum: Optional[str] = None,
                  plan_cache: bool = False, text: Optional[str] = None) -> Manifest:
    """Resolve ``source`` completely. Sets the manager's data and working directory.
    ``checksum`` (``sha256:HEX``) must match the bundle or manifest file. With
    ``plan_cache``, a manifest without templates that was loaded before with the same
    bytes, build, settings and resolved data comes from ``ccm.apply.plancache``.
    ``text`` (a local file only): the content to resolve instead of what the file holds
    now; the file still names the manifest and its directory."""
    path, shown, tmpdir = _locate(source, manager, checksum)
    try:
        if schema is None:
            schema = os.environ.get("NO_SCHEMA_VALIDATION") != "1"
        if text is None or tmpdir is not None:
            text = _read_text(path)
        plan_key = None
        if plan_cache and tmpdir is None:
            from ccm.apply import plancache

            plan_key = plancache.key(manager, path, text, deny_apply=deny_apply, schema=schema)
            if plan_key:
                cached = _from_plan(plan_key, manager, path, shown, text, hiera_source=hiera_source,
                                    overriding_data=overriding_data)
                if cached is not None:
                    return cached
        return _load_in_full(manager, path, shown, text, tmpdir, hiera_source=hiera_source,
                             overriding_data=overriding_data, deny_apply=deny_apply, schema=schema,
                             plan_key=plan_key)
    except BaseException as exc:
        if tmpdir:
            import shutil

            shutil.rmtree(tmpdir, ignore_errors=True)
            if isinstance(exc, CCMError):
                _name_in_bundle(exc, tmpdir, shown)
        raise


def _name_in_bundle(exc: CCMError, tmpdir: str, shown: str) -> None:
    """A load error of a bundle names the bundle and member, not the temp dir (removed)."""
    from ccm.remote import name_in_bundle

    if isinstance(exc, ManifestProblems):
        exc.problems = [name_in_bundle(p, tmpdir, shown) for p in exc.problems]
    exc.args = tuple(name_in_bundle(a, tmpdir, shown) if isinstance(a, str) else a for a in exc.args)


def _from_plan(plan_key: str, manager: Any, path: str, shown: str, text: str, *,
               hiera_source: Optional[str], overriding_data: Optional[Mapping[str, Any]]) -> Optional[Manifest]:
    """The manifest from its stored plan when the resolved data is the one it was
    validated with; None means loading in full."""
    from ccm.apply import plancache

    plan = plancache.read(plan_key)
    if plan is None:
        return None
    directory = os.path.dirname(path)
    manager.working_dir = directory
    data = _resolve_data(manager, plan.hiera, text, path, hiera_source=hiera_source,
                         overriding_data=overriding_data)
    if plancache.data_digest(data) != plan.digest:
        return None
    try:
        entries = plan.entries(manager)
    except Exception:   # a type the registry no longer has, a damaged value: load in full
        return None
    manager.set_data(data)
    return Manifest(source=shown, path=path, directory=directory, data=data, resources=entries,
                    fail_on_error=plan.fail_on_error, pre_message=plan.pre_message,
                    post_message=plan.post_message, template_free=plan.template_free)


def _load_in_full(manager: Any, path: str, shown: str, text: str, tmpdir: Optional[str], *,
                  hiera_source: Optional[str], overriding_data: Optional[Mapping[str, Any]],
                  deny_apply: bool, schema: bool, plan_key: Optional[str]) -> Manifest:
    doc, text = _read_document(path, text)
    text_of_document = text
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
            raise ManifestError(f"{path}: invalid {key} template: {exc}") from None
    from ccm.apply.flatten import flatten
    from ccm.apply.references import check_duplicates, check_references

    try:
        flat = flatten(items, manager.registry)
    except ManifestError as exc:
        raise ManifestError(_in_file(path, str(exc))) from None
    built, problems = build_entries(manager, flat, env)
    problems += check_duplicates(built, flat, text_of_document)
    problems += check_references(built, manager.session, flat)
    if problems:
        raise ManifestProblems([_in_file(path, p) for p in problems])
    entries = [e for e in built if e is not None]
    if deny_apply and any(e.props.type_name == "apply" for e in entries):
        raise ManifestError(f"{path}: apply resources are denied")
    if schema:
        from ccm.apply.schema import validate_manifest

        validate_manifest(doc, data, entries, ccm_block, path)
    if not items:
        raise ManifestError(f"{path}: manifest must contain resources")
    from ccm.apply.plancache import deferred_only, templated_anywhere

    template_free = not any(templated_anywhere(raw) for _i, _t, raw in flat)
    manifest = Manifest(source=shown, path=path, directory=directory, data=data, resources=entries,
                        fail_on_error=bool(ccm_block.get("fail_on_error")),
                        pre_message=messages.get("pre_message", ""),
                        post_message=messages.get("post_message", ""), tmpdir=tmpdir,
                        template_free=template_free)
    if (plan_key and (template_free or deferred_only(flat, manager.registry))
            and _plan_cacheable(ccm_block, flat, entries)):
        from ccm.apply import plancache

        plancache.write(plan_key, hiera={k: doc[k] for k in ("data", "hierarchy", "overrides") if k in doc},
                        data=data, fail_on_error=manifest.fail_on_error, pre_message=manifest.pre_message,
                        post_message=manifest.post_message, entries=entries, template_free=template_free)
    return manifest


def _plan_cacheable(ccm_block: Mapping[str, Any], flat: List[Tuple[int, str, Dict[str, Any]]],
                    entries: List[ResourceEntry]) -> bool:
    """For a template-free manifest, or one whose templates are all rendered at run time
    (``plancache.deferred_only``): no template in the messages either, and every
    reference resolved inside the manifest (not the session store)."""
    if ccm_block.get("resources_jet_file"):
        return False
    if any(is_templated(ccm_block.get(k) or "") for k in ("pre_message", "post_message")):
        return False
    from ccm.apply.references import check_references

    return not check_references(list(entries), None, flat)


def render_manifest(manifest: Manifest, env: Optional[Mapping[str, Any]] = None) -> str:
    """``ccm apply --render``: the resolved manifest as YAML (manifest.md §--render). With
    the template environment ``env``, deferred fields (file ``content``, exec ``command``
    ...) are shown rendered where they can be before the run (``ccm.apply.preflight``)."""
    if env is not None:
        from ccm.apply.preflight import rendered_now

        resources = [{e.props.type_name: rendered_now(e.props, env).to_dict()} for e in manifest.resources]
    else:
        resources = [{e.props.type_name: e.props.to_dict()} for e in manifest.resources]
    doc = {"ccm": {"fail_on_error": manifest.fail_on_error, "resources": resources},
           "data": _sorted(manifest.data)}
    from ccm import yamlio

    # Map keys sorted, except property sets, which keep their declared field order.
    return yamlio.dump(doc, sort_keys=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
