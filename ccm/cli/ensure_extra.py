"""Flags of ``ccm ensure archive`` and ``ccm ensure scaffold`` (cli.md), as raw property maps.

Named by the types' ``TypeSpec.cli_flags`` (``ARCHIVE``, ``SCAFFOLD``); like the other
subcommands these only turn flags into properties: validation happens in the type, as
for a manifest.
"""
from __future__ import annotations

import argparse
import os

from ccm.cli.ensure_cmd import EnsureFlags, owner_and_group
from ccm.cli.fastargs import negated_help
from ccm.model.errors import UsageError, ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List


def _absolute(path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.abspath(path))


def _existing_dir(path: str) -> str:
    if not os.path.exists(path):
        raise ValidationError(f"path '{path}' does not exist")
    if not os.path.isdir(path):
        raise ValidationError(f"'{path}' is not a directory")
    return path


# --- archive ------------------------------------------------------------------------------

def add_archive_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="file", help="where the archive is stored (.zip, .tar.gz, .tgz, .tar)")
    p.add_argument("url", help="http(s) URL to download from")
    p.add_argument("-H", "--header", action="append", default=[], metavar="K:V", help="extra request header")
    p.add_argument("--username", help="basic auth user name")
    p.add_argument("--password", default=os.environ.get("HTTP_PASSWORD") or None,
                   help="basic auth password (env HTTP_PASSWORD)")
    p.add_argument("--checksum", metavar="SHA256", help="expected sha256 of the archive")
    p.add_argument("--extract", metavar="DIR", help="extract into DIR (must exist)")
    p.add_argument("--creates", metavar="FILE", help="extraction is skipped while FILE exists")
    p.add_argument("--cleanup", action="store_true", help="delete the archive after extracting")
    p.add_argument("--owner", metavar="USER:GROUP", help="owner and group of the archive (default: current)")


def _headers(items: List[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for item in items:
        positions = [i for i in (item.find(":"), item.find("=")) if i > 0]
        if not positions:
            name = item.split(None, 1)[0] if item.strip() else ""
            raise UsageError(f"invalid header starting {name[:40]!r} (value not shown): expected K:V")
        cut = min(positions)
        out[item[:cut].strip()] = item[cut + 1:].strip()
    return out


def archive_properties(args: argparse.Namespace) -> Dict[str, Any]:
    owner, group = owner_and_group(args.owner)
    props: Dict[str, Any] = {"name": _absolute(args.name), "ensure": "present", "url": args.url,
                             "owner": owner, "group": group}
    if args.header:
        props["headers"] = _headers(args.header)
    if args.username:
        props["username"] = args.username
    if args.password:
        props["password"] = args.password
    if args.checksum:
        props["checksum"] = args.checksum
    if args.extract:
        props["extract_parent"] = _absolute(_existing_dir(args.extract))
    if args.creates:
        props["creates"] = _absolute(args.creates)
    if args.cleanup:
        props["cleanup"] = True
    return props


# --- scaffold -----------------------------------------------------------------------------

def add_scaffold_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="target directory")
    p.add_argument("source", nargs="?", default="", help="template directory (must exist)")
    p.add_argument("ensure", nargs="?", default="present", help="present or absent")
    p.add_argument("--skip-empty", dest="skip_empty", action="store_true", default=False,
                   help="do not write files that render to whitespace only")
    p.add_argument("--no-skip-empty", dest="skip_empty", action="store_false", help=negated_help("skip-empty"))
    p.add_argument("--left-delimiter", metavar="S", help="left template delimiter")
    p.add_argument("--right-delimiter", metavar="S", help="right template delimiter")
    p.add_argument("--engine", default="jet", choices=("go", "jet"), help="template engine (default jet)")
    p.add_argument("--post", action="append", default=[], metavar="PATTERN=TOOL",
                   help="run TOOL on rendered files matching PATTERN ({} is the file)")
    p.add_argument("--purge", action="store_true", help="delete target files the source does not produce")


def scaffold_properties(args: argparse.Namespace) -> Dict[str, Any]:
    props: Dict[str, Any] = {"name": _absolute(args.name), "ensure": args.ensure, "engine": args.engine}
    if args.source:
        props["source"] = _absolute(_existing_dir(args.source))
    else:
        props["source"] = ""
    if args.skip_empty:
        props["skip_empty"] = True
    if args.left_delimiter:
        props["left_delimiter"] = args.left_delimiter
    if args.right_delimiter:
        props["right_delimiter"] = args.right_delimiter
    if args.purge:
        props["purge"] = True
    post = []
    for item in args.post:
        pattern, sep, tool = item.partition("=")
        if not sep:
            raise UsageError(f"invalid --post {item!r}: expected PATTERN=TOOL")
        post.append({pattern: tool})   # command-line order kept (upstream's is random)
    if post:
        props["post"] = post
    return props


ARCHIVE = EnsureFlags(add_archive_args, archive_properties)
SCAFFOLD = EnsureFlags(add_scaffold_args, scaffold_properties)
