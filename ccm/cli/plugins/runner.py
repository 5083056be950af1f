"""Running a plugin command: banner, confirmation, then ``exec`` or ``ccm_manifest``.

What: ``run_definition(definition, argv)`` parses ``argv`` (``ccm.cli.plugins.parser``),
prints the command's ``banner``, asks its ``confirm_prompt``, then runs it: ``exec``
starts its ``command`` (split like a shell would, no shell) or its ``script`` (through
``shell``, ``$SHELL``, ``/bin/bash`` or ``/bin/sh``) with its ``environment`` added, in
``dir``; ``ccm_manifest`` applies its ``manifest`` in this process through a manager, as
``ccm apply`` does (the host-wide run lock, the report), the arguments and flags merged
over the manifest's data (App Builder's ``ccm_manifest``). The command, script, ``dir``,
environment entries, banner and manifest source are Go templates rendered by the Go
template engine (``ccm.templates.gotmpl``: Sprig) with ``.Arguments``, ``.Flags``,
``.Config`` and App Builder's functions (``default``, ``require``, ``escape``, ``env``,
``read_file``, ``UserWorkingDir``, ``AppDir``, ``TaskDir``).

Guarantees: with no terminal a ``confirm_prompt`` refuses and runs nothing unless
``--no-prompt`` is given; an ``exec`` exits with its command's status (upstream exits 1
with ``execution failed: exit status N``); ``BUILDER_DRY_RUN`` prints what would run and
runs nothing. Not: App Builder's transforms, retries or secrets (refused at load).
"""
from __future__ import annotations

import os
import sys

from ccm.cli.plugins.definition import Command, Definition, PluginError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List

def config_paths(definition: Definition) -> List[str]:
    """Where ``.Config`` comes from, first found wins: ``NAME-cfg.yaml`` beside the plugin
    file, then App Builder's ``builder-cfg.yaml`` in ``$XDG_CONFIG_HOME/appbuilder`` and
    ``/etc/appbuilder`` (App Builder also reads the current directory: not as root's config)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return [os.path.join(os.path.dirname(definition.path), f"{definition.name}-cfg.yaml"),
            os.path.join(xdg, "appbuilder", "builder-cfg.yaml"), "/etc/appbuilder/builder-cfg.yaml"]


def load_config(definition: Definition) -> Dict[str, Any]:
    from ccm.cli.plugins import load_yaml

    for path in config_paths(definition):
        if os.path.isfile(path):
            doc = load_yaml(path, "plugin configuration")
            if doc is None:
                return {}
            if not isinstance(doc, dict):
                raise PluginError(f"plugin configuration {path}: expected a map")
            return doc
    return {}


def _functions(definition: Definition) -> Dict[str, Callable[..., Any]]:
    """App Builder's template functions (``builder/templates.go``); they replace Sprig's
    ``default`` and ``env``: ``default VALUE FALLBACK`` (value first, as App Builder has it)."""
    import shlex

    def require(value: Any, reason: str = "") -> Any:
        if value is None or value == "":   # the engine reports it: error calling require: REASON
            raise ValueError(reason or "value required")
        return value

    def default(value: Any, fallback: Any) -> Any:
        return value if isinstance(value, str) and value != "" else fallback

    def read_file(path: str) -> str:
        from ccm.readfile import read_text

        return read_text(str(path), "read_file")

    cwd = os.getcwd()
    app_dir = os.path.dirname(definition.path)
    return {"require": require, "default": default, "escape": lambda v: shlex.quote(str(v)),
            "env": lambda name: os.environ.get(str(name), ""), "read_file": read_file,
            "UserWorkingDir": lambda: cwd, "AppDir": lambda: app_dir, "TaskDir": lambda: app_dir}


class Templates:
    """Renders a command's templates with one state and one function table."""

    def __init__(self, definition: Definition, cmd: Command, arguments: Dict[str, Any], flags: Dict[str, Any]):
        self.cmd = cmd
        self.arguments = arguments
        self.flags = flags
        self.functions = _functions(definition)
        self.state = {"Arguments": arguments, "Flags": flags, "Config": load_config(definition), "Input": None}

    def render(self, text: str, what: str) -> str:
        from ccm.model.errors import CCMError
        from ccm.templates.gotmpl import render_go

        try:
            return render_go(text, self.state, functions=self.functions, name=what)
        except CCMError as exc:
            raise PluginError(f"{self.cmd.label}: template error: {exc}") from None


def confirm(question: str) -> bool:
    """Ask ``question`` on the terminal (default no); no terminal is a refusal."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise PluginError(f"{question!r} needs an answer and there is no terminal to ask on: "
                          "nothing was run (pass --no-prompt to run without asking)")
    sys.stderr.write(f"? {question} (y/N) ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def run_definition(definition: Definition, argv: List[str]) -> int:
    from ccm.cli.plugins.parser import LEAF, build, values

    ns = build(definition).parse_args(argv)
    cmd: Command = vars(ns)[LEAF]
    arguments, flags = values(cmd, ns)
    templates = Templates(definition, cmd, arguments, flags)
    if cmd.banner:
        text = templates.render(cmd.banner, "banner")
        if text:
            print(text)
    if cmd.confirm_prompt and flags.get("prompt", True):
        if not confirm(cmd.confirm_prompt):
            raise PluginError("aborted")
    if cmd.type == "ccm_manifest":
        return run_manifest(cmd, templates, noop=bool(vars(ns).get("_ccm_noop")))
    return run_exec(cmd, templates)


def _shell() -> List[str]:
    if os.environ.get("SHELL"):
        return [os.environ["SHELL"], "-c"]
    return ["/bin/bash", "-c"] if os.path.exists("/bin/bash") else ["/bin/sh", "-c"]


def command_line(cmd: Command, templates: Templates) -> List[str]:
    """The argv an ``exec`` runs."""
    import shlex

    if cmd.command:
        line = templates.render(cmd.command, "command")
        try:
            parts = shlex.split(line, comments=False, posix=True)
        except ValueError as exc:
            raise PluginError(f"{cmd.label}: invalid command: {exc}") from None
        if not parts:
            raise PluginError(f"{cmd.label}: invalid command: the command is empty")
        return parts
    shell = shlex.split(cmd.shell) if cmd.shell else _shell()
    if len(shell) == 1:
        shell.append("-c")
    return shell + [templates.render(cmd.script, "script")]


def environment(cmd: Command, templates: Templates) -> Dict[str, str]:
    env = dict(os.environ)
    for entry in cmd.environment:
        text = templates.render(entry, "environment")
        key, eq, value = text.partition("=")
        if not eq or not key:
            raise PluginError(f"{cmd.label}: environment entry {text!r} is not KEY=VALUE")
        env[key] = value
    env["BUILDER_TRY"] = "1"
    return env


def run_exec(cmd: Command, templates: Templates) -> int:
    import shlex
    import subprocess

    argv = command_line(cmd, templates)
    env = environment(cmd, templates)
    cwd = templates.render(cmd.dir, "dir") if cmd.dir else None
    if os.environ.get("BUILDER_DRY_RUN"):
        sys.stderr.write(f"would run: {shlex.join(argv)}\n")
        for entry in cmd.environment:
            sys.stderr.write(f"environment: {templates.render(entry, 'environment')}\n")
        raise PluginError("execution failed: dry run mode")
    sys.stdout.flush()   # the banner before the command's own output
    try:
        done = subprocess.run(argv, env=env, cwd=cwd or None)
    except FileNotFoundError as exc:
        if cwd and not os.path.isdir(cwd):
            raise PluginError(f"execution failed: chdir {cwd}: no such file or directory") from None
        raise PluginError(f'execution failed: exec: "{argv[0]}": executable file not found in $PATH '
                          f"({exc.strerror or exc})") from None
    except OSError as exc:
        raise PluginError(f"execution failed: {argv[0]}: {exc.strerror or exc}") from None
    return done.returncode if done.returncode >= 0 else 128 - done.returncode


def run_manifest(cmd: Command, templates: Templates, *, noop: bool) -> int:
    """App Builder's ``ccm_manifest``, through the manager like ``ccm apply``."""
    from ccm import interrupt
    from ccm.cli.setup import build_manager
    from ccm.locks import EXIT_LOCKED, RunLockHeld, acquire_run_lock
    from ccm.report import manifest_summary

    source = templates.render(cmd.manifest, "manifest")
    data = dict(templates.arguments)
    data.update(templates.flags)    # a flag wins over an argument of the same name, as in App Builder
    manager = build_manager(noop=noop, session_dir=os.environ.get("CCM_SESSION_STORE") or None,
                            nats_context=cmd.nats_context)
    try:
        lock = None if noop else acquire_run_lock(source, 0.0)   # a noop changes nothing (as ccm apply)
    except RunLockHeld as exc:
        sys.stderr.write(f"ccm: {exc}\n")
        return EXIT_LOCKED
    try:
        with interrupt.guard():
            manifest = manager.load(source, overriding_data=data)
            try:
                if manifest.pre_message and not cmd.no_render_messages:
                    print(manifest.pre_message)
                result = manager.execute(manifest)
                summary = result.summary
                if manifest.post_message and summary.total_errors == 0 and not cmd.no_render_messages:
                    print(manifest.post_message)
                if cmd.render_summary:
                    print()
                    sys.stdout.write(manifest_summary(summary))
            finally:
                manifest.cleanup()
        if interrupt.received() is not None:
            sys.stderr.write(f"ccm: {interrupt.message()}\n")
            return interrupt.exit_code()
        return 1 if result.failed else 0
    finally:
        if lock is not None:
            lock.release()
