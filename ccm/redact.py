"""The one place secrets are removed from text shown to anyone (errors, logs, events, output).

``redact_url`` works on the raw text, before any URL parsing: a password holding an
unencoded ``#``, ``/`` or ``?`` would otherwise split the URL in the wrong place and
leak in the "path". For every ``scheme://`` in the text, everything up to the last
``@`` of that word is the user info when it contains ``:`` or no ``/``, ``?``, ``#``;
it becomes ``REDACTED``. Over-redacting a URL with ``@`` in its path is the accepted
cost. ``split_userinfo`` applies the same rule to take credentials out of a URL before
it is parsed. ``scrub`` replaces given secret values (passwords, tokens) wherever they
occur; values of Hiera data marked ``# @sensitive`` are ``register``-ed when the data is
resolved and ``scrub_known`` removes them. ``scrub_text`` (URL user info and registered
secrets) is the output scrubber of every channel: the CLI's stdout and stderr
(``install_streams``: --render, --json, logs, errors), syslog, session event files,
``--last-run`` and carried command output; ``holds_secret`` keeps such values out of what is
stored at rest (the plan cache); ``holds_known`` lets what sends data off the host (NATS
registration publishing) refuse it.
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


def scrub_text(text: str) -> str:
    """The output scrubber: ``text`` with URL user info and every registered secret
    redacted. Every channel ccm writes to uses it (stdout, stderr, syslog, session event
    files, ``--last-run``, carried command output); a text without ``@`` and with no
    secret registered is returned as it is, without a copy."""
    if not isinstance(text, str):
        return text
    if "@" in text:
        text = redact_url(text)
    return scrub_known(text) if _SECRETS else text


def scrub_value(value: Any, depth: int = 0) -> Any:
    """``value`` (JSON-like data: dicts, lists, strings) with ``scrub_text`` applied to
    every string, keys included: for records serialised after scrubbing, so a secret is
    never cut out of the middle of the serialised text."""
    if isinstance(value, str):
        return scrub_text(value)
    if depth > 200:   # deeper than any record ccm writes: nothing to keep
        return REDACTED
    if isinstance(value, dict):
        return {scrub_value(k, depth + 1): scrub_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v, depth + 1) for v in value]
    return value


def holds_secret(value: Any, depth: int = 0) -> bool:
    """Whether any string in ``value`` (keys included) holds URL user info or a registered
    secret: what ``scrub_text`` would change. Nothing that holds one is stored at rest."""
    if isinstance(value, str):
        return scrub_text(value) != value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value) in _SECRETS   # a number marked sensitive is registered as its text
    if depth > 200:
        return True
    if isinstance(value, dict):
        return any(holds_secret(k, depth + 1) or holds_secret(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(holds_secret(v, depth + 1) for v in value)
    return False


class ScrubbingStream:
    """A text stream whose writes pass through ``scrub_text`` (stdout, stderr)."""

    def __init__(self, stream: IO[str]):
        self._stream = stream

    def write(self, text: str) -> int:
        # scrub_text's own first tests, here: a line without "@" of a run with no secret
        # registered is written unchanged
        self._stream.write(scrub_text(text) if (_SECRETS or "@" in text) else text)
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
