"""File facts: ``facts.json``, ``facts.yaml`` and ``facts.d/*.{json,yaml}`` per directory.

Security rules (data-and-templates.md §1.2): relative directories are skipped, paths
are cleaned lexically, and symlinked files, a symlinked ``facts.d`` and symlinked
entries in it are skipped with an ERROR log. Unreadable or undecodable files, and files
that are not a map, are logged and skipped. Never raises.
"""
from __future__ import annotations

import os

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional

from ccm.data.merge import deep_merge
from ccm.log import internal

log = internal("ccm.facts")


def user_dir(environ: Optional[Dict[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "choria", "ccm")


def _decode(path: str, as_json: bool) -> Optional[Dict[str, Any]]:
    from ccm.readfile import read_text

    try:
        text = read_text(path, "facts file")
    except ValueError as exc:
        log.error("could not read facts file %s: %s", path, exc)
        return None
    try:
        if as_json:
            import json   # here: most hosts have no facts file

            value = json.loads(text)
        else:
            from ccm.data.sources import load_yaml

            value = load_yaml(text, path) if text.strip() else {}
    except Exception as exc:  # JSON or YAML errors: log and skip the file
        log.error("could not decode facts file %s: %s", path, str(exc).splitlines()[0] if str(exc) else exc)
        return None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        log.error("facts file %s does not contain a map", path)
        return None
    return value


def files_in(directory: str) -> List[str]:
    """The fact files of one directory, in merge order (symlinks and odd entries dropped)."""
    if not os.path.isabs(directory):
        log.error("skipping facts directory %s: not an absolute path", directory)
        return []
    directory = os.path.normpath(directory)
    out: List[str] = []
    for name in ("facts.json", "facts.yaml"):
        path = os.path.join(directory, name)
        if os.path.islink(path):
            log.error("skipping symlinked facts file %s", path)
        elif os.path.isfile(path):
            out.append(path)
    factsd = os.path.join(directory, "facts.d")
    if os.path.islink(factsd):
        log.error("skipping symlinked facts directory %s", factsd)
        return out
    try:
        names = sorted(os.listdir(factsd), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except FileNotFoundError:
        return out
    except OSError as exc:
        log.error("could not list %s: %s", factsd, exc)
        return out
    for name in names:
        if os.path.splitext(name)[1].lower() not in (".json", ".yaml"):
            continue
        path = os.path.join(factsd, name)
        if os.path.islink(path):
            log.error("skipping symlinked facts file %s", path)
        elif os.path.isfile(path):
            out.append(path)
    return out


def load_file_facts(directories: Iterable[str]) -> Dict[str, Any]:
    """Deep-merge every fact file of ``directories`` in order (later wins)."""
    merged: Dict[str, Any] = {}
    for directory in directories:
        for path in files_in(directory):
            value = _decode(path, as_json=path.lower().endswith(".json"))
            if value is not None:
                log.debug("merging facts from %s", path)
                merged = deep_merge(merged, value)
    return merged
