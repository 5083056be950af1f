"""The ccm error tree. Every error the CLI reports is a CCMError.

    CCMError
     +-- UsageError            bad command line (usage is printed)
     +-- ValidationError       bad input known before anything runs (field + reason)
     |    +-- ManifestError    a manifest that is rejected as a whole
     +-- TemplateError         an expression or template failed (compile or run)
     +-- ResourceError         a resource failed while running (resource id + reason)
     |    +-- DesiredStateError    the system did not converge
     |    +-- ProviderError        a provider's OS work failed
     +-- SessionError          session store problems
     +-- LockTimeout           a package/service lock could not be taken in time
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Dict, Iterable, Optional


class CCMError(Exception):
    """Base of every error ccm reports to a user."""


class UsageError(CCMError, ValueError):
    """The command line was wrong."""


class ValidationError(CCMError, ValueError):
    """Input was rejected before anything ran.

    ``field`` is the YAML key concerned (if any), ``resource`` the resource id.
    """

    def __init__(self, message: str, *, field: Optional[str] = None, resource: Optional[str] = None):
        self.message = message
        self.field = field
        self.resource = resource
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.resource:
            parts.append(self.resource)
        if self.field:
            parts.append(f"{self.field}")
        prefix = ": ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message

    def with_resource(self, resource: str) -> "ValidationError":
        return type(self)(self.message, field=self.field, resource=resource)


class ManifestError(ValidationError):
    """A manifest was rejected as a whole."""


class TemplateError(CCMError, ValueError):
    """An expression or template could not be compiled or evaluated."""


class ResourceError(CCMError):
    """A resource failed while running."""

    def __init__(self, reason: str, *, resource: Optional[str] = None, detail: Optional[str] = None):
        self.reason = reason
        self.resource = resource
        self.detail = detail
        text = reason
        if detail:
            text = f"{text}: {detail}"
        if resource:
            text = f"{resource}: {text}"
        super().__init__(text)


class DesiredStateError(ResourceError):
    """After acting, the re-read state still did not match what was asked for."""


class ProviderError(ResourceError):
    """A provider could not do its OS work (command failed, OSError, ...)."""


class SessionError(CCMError):
    """The session store could not be read or written."""


class LockTimeout(CCMError):
    """A global package/service lock was not acquired in time; ``holder`` is what the lock
    file says of the process holding it (pid, command, operation), empty when unknown."""

    def __init__(self, message: str, holder: Optional[Dict[str, str]] = None) -> None:
        super().__init__(message)
        self.holder: Dict[str, str] = holder if holder is not None else {}


class NoSuitableProvider(ResourceError):
    """No registered provider can manage the resource on this host."""


def did_you_mean(word: str, choices: "Iterable[str]") -> str:
    """`` (did you mean `owner`?)`` for the closest of ``choices`` to ``word``, else ``""``."""
    import difflib

    options = sorted({c for c in choices if isinstance(c, str)})
    if not isinstance(word, str) or not options:
        return ""
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in options}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f" (did you mean `{close[0]}`?)" if close else ""
