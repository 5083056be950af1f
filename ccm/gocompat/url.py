"""Go's ``net/url`` ``Parse`` and ``URL.String`` (what Sprig's ``urlParse``/``urlJoin`` use).

``parse(raw)`` gives Go's fields: a lower-cased ``scheme``, ``opaque`` for ``mailto:x``,
the decoded ``path`` and ``fragment``, ``raw_query`` as written, ``host`` with its port,
``user``/``password`` decoded; errors carry Go's text (``parse "...": ...``).
``URL.string()`` escapes as Go does (a space in a path is ``%20``, ``?`` is ``%3F``).
Not: ``RawPath``/``RawFragment`` round-tripping of odd escapes. Standard library only.
"""
from __future__ import annotations
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import List, Optional, Tuple


__all__ = ["URLError", "URL", "parse", "escape"]

_UNRESERVED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")
_HOST_EXTRA = frozenset("!$&'()*+,;=:[]<>\"")
_SUB = frozenset("$&+,/:;=?@")


class URLError(ValueError):
    """A URL Go's ``url.Parse`` rejects."""


def _should_escape(c: str, mode: str) -> bool:
    if c in _UNRESERVED:
        return False
    if mode == "host" and c in _HOST_EXTRA:
        return False
    if c in _SUB:
        if mode == "path":
            return c == "?"
        if mode == "user":
            return c in "@/?:"
        if mode == "fragment":
            return False
    if mode == "fragment" and c in "!()*":
        return False
    return True


def escape(s: str, mode: str) -> str:
    """Go's ``url.escape``: percent-encode the UTF-8 bytes ``mode`` does not allow."""
    out: List[str] = []
    for ch in s:
        if ord(ch) < 0x80 and not _should_escape(ch, mode):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _unescape(s: str, mode: str) -> str:
    data = bytearray()
    i = 0
    raw = s.encode("utf-8")
    while i < len(raw):
        b = raw[i]
        if b == 0x25:   # "%"
            hexpart = raw[i + 1:i + 3].decode("ascii", "replace")
            if len(hexpart) < 2 or any(c not in "0123456789abcdefABCDEF" for c in hexpart):
                bad = raw[i:i + 3].decode("utf-8", "replace")
                raise URLError(f'invalid URL escape "{bad}"')
            data.append(int(hexpart, 16))
            i += 3
            continue
        if mode == "host" and b < 0x80 and _should_escape(chr(b), "host"):
            raise URLError(f'invalid character "{chr(b)}" in host name')
        data.append(b)
        i += 1
    return data.decode("utf-8", "replace")


class URL:
    """The parts of a Go ``url.URL``."""

    __slots__ = ("scheme", "opaque", "user", "password", "host", "path", "raw_query", "fragment",
                 "force_query", "omit_host")

    def __init__(self) -> None:
        self.scheme = self.opaque = self.host = self.path = self.raw_query = self.fragment = ""
        self.user: Optional[str] = None
        self.password: Optional[str] = None
        self.force_query = self.omit_host = False

    def userinfo(self) -> str:
        """``Userinfo.String()`` (``""`` when there is none)."""
        if self.user is None:
            return ""
        text = escape(self.user, "user")
        return text + (":" + escape(self.password, "user") if self.password is not None else "")

    def hostname(self) -> str:
        host = self.host
        if host.startswith("["):
            end = host.find("]")
            return host[1:end] if end > 0 else host[1:]
        return host.rsplit(":", 1)[0] if ":" in host else host

    def string(self) -> str:
        out: List[str] = []
        if self.scheme:
            out.append(self.scheme + ":")
        if self.opaque:
            out.append(self.opaque)
        else:
            if self.scheme or self.host or self.user is not None:
                if not (self.omit_host and not self.host and self.user is None):
                    if self.host or self.path or self.user is not None:
                        out.append("//")
                    if self.user is not None:
                        out.append(self.userinfo() + "@")
                    if self.host:
                        out.append(escape(self.host, "host"))
            path = "*" if self.path == "*" else escape(self.path, "path")
            if path and path[0] != "/" and self.host:
                out.append("/")
            if not out and ":" in path.split("/", 1)[0]:
                out.append("./")
            out.append(path)
        if self.force_query or self.raw_query:
            out.append("?" + self.raw_query)
        if self.fragment:
            out.append("#" + escape(self.fragment, "fragment"))
        return "".join(out)


def _scheme(raw: str) -> Tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _authority(url: URL, authority: str) -> None:
    at = authority.rfind("@")
    host = authority[at + 1:] if at >= 0 else authority
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise URLError("missing ']' in host")
        port = host[end + 1:]
        if port and not (port[0] == ":" and port[1:].isdigit() or port == ":"):
            raise URLError(f'invalid port "{port}" after host')
    elif ":" in host:
        port = host[host.rfind(":"):]
        if not (port == ":" or port[1:].isdigit()):
            raise URLError(f'invalid port "{port}" after host')
    url.host = _unescape(host, "host")
    if at >= 0:
        info = authority[:at]
        name, colon, password = info.partition(":")
        url.user = _unescape(name, "user")
        url.password = _unescape(password, "user") if colon else None


def parse(raw: str) -> URL:
    """Go's ``url.Parse``; raises ``URLError`` with Go's ``parse "<url>": <reason>``."""
    body, hash_, frag = raw.partition("#")
    try:
        url = _parse(body)
        if hash_:
            url.fragment = _unescape(frag, "fragment")
    except URLError as err:
        raise URLError(f'parse "{body}": {err}') from None
    return url


def _parse(raw: str) -> URL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    url = URL()
    if raw == "*":
        url.path = "*"
        return url
    url.scheme, rest = _scheme(raw)
    url.scheme = url.scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        url.force_query, rest = True, rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if url.scheme:
            url.opaque = rest
            return url
        if ":" in rest.split("/", 1)[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (url.scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        _authority(url, authority)
        rest = slash + tail
    elif url.scheme and rest.startswith("/"):
        url.omit_host = True
    url.path = _unescape(rest, "path")
    return url
