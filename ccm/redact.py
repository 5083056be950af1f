"""The one place secrets are removed from text shown to anyone (errors, logs, events, output).

``redact_url`` works on the raw text, before any URL parsing: a password holding an
unencoded ``#``, ``/`` or ``?`` would otherwise split the URL in the wrong place and
leak in the "path". For every ``scheme://`` in the text, everything up to the last
``@`` of that word is the user info when it contains ``:`` or no ``/``, ``?``, ``#``;
it becomes ``REDACTED``. Over-redacting a URL with ``@`` in its path is the accepted
cost. ``split_userinfo`` applies the same rule to take credentials out of a URL before
it is parsed. ``scrub`` replaces known secret values (passwords, tokens, ``@sensitive``
data) wherever they occur.
"""
from __future__ import annotations

import re
from typing import Iterable, Tuple

REDACTED = "REDACTED"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
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
