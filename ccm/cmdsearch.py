"""Where commands are found: ONE rule for provider selection and the runner.

A command named without a ``/`` is looked up in ccm's own ``PATH`` first, then in
``BASE_PATH``; relative entries (``""``, ``.``, ``bin``) are skipped, since ccm runs as
root from any working directory. A caller that passes its own search path (the exec
type's ``path`` property, or ``PATH`` in ``env``) gets exactly that path instead. The
child's environment still has ``PATH=BASE_PATH`` (or the caller's): only the lookup of
the executable itself honours ccm's ``PATH``, so a wrapper directory put in front of
``PATH`` (a test double, a site's ``/opt/site/bin/dnf``) is seen by ``is_manageable``
and run by the runner alike.
"""
from __future__ import annotations

import functools
import os

from ccm.model.runner import BASE_PATH
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, List, Optional


def command_search_path(process_path: Optional[str] = None) -> str:
    """ccm's ``PATH`` (``os.environ`` unless given) followed by ``BASE_PATH``, absolute dirs only."""
    return _search_path(os.environ.get("PATH", "") if process_path is None else process_path)


@functools.lru_cache(maxsize=16)
def _search_path(process_path: str) -> str:
    seen: List[str] = []
    for d in (process_path + ":" + BASE_PATH).split(":"):
        if d.startswith("/") and d not in seen:
            seen.append(d)
    return ":".join(seen)


def _is_command(path: str) -> bool:
    return os.access(path, os.X_OK) and not os.path.isdir(path)


def find_command(executable: str, search_path: Optional[str] = None) -> Optional[str]:
    """The file ``executable`` names on ``search_path`` (default: ``command_search_path()``)."""
    if "/" in executable:
        return executable if _is_command(executable) else None
    for d in (command_search_path() if search_path is None else search_path).split(":"):
        if not d:
            continue
        candidate = os.path.join(d, executable)
        if _is_command(candidate):
            return candidate
    return None


_found: Dict[str, str] = {}   # "search path\0executable" -> where it was last found
_MAX_FOUND = 256


def on_search_path(executable: str) -> bool:
    """Whether ``find_command(executable)`` finds it, for provider probes (``is_manageable``)
    that ask once per resource: where it was found last is checked first (one ``access``
    and one ``stat``) before searching every directory again, so the answer is always
    the one a full search gives now (a tool installed or removed mid-run is seen)."""
    search_path = command_search_path()
    key = search_path + "\0" + executable
    hit = _found.get(key)
    if hit is not None and _is_command(hit):
        return True
    found = find_command(executable, search_path)
    if found is None:
        _found.pop(key, None)
        return False
    if len(_found) >= _MAX_FOUND:   # a PATH that keeps changing must not grow it without end
        _found.clear()
    _found[key] = found
    return True
