"""``ccm ensure <type> ...``: manage one resource imperatively (shell-script sessions),
and ``ccm ensure api pipe``: one JSON/YAML request on stdin, one response on stdout.

Each subcommand only turns flags into a raw property map; parsing, templating,
validation and the apply flow are the same code a manifest uses.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

from ccm.cli.common import ArgumentParser, to_json
from ccm.cli.fastargs import negated_help
from ccm.cli.setup import add_bool, build_manager, current_owner
from ccm.model.errors import CCMError, UsageError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

_UNSET = object()


def _parent_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--noop", action="store_true", help="do not change anything")
    p.add_argument("--session", default=None, metavar="DIR", help="session directory (env CCM_SESSION_STORE)")
    p.add_argument("--hiera", default=os.environ.get("CCM_HIERA_DATA") or ".hiera", metavar="SOURCE",
                   help="Hiera data for templates (default .hiera, env CCM_HIERA_DATA)")
    add_bool(p, "read-env", True, "read ./.env")
    p.add_argument("--context", default=os.environ.get("NATS_CONTEXT", "CCM"), help="NATS context")
    p.add_argument("-R", "--registration", default="REGISTRATION", help="registration stream")


def _common_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alias", help="alternative name for logs and references")
    p.add_argument("--check", metavar="COMMAND", help="nagios-style health check command")
    p.add_argument("--check-tries", type=int, default=5, metavar="N", help="health check attempts (default 5)")
    p.add_argument("--check-sleep", default="1s", metavar="DURATION", help="pause between attempts (default 1s)")
    p.add_argument("--if", dest="control_if", metavar="EXPR", help="manage only when EXPR is true")
    p.add_argument("--unless", dest="control_unless", metavar="EXPR", help="skip when EXPR is true")
    p.add_argument("--provider", help="force a provider")
    p.add_argument("--require", action="append", default=[], metavar="type#name", help="fail-gate on a resource")


def _common_props(args: argparse.Namespace) -> Dict[str, Any]:
    props: Dict[str, Any] = {}
    if args.alias:
        props["alias"] = args.alias
    if args.provider:
        props["provider"] = args.provider
    if args.require:
        props["require"] = list(args.require)
    control = {}
    if args.control_if:
        control["if"] = args.control_if
    if args.control_unless:
        control["unless"] = args.control_unless
    if control:
        props["control"] = control
    if args.check:
        props["health_checks"] = [{"command": args.check, "tries": args.check_tries, "try_sleep": args.check_sleep}]
    return props


# --- per type ---------------------------------------------------------------------------

def _package_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="package name")
    p.add_argument("ensure", nargs="?", default="present", help="present, absent, latest or a version")


def _package_props(args: argparse.Namespace) -> Dict[str, Any]:
    return {"name": args.name, "ensure": args.ensure}


def _service_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="service name")
    p.add_argument("ensure", nargs="?", default="running", help="running or stopped")
    p.add_argument("--enable", action="store_true", help="enable at boot")
    p.add_argument("--disable", action="store_true", help="disable at boot")
    p.add_argument("-S", "--subscribe", action="append", default=[], metavar="type#name",
                   help="restart when it changed")


def _service_props(args: argparse.Namespace) -> Dict[str, Any]:
    if args.subscribe and not _session_dir(args):
        raise UsageError("session store should be set when using subscribe")
    if args.enable and args.disable:
        raise UsageError("cannot specify both enable and disable flags")
    props: Dict[str, Any] = {"name": args.name, "ensure": args.ensure}
    if args.enable:
        props["enable"] = True
    if args.disable:
        props["enable"] = False
    if args.subscribe:
        props["subscribe"] = list(args.subscribe)
    return props



def _file_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="path of the file or directory")
    p.add_argument("ensure", nargs="?", default="present", help="present, absent or directory")
    p.add_argument("--owner", metavar="USER:GROUP", help="owner and group (default: the current user and group)")
    p.add_argument("--mode", default=None, help="octal mode (default 0644, 0755 for directories)")
    p.add_argument("--content", default=None, help="file content (templated)")
    p.add_argument("--content-file", metavar="FILE", help="read the content from FILE")
    p.add_argument("--source", metavar="FILE", help="copy FILE verbatim")


def owner_and_group(spec: Optional[str]) -> Tuple[str, str]:
    """``--owner USER[:GROUP]`` over the invoking user's own name and group."""
    owner, group = current_owner()
    if spec:
        o, sep, g = spec.partition(":")
        owner = o or owner
        if sep:
            group = g or group
    return owner, group


def _file_props(args: argparse.Namespace) -> Dict[str, Any]:
    from ccm.cli.common import require_file

    if args.content is not None and args.content_file:
        raise UsageError("cannot specify both contents and contents-file")
    if args.source and (args.content is not None or args.content_file):
        raise UsageError("cannot specify both source and contents or contents-file")
    owner, group = owner_and_group(args.owner)
    mode = args.mode or ("0755" if args.ensure == "directory" else "0644")
    name = os.path.normpath(os.path.abspath(args.name)) if not os.path.isabs(args.name) else args.name
    props: Dict[str, Any] = {"name": name,
                             "ensure": args.ensure, "owner": owner, "group": group, "mode": mode}
    if args.content is not None:
        props["content"] = args.content
    elif args.content_file:
        require_file(args.content_file)
        from ccm.readfile import read_text

        props["content"] = read_text(args.content_file, "content file")
    if args.source:
        require_file(args.source)
        props["source"] = os.path.abspath(args.source)
    return props


def _exec_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="command", help="the command line to run")
    p.add_argument("--creates", metavar="FILE", help="do not run when FILE exists")
    p.add_argument("--returns", action="append", type=int, default=None, metavar="N",
                   help="an exit code that counts as success, repeatable (default: 0)")
    p.add_argument("--timeout", default="1m", help="longest run time, a Go duration")
    p.add_argument("--cwd", metavar="DIR", help="working directory of the command")
    p.add_argument("-e", "--environment", action="append", default=[], metavar="K=V",
                   help="an environment variable for the command, repeatable")
    p.add_argument("--path", metavar="PATH", help="search path for the command (colon separated)")
    p.add_argument("--refresh-only", action="store_true",
                   help="run only when a subscribed resource changed")
    p.add_argument("-S", "--subscribe", action="append", default=[], metavar="type#name",
                   help="run when this resource changed (needs a session), repeatable")
    p.add_argument("--logoutput", action="store_true", help="log the command's output")
    p.add_argument("--exec-if", metavar="CMD", help="run only if CMD exits 0 (onlyif)")
    p.add_argument("--exec-unless", metavar="CMD", help="run only if CMD exits non-zero (unless)")


def _exec_props(args: argparse.Namespace) -> Dict[str, Any]:
    props: Dict[str, Any] = {"name": args.name, "ensure": "present", "timeout": args.timeout,
                             "returns": args.returns or [0]}
    for key, value in (("creates", args.creates), ("cwd", args.cwd), ("path", args.path),
                       ("onlyif", args.exec_if), ("unless", args.exec_unless)):
        if value:
            props[key] = value
    if args.environment:
        props["environment"] = list(args.environment)
    if args.subscribe:
        props["subscribe"] = list(args.subscribe)
    if args.refresh_only:
        props["refreshonly"] = True
    if args.logoutput:
        props["logoutput"] = True
    return props


@dataclass(frozen=True)
class EnsureFlags:
    """A ``ccm ensure <type>`` subcommand's flags (``TypeSpec.cli_flags`` names one)."""

    add_args: Callable[[argparse.ArgumentParser], None]
    to_props: Callable[[argparse.Namespace], Dict[str, Any]]


PACKAGE = EnsureFlags(_package_args, _package_props)
SERVICE = EnsureFlags(_service_args, _service_props)
FILE = EnsureFlags(_file_args, _file_props)
EXEC = EnsureFlags(_exec_args, _exec_props)


def _subcommands() -> List[Tuple[str, Any]]:
    """(type name, TypeSpec) of every type with an ensure subcommand, in declaration order."""
    from ccm.registry import default_registry

    registry = default_registry()
    specs = [(name, registry.spec(name)) for name in registry.types_in_order()]
    return [(name, spec) for name, spec in specs if spec.cli_help]


def _flags(spec: Any) -> EnsureFlags:
    from ccm.registry import import_path

    flags: EnsureFlags = import_path(spec.cli_flags)
    return flags


EXAMPLES = """\
examples:
  ccm ensure package zsh                        install zsh if it is missing
  ccm ensure package nginx latest --noop        would nginx be upgraded?
  ccm ensure service nginx running --enable
  ccm ensure file /etc/motd --content "managed by ccm" --mode 0644
  ccm ensure exec "/usr/bin/systemctl daemon-reload" --refresh-only -S file#/etc/demo.unit
  eval "$(ccm session new)"; ccm ensure file /etc/demo.conf ...; ccm session report --remove
"""


def parser(selected: Optional[str] = None) -> ArgumentParser:
    """The ensure parser; only the selected subcommand's flags are built (and imported)."""
    p = ArgumentParser(prog="ccm ensure", description="Manage a single resource", epilog=EXAMPLES)
    _parent_flags(p)
    sub = p.add_subparsers(dest="type", metavar="<type>", parser_class=ArgumentParser)
    for type_name, spec in _subcommands():
        sp = sub.add_parser(type_name, aliases=list(spec.cli_aliases), help=spec.cli_help)
        if selected != type_name:
            continue
        _parent_flags_defaults(sp)
        _flags(spec).add_args(sp)
        _common_flags(sp)
    api = sub.add_parser("api", help="JSON/YAML request and response on stdin/stdout")
    _parent_flags_defaults(api)
    api.add_argument("mode", choices=("pipe", "piped"), help="pipe: one request on stdin, one response on stdout")
    api.add_argument("--yaml", action="store_true", help="answer in YAML")
    return p


def _parent_flags_defaults(sp: argparse.ArgumentParser) -> None:
    """Parent flags are accepted after the subcommand too (fisk does this)."""
    for action in ("--noop",):
        sp.add_argument(action, action="store_true", default=argparse.SUPPRESS, help="do not change anything")
    sp.add_argument("--session", default=argparse.SUPPRESS, metavar="DIR",
                    help="session directory (env CCM_SESSION_STORE)")
    sp.add_argument("--hiera", default=argparse.SUPPRESS, metavar="SOURCE",
                    help="Hiera data for templates (default .hiera, env CCM_HIERA_DATA)")
    sp.add_argument("--read-env", dest="read_env", action="store_true", default=argparse.SUPPRESS,
                    help="read ./.env (default: true)")
    sp.add_argument("--no-read-env", dest="read_env", action="store_false", default=argparse.SUPPRESS,
                    help=negated_help("read-env"))
    sp.add_argument("--context", default=argparse.SUPPRESS, help="NATS context (default: CCM, env NATS_CONTEXT)")
    sp.add_argument("-R", "--registration", default=argparse.SUPPRESS,
                    help="registration stream (default: REGISTRATION)")


def default_spec(type_name: str) -> Any:
    from ccm.registry import default_registry

    return default_registry().spec(type_name)


def _canonical() -> Dict[str, str]:
    """Every subcommand name and alias -> its type name."""
    out: Dict[str, str] = {}
    for name, spec in _subcommands():
        out[name] = name
        out.update({alias: name for alias in spec.cli_aliases})
    return out


def _session_dir(args: argparse.Namespace) -> Optional[str]:
    if args.session is not None:
        if not args.session.strip():
            raise UsageError("session store should not be empty")
        return args.session
    return os.environ.get("CCM_SESSION_STORE") or None


def _manager(args: argparse.Namespace) -> Any:
    manager = build_manager(noop=args.noop, session_dir=_session_dir(args), read_env=args.read_env,
                            nats_context=args.context, registration_stream=args.registration)
    _load_hiera(manager, args.hiera)
    return manager


def _load_hiera(manager: Any, source: Optional[str]) -> None:
    if not source:
        return
    from ccm.data.sources import hiera_flag, resolve_source
    from ccm.model.errors import ValidationError

    try:
        resolution = resolve_source(source, manager.facts_view(), cwd=os.getcwd(), missing_ok=True,
                                    kv_loader=manager.kv_loader)
    except CCMError as exc:
        raise ValidationError(f"{hiera_flag(source)} {source}: {exc}") from None
    if resolution is not None:
        manager.set_data(resolution.data)


def _selected(argv: List[str]) -> Optional[str]:
    names = _canonical()
    for word in argv:
        if word in names:
            return names[word]
    return None


def run(argv: List[str]) -> int:
    p = parser(_selected(argv))
    args = p.parse_args(argv)
    if not args.type:
        raise p.missing_subcommand()
    if args.type == "api":
        return run_pipe(args)
    type_name = _canonical().get(args.type, args.type)
    session_dir = _session_dir(args)
    if args.require and not session_dir:
        raise UsageError("session store should be set when using requires")
    raw = _flags(default_spec(type_name)).to_props(args)
    raw.update(_common_props(args))
    manager = _manager(args)
    from ccm import interrupt

    with interrupt.guard():
        event = manager.ensure(type_name, raw)
        manager.log_event(event)
        if interrupt.received() is not None:
            sys.stderr.write(f"ccm: {interrupt.message()}\n")
            return interrupt.exit_code()
    return 1 if event.failed else 0


# --- the pipe API -------------------------------------------------------------------------

def _respond(payload: Dict[str, Any], as_yaml: bool) -> None:
    from ccm.model.events import ENSURE_RESPONSE_PROTOCOL

    doc = {"protocol": ENSURE_RESPONSE_PROTOCOL}
    doc.update(payload)
    if as_yaml:
        from ccm import yamlio

        sys.stdout.write(yamlio.dump(doc, sort_keys=False))
    else:
        sys.stdout.write(to_json(doc) + "\n")
    sys.stdout.flush()


def _syntax_error(text: str, exc: Any) -> str:
    """The answer to a request that does not load. What reads as JSON (it starts with ``{``
    or ``[``) and is not valid JSON gets JSON's words and position, not the YAML parser's;
    anything else (YAML, or JSON the loader's bounds refuse: a duplicate key, too deep)
    keeps the loader's message, which names line and column."""
    if text.lstrip()[:1] in ("{", "["):
        import json

        try:
            json.loads(text)
        except json.JSONDecodeError as jexc:
            return (f"invalid request: not valid JSON or YAML: {jexc.msg} at line {jexc.lineno} "
                    f"column {jexc.colno}")
        except (ValueError, RecursionError):
            pass
    return f"invalid request: {exc}"


def handle_request(manager_factory: Callable[[], Any], text: str) -> Dict[str, Any]:
    """One pipe request -> ``{"state": event}`` or ``{"error": message}``."""
    from ccm import yamlio
    from ccm.apply.flatten import flatten
    from ccm.model.events import ENSURE_REQUEST_PROTOCOL

    if not text.strip():
        return {"error": "invalid request: the request is empty (expected a JSON or YAML document on stdin)"}
    try:
        request = yamlio.load(text, source="request")
    except yamlio.YAMLError as exc:
        return {"error": _syntax_error(text, exc)}
    if not isinstance(request, dict) or request.get("protocol") != ENSURE_REQUEST_PROTOCOL:
        proto = request.get("protocol", "") if isinstance(request, dict) else ""
        return {"error": f'invalid protocol "{proto}"'}
    type_name = request.get("type")
    if not type_name:
        return {"error": "missing type in request"}
    if not isinstance(type_name, str):
        return {"error": f"invalid request: type must be a string, got {type(type_name).__name__}"}
    raw_props = request.get("properties")
    if not raw_props:
        return {"error": "missing properties in request"}
    try:
        manager = manager_factory()
        if not manager.registry.has_type(type_name):
            return {"error": f"invalid resource: unknown resource type {type_name}"}
        flat = flatten([{type_name: raw_props}], manager.registry)
        if not flat:
            return {"error": "no resources found"}
        if len(flat) > 1:
            return {"error": "multiple resources found"}
        return {"state": manager.ensure(type_name, flat[0][2]).to_dict()}
    except CCMError as exc:
        return {"error": str(exc)}


def run_pipe(args: argparse.Namespace) -> int:
    from ccm.log import UserLogger

    def factory() -> Any:
        return _manager(args).child(user_log=UserLogger(stream=sys.stderr))  # stdout carries only the response

    from ccm.readfile import ReadError, decode, read_stream

    try:
        text = decode(read_stream(sys.stdin.buffer, "request on stdin"), "request on", "stdin")
    except ReadError as exc:
        _respond({"error": f"invalid request: {exc}"}, args.yaml)
        return 0
    _respond(handle_request(factory, text), args.yaml)
    return 0
