"""``ccm validate FILE|URL``: every load-time check of a manifest, nothing run, nothing changed.

Runs the same resolution ``ccm apply`` does before its first change (YAML, top-level and
``ccm`` keys, Hiera data and its annotations, the resource list, every resource's
properties and type rules, parse-time templates, deferred templates and control
expressions compiled, unknown functions, duplicates, references, registration entries,
the JSON schema) and then loads every nested ``apply`` child the same way. No resource
runs, no command starts, no lock is taken. Exit 0 when valid, 1 with every problem listed.
"""
from __future__ import annotations

import os
import sys

from ccm.cli.apply_cmd import add_manifest_inputs
from ccm.cli.common import ArgumentParser, to_json
from ccm.cli.setup import build_manager, cli_facts
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Set, Tuple

MAX_CHILDREN = 200


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="ccm validate",
                       description="Check a manifest completely without changing anything or running commands")
    add_manifest_inputs(p)
    p.add_argument("--json", action="store_true", help="print one JSON document: valid, problems, resources")
    return p


class _Declared:
    """A stand-in session store that knows the resources a parent manifest declares before
    its nested ``apply`` (at run time the real session holds their events by then)."""

    def __init__(self, refs: Set[Tuple[str, str]]):
        self.refs = refs

    def events_for(self, type_name: str, name: str) -> List[Any]:
        return [True] if (type_name, name) in self.refs else []


def _problems_of(exc: Exception) -> List[str]:
    from ccm.model.errors import CCMError

    problems = getattr(exc, "problems", None)
    if problems:
        return list(problems)
    if isinstance(exc, CCMError):
        return [str(exc)]
    return [f"{type(exc).__name__}: {exc}"]


def check(source: str, manager: Any, hiera: Optional[str],
          checksum: Optional[str] = None) -> Tuple[List[str], int]:
    """-> (every problem found, resources checked), parents before their children."""
    from ccm.apply import load_manifest

    problems: List[str] = []
    count = 0
    # (source, overriding data, declared refs, deny apply, depth)
    queue: List[Tuple[str, Any, Set[Tuple[str, str]], bool, int]] = [(source, None, set(), False, 0)]
    seen = 0
    while queue and seen < MAX_CHILDREN:
        src, data, declared, deny, depth = queue.pop(0)
        seen += 1
        manager.session = _Declared(declared)
        try:
            manifest = load_manifest(src, manager, hiera_source=hiera if depth == 0 else None,
                                     overriding_data=data, deny_apply=deny,
                                     checksum=checksum if depth == 0 else None)
        except Exception as exc:  # every problem of this manifest, then the next one
            problems += [p if src in p else f"{src}: {p}" for p in _problems_of(exc)]   # each names its file
            continue
        try:
            refs = set(declared)
            for entry in manifest.resources:
                count += 1
                props = entry.props
                if props.type_name == "apply":
                    from ccm.model.resource import is_templated

                    if depth + 1 >= 10:
                        problems.append(f"{manifest.path}: {entry.label}: maximum apply depth of 10 exceeded")
                    elif not is_templated(props.name):
                        child_data = props.get("data") if props.get("data") is not None else manifest.data
                        child = os.path.normpath(os.path.join(manifest.directory, props.name))
                        queue.append((child, child_data, set(refs),
                                      not props.get("allow_apply", True), depth + 1))
                refs.add((props.type_name, props.name))
                if props.alias:
                    refs.add((props.type_name, props.alias))
        finally:
            manifest.cleanup()
    return problems, count


def run(argv: List[str]) -> int:
    from ccm.cli.common import require_file

    args = parser().parse_args(argv)
    if args.facts:
        require_file(args.facts)
    manager = build_manager(noop=True, extra_facts=cli_facts(args.fact, args.facts), read_env=args.read_env)
    problems, count = check(args.manifest, manager, args.hiera, args.checksum)
    if args.json:
        doc: Dict[str, Any] = {"manifest": args.manifest, "valid": not problems, "resources": count,
                               "problems": problems}
        sys.stdout.write(to_json(doc) + "\n")
    elif problems:
        for p in problems:
            sys.stderr.write(f"{p}\n")
        sys.stderr.write(f"{args.manifest}: invalid: {len(problems)} problem{'s' if len(problems) != 1 else ''}\n")
    else:
        print(f"{args.manifest}: valid ({count} resource{'s' if count != 1 else ''})")
    return 0 if not problems else 1
