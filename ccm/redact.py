"""The one place secrets are removed from text shown to anyone (errors, logs, events, output).

``redact_url`` works on the raw text, before any URL parsing: a password holding an
unencoded ``#``, ``/`` or ``?`` would otherwise split the URL in the wrong place and
leak in the "path". For every ``scheme://`` in the text, everything up to the last
``@`` of that word is the user info when it contains ``:`` or no ``/``, ``?``, ``#``;
it becomes ``REDACTED``. Over-redacting a URL with ``@`` in its path is the accepted
cost. ``split_userinfo`` applies the same rule to take credentials out of a URL before
it is parsed. ``scrub`` replaces given secret values (passwords, tokens) wherever they
occur; values of Hiera data marked ``# @sensitive`` are ``register``-ed when the data is
resolved and ``scrub_known`` removes them from every output channel: the CLI's stdout and
stderr (``install_streams``: --render, --json, logs, errors) and session event files;
``holds_known`` lets what sends data off the host (NATS registration publishing) refuse it.
"""
from __future__ import annotations

from ccm.lazyre import LazyPattern
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any, Iterable, Set, Tuple

REDACTED = "REDACTED"
_SCHEME = LazyPattern(r"[A-Za-z][A-Za-z0-9+.-]*://")
_WORD_END = frozenset(" \t\r\n\"'<>`,;")


def _userinfo_end(text: str, start: int) -> Tuple[int, int]:
    """``(at, end)``: the position of the userinfo ``@`` (or -1) and the word's end."""
    end = start
    while end < len(text) and text[end] not in _WORD_END:
        end += 1
    at = text.rfind("@", start, end)
    if at < 0:
        return -1, end
    userinfo = text[start:at]
    if ":" in userinfo or not any(c in userinfo for c in "/?#"):
        return at, end
    return -1, end


def redact_url(text: str) -> str:
    """Every URL's user info in ``text`` replaced by ``REDACTED``; other text unchanged."""
    if not isinstance(text, str) or "@" not in text:
        return text
    out = []
    pos = 0
    for m in _SCHEME.finditer(text):
        if m.start() < pos:
            continue
        at, end = _userinfo_end(text, m.end())
        if at >= 0:
            out.append(text[pos:m.end()])
            out.append(REDACTED)
            pos = at
    out.append(text[pos:])
    return "".join(out)


def split_userinfo(url: str) -> Tuple[str, str, str]:
    """``(url without user info, raw user, raw password)`` by the raw-text rule."""
    m = _SCHEME.match(url)
    if not m:
        return url, "", ""
    at, _ = _userinfo_end(url, m.end())
    if at < 0:
        return url, "", ""
    user, _, password = url[m.end():at].partition(":")
    return url[:m.end()] + url[at + 1:], user, password


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with URL user info and every given secret (longest first) redacted."""
    text = redact_url(text)
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


# --- values marked ``# @sensitive`` in Hiera data -----------------------------------------

_SECRETS: Set[str] = set()


def register(value: Any) -> None:
    """Remember every string (and number) in ``value`` as a secret for ``scrub_known``."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (str, int, float)):
        text = str(value)
        if len(text) >= 3:
            _SECRETS.add(text)
            import json

            escaped = json.dumps(text)[1:-1]
            if escaped != text:
                _SECRETS.add(escaped)
        return
    if isinstance(value, dict):
        for v in value.values():
            register(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            register(v)


def known_secrets() -> Set[str]:
    return set(_SECRETS)


def holds_known(text: str) -> bool:
    """Whether ``text`` contains a value registered as sensitive (the check before data leaves the host)."""
    return bool(_SECRETS) and isinstance(text, str) and any(secret in text for secret in _SECRETS)


def scrub_known(text: str) -> str:
    """``text`` with every registered secret replaced (cheap when none are registered)."""
    if not _SECRETS or not isinstance(text, str):
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class ScrubbingStream:
    """A text stream whose writes pass through ``scrub_known`` (stdout, stderr)."""

    def __init__(self, stream: IO[str]):
        self._stream = stream

    def write(self, text: str) -> int:
        # scrub_known's own first test, here: a run with no secret writes every line unchanged
        self._stream.write(scrub_known(text) if _SECRETS else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install_streams() -> None:
    """Route ``sys.stdout``/``sys.stderr`` through ``scrub_known`` (once per process)."""
    import sys

    if not isinstance(sys.stdout, ScrubbingStream):
        sys.stdout = ScrubbingStream(sys.stdout)
    if not isinstance(sys.stderr, ScrubbingStream):
        sys.stderr = ScrubbingStream(sys.stderr)
