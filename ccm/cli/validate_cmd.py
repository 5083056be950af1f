"""``ccm validate FILE|URL``: every load-time check of a manifest, nothing run, nothing changed.

Runs the same resolution ``ccm apply`` does before its first change (YAML, top-level and
``ccm`` keys, Hiera data and its annotations, the resource list, every resource's
properties and type rules, parse-time templates, deferred templates and control
expressions compiled, unknown functions, duplicates, references, registration entries,
the JSON schema) and then loads every nested ``apply`` child the same way. Then what
apply would fail on though the manifest loads (``ccm.apply.preflight``): deferred fields
that cannot render with these data and facts, file sources that do not exist. No resource
runs, no command starts, no lock is taken. Exit 0 when valid, 1 with every problem listed.

A child manifest (one an ``apply`` resource runs) may ``require``/``subscribe`` resources its
parent declared before that ``apply``: with ``--parent PARENT`` those names are known and
anything else not declared is a problem; without it, a reference to a resource the file
does not declare is a warning (exit 0 if nothing else is wrong), since only the parent
can tell (and so in its nested children; the children of a file without such references
are checked strictly). A reference to a resource declared *later* in the same file stays
a problem.
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
    p.add_argument("--parent", action="append", default=[], metavar="MANIFEST",
                   help="a manifest that applies this one: the resources it declares may be referred to "
                        "(repeatable, for a chain); without it such references are warnings")
    p.add_argument("--json", action="store_true", help="print one JSON document: valid, problems, warnings, "
                                                       "resources")
    return p


class _Declared:
    """A stand-in session store that knows the resources a parent manifest declares before
    its nested ``apply`` (at run time the real session holds their events by then). A
    ``lenient`` one answers yes for any other resource too and remembers it was asked."""

    def __init__(self, refs: Set[Tuple[str, str]], lenient: bool = False):
        self.refs = refs
        self.lenient = lenient
        self.asked: Set[Tuple[str, str]] = set()

    def events_for(self, type_name: str, name: str) -> List[Any]:
        if (type_name, name) in self.refs:
            return [True]
        self.asked.add((type_name, name))
        return [True] if self.lenient else []


class _NotOwn:
    """Yes for every resource the manifest itself does not declare: what is left for
    ``check_references`` to report is a reference to a resource declared after its user."""

    def __init__(self, own: Set[Tuple[str, str]]):
        self.own = own

    def events_for(self, type_name: str, name: str) -> List[Any]:
        return [] if (type_name, name) in self.own else [True]


def _declared_ids(entries: Any) -> Set[Tuple[str, str]]:
    out: Set[Tuple[str, str]] = set()
    for entry in entries:
        out.add((entry.props.type_name, entry.props.name))
        if entry.props.alias:
            out.add((entry.props.type_name, entry.props.alias))
    return out


def _outside_references(manifest: Any, session: _Declared) -> List[str]:
    """A warning for each reference to a resource the manifest does not declare."""
    from ccm.model.resource import REFERENCE_FIELDS

    own = _declared_ids(manifest.resources)
    out = []
    for entry in manifest.resources:
        for key in REFERENCE_FIELDS:
            for ref in entry.props.get(key) or []:
                t, _, n = str(ref).partition("#")
                if (t, n) in session.asked and (t, n) not in own:
                    out.append(f"{manifest.path}: warning: resource {entry.index} ({entry.label}): {key}: {ref!r} "
                               "is not declared in this manifest: fine for a child manifest whose parent declares "
                               "it before applying it (check with --parent PARENT); ccm apply of this file alone "
                               "refuses it")
    return out


def _problems_of(exc: Exception) -> List[str]:
    from ccm.apply.manifest import ManifestProblems
    from ccm.model.errors import CCMError

    if isinstance(exc, ManifestProblems) and exc.problems:
        return list(exc.problems)
    if isinstance(exc, CCMError):
        return [str(exc)]
    return [f"{type(exc).__name__}: {exc}"]


def _load(src: str, manager: Any, declared: Set[Tuple[str, str]], lenient: bool,
          **kwargs: Any) -> Tuple[Any, List[str], List[str]]:
    """(manifest or None, problems, warnings) of one manifest. A lenient load that fails
    is done again strictly, so every problem is listed (undeclared references too)."""
    from ccm.apply import load_manifest
    from ccm.apply.references import check_references

    session = _Declared(declared, lenient)
    manager.session = session
    try:
        manifest = load_manifest(src, manager, **kwargs)
    except Exception as exc:  # every problem of this manifest, then the next one
        if lenient:
            _m, problems, _w = _load(src, manager, declared, False, **kwargs)
            return None, problems, []
        return None, [p if src in p else f"{src}: {p}" for p in _problems_of(exc)], []   # each names its file
    problems, warnings = _run_time_problems(manifest, manager)
    if not lenient:
        return manifest, problems, warnings
    order = check_references(list(manifest.resources), _NotOwn(_declared_ids(manifest.resources)))
    return (manifest, [f"{manifest.path}: {p}" for p in order] + problems,
            _outside_references(manifest, session) + warnings)


def _run_time_problems(manifest: Any, manager: Any) -> Tuple[List[str], List[str]]:
    """What every apply on this host would fail on though the manifest loads: deferred
    templates that cannot render, missing file sources (``ccm.apply.preflight``)."""
    from ccm.apply import preflight

    found, rendered = preflight.deferred_problems(list(manifest.resources), manager.template_environment())
    missing, warned = preflight.missing_sources(rendered, manifest.directory)
    return ([f"{manifest.path}: {p}" for p in found + missing],
            [f"{manifest.path}: {w}" for w in warned])


def parent_refs(parents: List[str], child: str, manager: Any, hiera: Optional[str]) -> Set[Tuple[str, str]]:
    """What the ``parents`` declare before the ``apply`` that runs ``child`` (all they
    declare when none names it): the names a child may refer to."""
    from ccm.model.errors import ValidationError

    refs: Set[Tuple[str, str]] = set()
    target = os.path.abspath(child)
    working_dir = manager.working_dir   # loading a manifest moves it to the manifest's directory
    for parent in parents:
        manifest, problems, _warnings = _load(parent, manager, set(refs), True, hiera_source=hiera)
        manager.working_dir = working_dir
        if manifest is None:
            raise ValidationError(f"--parent {parent}: {problems[0] if problems else 'cannot be loaded'}")
        try:
            before: Set[Tuple[str, str]] = set()
            for entry in manifest.resources:
                props = entry.props
                if props.type_name == "apply" and \
                        os.path.abspath(os.path.join(manifest.directory, props.name)) == target:
                    break
                before |= _declared_ids([entry])
            refs |= before
        finally:
            manifest.cleanup()
    return refs


def check(source: str, manager: Any, hiera: Optional[str], checksum: Optional[str] = None,
          parents: Optional[List[str]] = None) -> Tuple[List[str], int, List[str]]:
    """-> (every problem found, resources checked, warnings), parents before their children."""
    problems: List[str] = []
    warnings: List[str] = []
    count = 0
    lenient = not parents
    declared = parent_refs(parents, source, manager, hiera) if parents else set()
    # (source, overriding data, declared refs, deny apply, depth)
    queue: List[Tuple[str, Any, Set[Tuple[str, str]], bool, int]] = [(source, None, declared, False, 0)]
    seen = 0
    while queue and seen < MAX_CHILDREN:
        src, data, declared, deny, depth = queue.pop(0)
        seen += 1
        manifest, found, warned = _load(src, manager, declared, lenient, hiera_source=hiera if depth == 0 else None,
                                        overriding_data=data, deny_apply=deny,
                                        checksum=checksum if depth == 0 else None)
        problems += found
        warnings += warned
        if depth == 0:
            # A file that refers to nothing outside itself is a top-level manifest: what its
            # children may refer to is then fully known, and checked strictly.
            lenient = bool(warned)
        if manifest is None:
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
                refs |= _declared_ids([entry])
        finally:
            manifest.cleanup()
    return problems, count, warnings


def run(argv: List[str]) -> int:
    from ccm.cli.common import require_file

    args = parser().parse_args(argv)
    if args.facts:
        require_file(args.facts, "--facts")
    manager = build_manager(noop=True, extra_facts=cli_facts(args.fact, args.facts), read_env=args.read_env)
    problems, count, warnings = check(args.manifest, manager, args.hiera, args.checksum, args.parent)
    if args.json:
        doc: Dict[str, Any] = {"manifest": args.manifest, "valid": not problems, "resources": count,
                               "problems": problems, "warnings": warnings}
        sys.stdout.write(to_json(doc) + "\n")
        return 0 if not problems else 1
    for w in warnings:
        sys.stderr.write(f"{w}\n")
    if problems:
        for p in problems:
            sys.stderr.write(f"{p}\n")
        sys.stderr.write(f"{args.manifest}: invalid: {len(problems)} problem{'s' if len(problems) != 1 else ''}\n")
        return 1
    note = f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''}" if warnings else ""
    print(f"{args.manifest}: valid ({count} resource{'s' if count != 1 else ''}{note})")
    return 0
