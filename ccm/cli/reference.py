"""The offline reference (``ccm doc``, the man page's reference sections), built from what
the validator itself uses, so it cannot drift from what ccm accepts.

What: ``topic(name)`` returns ``Section``s for a resource type (every declared ``Field``
of its ``TypeSpec``, common ones included: its kind, template phase and default from the
field, its description, choices and example from ``schemas/manifest.json``), for ``manifest``
(the document's keys), ``hiera`` (the Hiera keys and the
``ccm.data.annotations`` directives) and ``functions`` (``ccm.cli.reference_functions``).
``topics()`` lists them; ``render_text`` prints sections.

Guarantees: a field without an example in the schema (or one its own schema refuses), or a
nested key of ``ccm.model.kinds`` missing from the schema, fails the tests
(``tests/cli/test_doc.py``). Not: a manual; the README
and upstream's site explain concepts.
"""
from __future__ import annotations

import json
import re

from ccm.model import kinds
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

TEMPLATE_PHASE = {"parse": "templated when the manifest loads", "deferred": "templated when the resource runs",
                  "never": "not templated"}
KIND_NAMES = {"str": "string", "bool": "boolean", "int": "integer", "str_list": "list of strings",
              "int_list": "list of integers", "str_map": "map of strings", "any_map": "map",
              "post_list": "list of single-key maps (glob: command)", "health_checks": "list of health checks",
              "control": "map (if, unless)", "registrations": "list of registration entries", "any": "any"}
NESTED = (("health_checks", "healthCheck", kinds.HEALTH_CHECK_KEYS, "each entry of health_checks"),
          ("control", "control", kinds.CONTROL_KEYS, "control"),
          ("register_when_stable", "registrationEntry", kinds.REGISTRATION_KEYS,
           "each entry of register_when_stable"))
_DEFAULT_IN_TEXT = re.compile(r"\(default ([^)]*)\)")


class Entry:
    """One documented key."""

    __slots__ = ("name", "kind", "default", "templates", "required", "description", "example", "choices")

    def __init__(self, name: str, kind: str, description: str, *, default: str = "", templates: str = "",
                 required: bool = False, example: str = "", choices: Sequence[str] = ()) -> None:
        self.name = name
        self.kind = kind
        self.description = description
        self.default = default
        self.templates = templates
        self.required = required
        self.example = example
        self.choices = tuple(choices)

    def facts(self) -> str:
        """``string; required; default X; one of a, b; templated when ...``"""
        out = [self.kind] + (["required"] if self.required else []) + ([f"default {self.default}"] if self.default
                                                                        else [])
        if self.choices:
            out.append("one of " + ", ".join(self.choices))
        if self.templates:
            out.append(self.templates)
        return "; ".join(out)


class Section:
    __slots__ = ("title", "intro", "entries", "example")

    def __init__(self, title: str, intro: str = "", entries: Optional[List[Entry]] = None, example: str = ""):
        self.title = title
        self.intro = intro
        self.entries = entries or []
        self.example = example


def schema() -> Dict[str, Any]:
    from ccm.apply.schema import schema_path

    with open(schema_path("manifest.json"), encoding="utf-8") as fh:
        doc: Dict[str, Any] = json.load(fh)
    return doc


def _choices(prop: Dict[str, Any]) -> Tuple[str, ...]:
    for where in (prop, prop.get("else") or {}):
        if isinstance(where.get("enum"), list):
            return tuple(str(v) for v in where["enum"])
    return ()


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)


def _description(prop: Dict[str, Any], defs: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    ref = prop.get("$ref", "")
    target = defs.get(ref.rsplit("/", 1)[-1], {}) if ref else {}
    return str(prop.get("description") or target.get("description") or ""), target


def _example(key: str, block: Dict[str, Any]) -> str:
    """The schema's example of property ``key`` of ``block`` (its ``examples`` instance), as
    it is written in a manifest; "" when it has none."""
    from ccm import yamlio

    examples = block.get("examples") or [{}]
    if key not in examples[0]:
        return ""
    return yamlio.dump({key: examples[0][key]}, sort_keys=False).rstrip("\n")


def type_section(type_name: str) -> List[Section]:
    from ccm.registry import default_registry

    spec = default_registry().spec(type_name)
    defs = schema()["$defs"]
    block = defs[f"{type_name}Properties"]
    props = block["properties"]
    required = set(defs[f"{type_name}Resource"].get("required", ()))
    entries = []
    for field in spec.all_fields:
        prop = props.get(field.key, {})
        text, _target = _description(prop, defs)
        default = ""
        if field.default is not None:
            default = _shown(field.default)
        elif field.key == "ensure" and spec.default_ensure:
            default = spec.default_ensure
        else:
            found = _DEFAULT_IN_TEXT.search(text)
            default = found.group(1) if found else ""
        example = _example(field.key, block)
        entries.append(Entry(field.key, KIND_NAMES.get(field.kind.name, field.kind.name), text, default=default,
                             templates=TEMPLATE_PHASE.get(field.template, field.template),
                             required=field.key in required and not (field.key == "ensure" and spec.default_ensure),
                             example=example, choices=field.choices or _choices(prop)))
    intro = (spec.cli_help or "Apply another manifest") + f" (resource type {type_name}; "
    intro += f"providers: {', '.join(spec.providers) or 'none'})."
    own = {f.key for f in spec.fields}
    return [Section(f"{type_name}", intro, entries, _resource_example(type_name, entries, own))] + nested_sections()


def _resource_example(type_name: str, entries: List[Entry], own: set) -> str:
    """A manifest holding one resource: its name, ensure and its first two own properties."""
    by_key = {e.name: e for e in entries}
    name = by_key["name"].example.split(": ", 1)[1]   # "name: /etc/motd"
    lines = ["ccm:", "  resources:", f"    - {type_name}:", f"        - {name}:"]
    for e in [by_key["ensure"]] + [e for e in entries if e.name in own][:2]:
        lines.extend("            " + line for line in e.example.splitlines())
    return "\n".join(lines)


def nested_sections() -> List[Section]:
    """The keys inside health_checks, control and register_when_stable (every type has them)."""
    defs = schema()["$defs"]
    out = []
    for key, definition, keys, title in NESTED:
        block = defs[definition]
        required = set(block.get("required", ()))
        entries = []
        for sub in keys:
            prop = block["properties"][sub]
            text = str(prop.get("description") or "")
            found = _DEFAULT_IN_TEXT.search(text)
            kind = prop.get("type", "any")
            kind = "/".join(kind) if isinstance(kind, list) else str(kind)
            entries.append(Entry(sub, kind, text, default=found.group(1) if found else "",
                                 required=sub in required, choices=_choices(prop), example=_example(sub, block)))
        out.append(Section(f"{key}: {title}", str(block.get("description") or ""), entries))
    return out


def manifest_sections() -> List[Section]:
    doc = schema()
    top = doc["properties"]
    defs = doc["$defs"]
    entries = [Entry(k, str(v.get("type") or "map"), _description(v, defs)[0]) for k, v in top.items()]
    ccm_entries = [Entry(k, str(v.get("type")), str(v.get("description") or ""))
                   for k, v in defs["ccm"]["properties"].items()]
    from ccm.registry import default_registry

    types = ", ".join(default_registry().types_in_order())
    return [Section("manifest", str(doc.get("description") or ""), entries,
                    "data:\n  motd: hello\nccm:\n  resources:\n    - file:\n        - /etc/motd:\n"
                    "            ensure: present\n            content: \"{{ Data.motd }}\""),
            Section("ccm", f"The execution section. Resource types: {types} (ccm doc TYPE).", ccm_entries)]


def hiera_sections() -> List[Section]:
    # `from ccm.data import annotations` would be the __future__ feature ccm.data imports
    from ccm.data.annotations import REQUIRE, SENSITIVE, VALIDATE

    defs = schema()["$defs"]
    hier = defs["hierarchy"]
    entries = [Entry(k, str(v.get("type")), str(v.get("description") or ""), choices=_choices(v),
                     required=k in hier.get("required", ())) for k, v in hier["properties"].items()]
    top = schema()["properties"]
    doc_entries = [Entry(k, str(top[k].get("type") or "map"), _description(top[k], defs)[0])
                   for k in ("data", "hierarchy", "overrides")]
    notes = {
        REQUIRE: ("@require (or @required)", "the key must have a value: not missing, null or \"\""),
        VALIDATE: ("@validate EXPRESSION", "the value (as text, in `value`) must make the expression "
                               "true; validators: isIP isIPv4 isIPv6 isInt isFloat isDuration isRegex isShellSafe "
                               "isHostname isFQDN (and their snake_case names)"),
        SENSITIVE: ("@sensitive", "the value never reaches logs, events, reports or terminals"),
    }
    ann = [Entry(head, "comment above a data key (or after it on its line)", text) for head, text in notes.values()]
    sources = [Entry("FILE", "path", "a JSON or YAML file (relative to the current directory)"),
               Entry("kv://BUCKET/KEY", "NATS", "the latest value of KEY in JetStream key-value bucket BUCKET "
                     "(ccm kv put BUCKET KEY FILE puts it there)"),
               Entry("http(s)://[user:pass@]host/path", "HTTP", "a JSON or YAML document (1 minute timeout)")]
    return [Section("hiera", "Hierarchical data: in a manifest, in a --hiera SOURCE, in ccm hiera parse.",
                    doc_entries, "hierarchy:\n  order:\n    - env:{{ lookup('facts.env') }}\n    - default\n"
                    "  merge: deep\ndata:\n  # @require\n  # @validate isInt(value)\n  port: 80\n"
                    "overrides:\n  env:prod:\n    port: 443"),
            Section("hierarchy", str(hier.get("description") or ""), entries),
            Section("annotations", "Comments on keys below data (YAML sources only).", ann,
                    "data:\n  # @sensitive\n  password: s3cret"),
            Section("sources", "Where --hiera, ccm hiera parse and the agent read data from.", sources)]


def topics() -> List[Tuple[str, str]]:
    from ccm.registry import default_registry

    registry = default_registry()
    out = [(t, registry.spec(t).cli_help or "Apply another manifest") for t in registry.types_in_order()]
    return out + [("manifest", "The manifest document: data, hierarchy, overrides, ccm"),
                  ("hiera", "Hiera data: hierarchy, overrides, annotations (@require, @validate, @sensitive)"),
                  ("functions", "Template and expression functions")]


def topic(name: str) -> List[Section]:
    from ccm.model.errors import ValidationError, did_you_mean
    from ccm.registry import default_registry

    if name in default_registry().types_in_order():
        return type_section(name)
    if name == "manifest":
        return manifest_sections()
    if name == "hiera":
        return hiera_sections()
    if name == "functions":
        from ccm.cli.reference_functions import function_sections

        return function_sections()
    known = [t for t, _ in topics()]
    raise ValidationError(f"no reference for {name!r}{did_you_mean(name, known)}: one of {', '.join(known)}")


def _indent(text: str, pad: str) -> List[str]:
    return [pad + line for line in text.splitlines()]


def render_text(sections: List[Section]) -> str:
    import textwrap

    out: List[str] = []
    for section in sections:
        out += [section.title.upper() if " " not in section.title else section.title, ""]
        if section.intro:
            out += textwrap.wrap(section.intro, 96, initial_indent="  ", subsequent_indent="  ") + [""]
        for e in section.entries:
            out.append(f"  {e.name}  ({e.facts()})")
            out += textwrap.wrap(e.description, 92, initial_indent="      ", subsequent_indent="      ")
            if e.example:
                out += ["      example:"] + _indent(e.example, "        ")
            out.append("")
        if section.example:
            out += ["  example:"] + _indent(section.example, "    ") + [""]
    return "\n".join(out).rstrip() + "\n"
