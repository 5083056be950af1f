"""App Builder definitions (the subset ccm carries), read from a plugin file's YAML.

What: ``parse(doc, name, path)`` turns the decoded YAML of ``NAME-plugin.yaml`` into a
``Definition``: its commands (types ``parent``, ``exec`` and ``ccm_manifest``), their
arguments and flags, with App Builder's own keys and validation rules (``builder/generic.go``,
``commands/parent``, ``commands/exec``, ``commands/ccm_manifest``). Every problem of the
file is collected and raised as one ``PluginError`` line naming the file.

Guarantees: keys App Builder ignores are ignored here too (a file that loads there
loads here), except the App Builder features ccm does not carry (``transform``,
``backoff``, ``secrets``, ``include_file``, the ``form`` and ``scaffold`` types,
commands below an ``exec``): those refuse the file with a message naming the feature
rather than running something else than the author meant. Not: the parser or the
runner (``ccm.cli.plugins.parser``, ``ccm.cli.plugins.runner``).
"""
from __future__ import annotations

import re

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

# App Builder's input types (builder/generic.go inputTypes, plus bool)
INPUT_TYPES = frozenset({
    "string", "bool", "existing_file", "existing_dir", "counter", "int", "integer", "int8", "int16",
    "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float", "float32", "float64",
})
COMMAND_TYPES = ("parent", "exec", "ccm_manifest")
LEFT_OUT_TYPES = {"form": "interactive form wizards", "scaffold": "the scaffold command type"}
# keys whose feature ccm does not carry, per place: refused instead of silently ignored
LEFT_OUT_KEYS = {"transform": "data transforms (graphs, jq, reports)", "backoff": "retry back-off policies",
                 "secrets": "1Password secrets", "include_file": "included definition files"}
MAX_COMMANDS = 500
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_RESERVED_FLAGS = frozenset({"help"})
MAX_DEPTH = 10


class PluginError(CCMError):
    """A plugin file that cannot be mounted: one line naming the file and the problems."""


class Cheat:
    __slots__ = ("label", "text")

    def __init__(self, label: str, text: str) -> None:
        self.label = label
        self.text = text


class Input:
    """One argument or flag (``flag`` True). ``kind`` is the normalised App Builder type."""

    __slots__ = ("name", "description", "required", "enum", "default", "validate", "kind", "flag",
                 "placeholder", "env", "short")

    def __init__(self, raw: Dict[str, Any], flag: bool) -> None:
        self.flag = flag
        self.name = _text(raw.get("name"))
        self.description = _text(raw.get("description"))
        self.required = raw.get("required") is True
        enum = raw.get("enum") or []
        self.enum: Tuple[str, ...] = tuple(_text(v) for v in enum) if isinstance(enum, list) else ()
        self.default = raw.get("default")
        self.validate = _text(raw.get("validate"))
        kind = _text(raw.get("type")).strip().lower()
        if flag and raw.get("bool") is True:
            kind = kind or "bool"
        self.kind = kind
        self.placeholder = _text(raw.get("placeholder")) if flag else ""
        self.env = _text(raw.get("env")) if flag else ""
        self.short = _text(raw.get("short")) if flag else ""

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool" and not self.enum

    @property
    def negatable(self) -> bool:
        """fisk adds ``--no-NAME`` only to booleans whose default is true."""
        d = self.default
        return self.is_bool and (d is True or (isinstance(d, str) and d.strip().lower() in ("1", "t", "true")))

    def default_text(self) -> Optional[str]:
        """The default as fisk receives it (``fmt.Sprintf("%v")``), None when unset."""
        if self.default is None:
            return None
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)


class Command:
    """One command of a definition; ``children`` are the commands below a ``parent``."""

    def __init__(self, raw: Dict[str, Any], path: Tuple[str, ...]) -> None:
        self.path = path
        self.name = _text(raw.get("name"))
        self.description = _text(raw.get("description"))
        self.type = _text(raw.get("type"))
        aliases = raw.get("aliases") or []
        self.aliases: Tuple[str, ...] = tuple(_text(a) for a in aliases) if isinstance(aliases, list) else ()
        self.arguments = [Input(a, False) for a in _maps(raw.get("arguments"))]
        self.flags = [Input(f, True) for f in _maps(raw.get("flags"))]
        self.confirm_prompt = _text(raw.get("confirm_prompt"))
        self.banner = _text(raw.get("banner"))
        cheat = raw.get("cheat")
        self.cheat = Cheat(_text(cheat.get("label")), _text(cheat.get("cheat"))) if isinstance(cheat, dict) else None
        # exec
        self.command = _text(raw.get("command"))
        self.script = _text(raw.get("script"))
        self.shell = _text(raw.get("shell"))
        env = raw.get("environment") or []
        self.environment: Tuple[str, ...] = tuple(_text(e) for e in env) if isinstance(env, list) else ()
        self.dir = _text(raw.get("dir"))
        # ccm_manifest
        self.manifest = _text(raw.get("manifest"))
        self.nats_context = _text(raw.get("nats_context")) or "CCM"
        self.render_summary = raw.get("render_summary") is True
        self.no_render_messages = raw.get("no_render_messages") is True
        self.children: List[Command] = []

    @property
    def label(self) -> str:
        return " ".join(self.path)


class Definition:
    """A plugin: mounted as ``ccm NAME``; ``root`` is what ``ccm NAME`` itself is."""

    def __init__(self, name: str, path: str, description: str, commands: List[Command],
                 cheat: Optional[Cheat]) -> None:
        self.name = name
        self.path = path
        self.description = description
        self.commands = commands
        self.cheat = cheat

    @property
    def collapsed(self) -> Optional[Command]:
        """The one command named like the plugin, which then *is* ``ccm NAME``
        (``deploy-plugin.yaml`` holding only a ``deploy`` command is not ``ccm deploy deploy``)."""
        if len(self.commands) == 1 and self.commands[0].name == self.name:
            return self.commands[0]
        return None

    def cheats(self) -> List[Cheat]:
        out = [self.cheat] if self.cheat is not None else []
        todo = list(self.commands)
        while todo:
            cmd = todo.pop(0)
            if cmd.cheat is not None and cmd.cheat.text:
                out.append(Cheat(cmd.cheat.label or cmd.name, cmd.cheat.text))
            todo.extend(cmd.children)
        return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _maps(value: Any) -> List[Dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _check_shape(raw: Dict[str, Any], where: str, errs: List[str]) -> None:
    for key in ("arguments", "flags", "aliases", "environment", "enum", "commands"):
        if raw.get(key) is not None and not isinstance(raw[key], list):
            errs.append(f"{where}: {key} must be a list")
    for key in ("arguments", "flags", "commands"):
        items = raw.get(key)
        if isinstance(items, list) and any(not isinstance(v, dict) for v in items):
            errs.append(f"{where}: every entry of {key} must be a map")


def _check_input(inp: Input, kind: str, errs: List[str], where: str) -> None:
    """App Builder's validateInput, with its messages."""
    if not inp.name:
        errs.append(f"{where}: {kind} name is required")
    elif not _NAME.match(inp.name) or (inp.flag and inp.name in _RESERVED_FLAGS):
        errs.append(f"{where}: {kind} name {inp.name!r} cannot be used (letters, digits, _ . -; not help)")
    if inp.flag and inp.short in ("h",):
        errs.append(f"{where}: short flag -h is the help flag")
    if inp.default is not None and not isinstance(inp.default, (str, bool)):
        errs.append(f"{where}: {kind} {inp.name!r} default must be a string or boolean, quote the value "
                    f"like default: \"{inp.default}\"")
    if not inp.kind:
        return
    if inp.enum and inp.kind != "string":
        errs.append(f"{where}: {kind} {inp.name!r} sets both type and enum, remove one")
    elif inp.kind not in INPUT_TYPES:
        errs.append(f"{where}: {kind} {inp.name!r} has unknown type {inp.kind!r}, valid types are: "
                    f"{', '.join(sorted(INPUT_TYPES))}")
    if inp.flag and len(inp.short) > 1:
        errs.append(f"{where}: short flag for {inp.name} must be 1 character")


def _check_command(cmd: Command, raw: Dict[str, Any], errs: List[str]) -> None:
    """GenericCommand.Validate: what every command type needs."""
    where = cmd.label or "command"
    if not cmd.name:
        errs.append(f"{where}: name is required")
    if not cmd.description:
        errs.append(f"{where}: description is required")
    if not cmd.type:
        errs.append(f"{where}: command type is required")
    elif cmd.type in LEFT_OUT_TYPES:
        errs.append(f"{where}: type {cmd.type} ({LEFT_OUT_TYPES[cmd.type]}) is not supported by ccm")
    elif cmd.type not in COMMAND_TYPES:
        errs.append(f"{where}: unknown command type {cmd.type!r} (ccm has {', '.join(COMMAND_TYPES)})")
    for key, what in LEFT_OUT_KEYS.items():
        if raw.get(key):
            errs.append(f"{where}: {key} ({what}) is not supported by ccm")
    if cmd.cheat is not None and not cmd.cheat.text:
        errs.append(f"{where}: cheats require a body")
    for a in cmd.arguments:
        _check_input(a, "argument", errs, where)
    for f in cmd.flags:
        _check_input(f, "flag", errs, where)
    names = [f.name for f in cmd.flags] + [f"no-{f.name}" for f in cmd.flags if f.negatable]
    names += ["prompt", "no-prompt"] if cmd.confirm_prompt else []
    shorts = [f.short for f in cmd.flags if f.short]
    for dup in sorted({n for n in names + shorts if (names + shorts).count(n) > 1 and n}):
        errs.append(f"{where}: flag {dup!r} is defined twice")
    args = [a.name for a in cmd.arguments]
    for dup in sorted({n for n in args if args.count(n) > 1 and n}):
        errs.append(f"{where}: argument {dup!r} is defined twice")
    _check_type(cmd, raw, errs, where)


def _check_type(cmd: Command, raw: Dict[str, Any], errs: List[str], where: str) -> None:
    """The rules of each type's own Validate (commands/parent, exec, ccm_manifest)."""
    if cmd.type == "parent":
        for present, problem in ((cmd.flags, "parent commands can not have flags"),
                                 (cmd.arguments, "parent commands can not have arguments"),
                                 (cmd.confirm_prompt, "parents do not accept confirm prompts"),
                                 (not raw.get("commands"), "parent requires sub commands")):
            if present:
                errs.append(f"{where}: {problem}")
        return
    if raw.get("commands"):
        errs.append(f"{where}: commands below a {cmd.type} command are not supported by ccm (use a parent)")
    if cmd.type == "exec":
        if not cmd.command and not cmd.script:
            errs.append(f"{where}: a command or script is required")
        if cmd.command and cmd.script:
            errs.append(f"{where}: only one of command or script is allowed")
    if cmd.type == "ccm_manifest" and not cmd.manifest:
        errs.append(f"{where}: a manifest url is required")


def _build(items: Any, parent: Tuple[str, ...], errs: List[str], depth: int, count: List[int]) -> List[Command]:
    out: List[Command] = []
    if depth > MAX_DEPTH:
        errs.append(f"{' '.join(parent)}: commands nested deeper than {MAX_DEPTH} levels")
        return out
    for raw in _maps(items):
        count[0] += 1
        if count[0] > MAX_COMMANDS:
            errs.append(f"more than {MAX_COMMANDS} commands")
            return out
        cmd = Command(raw, parent + (_text(raw.get("name")) or "?",))
        _check_shape(raw, cmd.label, errs)
        _check_command(cmd, raw, errs)
        if cmd.type == "parent":
            cmd.children = _build(raw.get("commands"), cmd.path, errs, depth + 1, count)
            _check_unique(cmd.children, cmd.label, errs)
        out.append(cmd)
    return out


def _check_unique(commands: List[Command], where: str, errs: List[str]) -> None:
    seen: Dict[str, str] = {}
    for cmd in commands:
        for word in (cmd.name,) + cmd.aliases:
            if word in seen and word:
                errs.append(f"{where}: command or alias {word!r} is used twice")
            seen[word] = cmd.name


def parse(doc: Any, name: str, path: str) -> Definition:
    """The definition of plugin ``name`` (its file ``path``) or a PluginError."""
    if not isinstance(doc, dict):
        raise PluginError(f"plugin {path}: expected a map of App Builder definition keys")
    errs: List[str] = []
    _check_shape(doc, name, errs)
    for key in ("include_file",):
        if doc.get(key):
            errs.append(f"{key} ({LEFT_OUT_KEYS[key]}) is not supported by ccm")
    if not doc.get("commands"):
        errs.append("no commands defined")
    commands = _build(doc.get("commands"), (name,), errs, 1, [0])
    _check_unique(commands, name, errs)
    cheat = doc.get("cheat")
    top_cheat = None
    if isinstance(cheat, dict) and _text(cheat.get("cheat")):
        top_cheat = Cheat(_text(cheat.get("label")) or name, _text(cheat.get("cheat")))
    if errs:
        raise PluginError(f"plugin {path}: " + ", ".join(errs))
    return Definition(name, path, _text(doc.get("description")), commands, top_cheat)
