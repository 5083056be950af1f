"""What the package providers (``apt``, ``dnf``) share: the runner they run their tools
through, the log, the global package lock and the run cache their prefetched status uses."""
from __future__ import annotations

from ccm.locks import package_lock
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Optional

    from ccm.model.provider import RunCache


class ToolProvider:
    """A package provider that drives a command-line tool; ``scheme`` is its version ordering."""

    name = ""
    scheme = "generic"

    def __init__(self, runner: Any, log: Any = None, lock: Any = None):
        self.runner = runner
        self.log = log
        self.lock = lock or package_lock()
        self.cache: Optional[RunCache] = None

    def use_run_cache(self, cache: RunCache) -> None:   # ccm.model.provider.Prefetching
        self.cache = cache
