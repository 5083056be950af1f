"""NATS contexts, exactly as the ``nats`` CLI stores them (spec nats.md).

``load(name)`` resolves a context name (or an absolute path) to a ``NatsContext``:
``$XDG_CONFIG_HOME/nats/context/NAME.json`` (else ``~/.config/...``). Every failure is
one ``NatsError`` naming the context and the file, never its secrets.

Root trusts only what no other user can change (the rule OpenSSH applies to ``~/.ssh``):
run as root, the context file and every directory above it must belong to root and be
writable by nobody else (a root-owned sticky directory such as ``/tmp`` is allowed: only
root can rename or remove root's entries in it), a symlink on the way must belong to
root, and the same holds for the files it names (``ca``, ``cert``, ``key``, ``creds``,
``nkey``). The path is walked one directory descriptor at a time (``O_NOFOLLOW``), the
file is read from the descriptor that was checked. Otherwise root would fetch manifests
and data from a server another user chose (``sudo -E`` with their ``HOME``).
"""
from __future__ import annotations

import errno
import os
import stat

from ccm.lazyre import LazyPattern
from ccm.model.value import FrozenValueObject
from ccm.nats import NatsError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

DEFAULT_URL = "nats://127.0.0.1:4222"
MAX_CONTEXT_BYTES = 1 << 20
_PATH_KEYS = ("creds", "nkey", "cert", "key", "ca")
_STRING_KEYS = ("url", "user", "password", "creds", "nkey", "token", "cert", "key", "ca", "socks_proxy",
                "inbox_prefix", "jetstream_domain", "jetstream_api_prefix", "jetstream_event_prefix",
                "name", "description", "color_scheme", "user_jwt", "nsc", "windows_cert_store",
                "windows_cert_match", "windows_cert_match_by", "windows_ca_certs_match")
_UNSUPPORTED = ("windows_cert_store", "windows_cert_match", "windows_ca_certs_match")
_USERINFO = LazyPattern(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@")
_ENV = LazyPattern(r"\$(\w+)|\$\{(\w+)\}")   # compiled when a creds path is expanded
_CLOEXEC = os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | _CLOEXEC | os.O_NONBLOCK
MAX_LINKS = 40


class NatsContext(FrozenValueObject):
    """A context's connection settings (a plain value class: a report published from a
    cron run loads a context without dataclasses' import and class building, issue 28)."""

    __slots__ = ("name", "path", "servers", "user", "password", "token", "creds", "nkey", "cert", "key", "ca",
                 "tls_first", "inbox_prefix", "jetstream_domain", "jetstream_api_prefix", "socks_proxy")
    _value_fields = __slots__
    _repr_fields = tuple(f for f in __slots__ if f not in ("password", "token"))
    name: str                 # as given (a name or an absolute path)
    path: str
    servers: List[str]
    user: str
    password: str
    token: str
    creds: str
    nkey: str
    cert: str
    key: str
    ca: str
    tls_first: bool
    inbox_prefix: str
    jetstream_domain: str
    jetstream_api_prefix: str
    socks_proxy: str

    def __init__(self, name: str, path: str, servers: Optional[List[str]] = None, user: str = "",
                 password: str = "", token: str = "", creds: str = "", nkey: str = "", cert: str = "", key: str = "",
                 ca: str = "", tls_first: bool = False, inbox_prefix: str = "", jetstream_domain: str = "",
                 jetstream_api_prefix: str = "", socks_proxy: str = "") -> None:
        values = (name, path, [DEFAULT_URL] if servers is None else servers, user, password, token, creds, nkey,
                  cert, key, ca, tls_first, inbox_prefix, jetstream_domain, jetstream_api_prefix, socks_proxy)
        for field_name, value in zip(self.__slots__, values):
            object.__setattr__(self, field_name, value)

    @property
    def api_prefix(self) -> str:
        """The JetStream API prefix: the domain's, the explicit one, or ``$JS.API``."""
        if self.jetstream_domain:
            return f"$JS.{self.jetstream_domain}.API"
        if self.jetstream_api_prefix:
            return self.jetstream_api_prefix.rstrip(".")
        return "$JS.API"

    @property
    def uses_tls(self) -> bool:
        return bool(self.cert or self.ca or self.tls_first) or any(s.startswith("tls://") for s in self.servers)

    def display_servers(self) -> str:
        return ",".join(redact_url(s) for s in self.servers)


def redact_url(url: str) -> str:
    """``nats://user:pass@host:4222`` -> ``nats://REDACTED@host:4222``."""
    return _USERINFO.sub(r"\1REDACTED@", url.strip())


def config_dir(environ: Mapping[str, str]) -> str:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg:
        return xdg
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".config")


def context_path(name: str, environ: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    if not name:
        raise NatsError("nats context not set")
    if os.path.isabs(name):
        return name
    if ".." in name or "/" in name or os.sep in name:
        raise NatsError(f"invalid context name {name}")
    return os.path.join(config_dir(env), "nats", "context", f"{name}.json")


def _expand_env(text: str, environ: Mapping[str, str]) -> str:
    return _ENV.sub(lambda m: environ.get(m.group(1) or m.group(2), ""), text)


def _expand_home(text: str) -> str:
    return os.path.expanduser(text) if text.startswith("~") else text


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


class Untrusted(Exception):
    """Why root must not read a path (the text names the component at fault)."""


def _check(st: os.stat_result, where: str, *, directory: bool) -> None:
    if st.st_uid != 0:
        raise Untrusted(f"{where} is owned by {_owner(st.st_uid)}, not root")
    writable = st.st_mode & 0o022
    if writable and not (directory and st.st_mode & stat.S_ISVTX):
        who = "its group and others" if writable == 0o022 else "its group" if writable & 0o020 else "others"
        raise Untrusted(f"{where} is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})")


def open_trusted(path: str) -> int:
    """A read descriptor of the regular file ``path`` reached only through directories and
    symlinks that root alone controls (see the module docstring).

    Raises ``Untrusted`` with the reason, or ``OSError`` (``FileNotFoundError`` when a
    component is missing). Each directory is opened ``O_NOFOLLOW`` relative to the one
    before and checked through its descriptor; a symlink is followed only when it is
    root's (its directory is root's alone, so the target cannot change under us).
    """
    pending = [p for p in os.path.abspath(path).split("/") if p][::-1]   # next component last
    stack: List[Tuple[int, str]] = []

    def enter(fd: int, where: str) -> None:
        try:
            _check(os.fstat(fd), where, directory=True)
        except BaseException:
            os.close(fd)
            raise
        stack.append((fd, where))

    links = 0
    try:
        enter(os.open("/", _DIR_FLAGS), "/")
        while pending:
            part = pending.pop()
            if part in (".", "..") or not part:
                if part == ".." and len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            fd, where = stack[-1]
            here = os.path.join(where, part)
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                target = _roots_link(fd, part, here, st, links)
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                pending.extend([p for p in target.split("/") if p][::-1])
            elif pending:
                enter(os.open(part, _DIR_FLAGS, dir_fd=fd), here)
            else:
                return _open_file(fd, part, here)
        raise Untrusted(f"{path} is not a regular file")
    finally:
        for fd, _ in stack:
            os.close(fd)


def _roots_link(dfd: int, name: str, here: str, st: os.stat_result, links: int) -> str:
    """The target of the symlink ``name`` (in the checked directory ``dfd``), if it is root's."""
    if st.st_uid != 0:
        raise Untrusted(f"symlink {here} is owned by {_owner(st.st_uid)}, not root")
    if links > MAX_LINKS:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), here)
    return os.readlink(name, dir_fd=dfd)


def _open_file(dfd: int, name: str, here: str) -> int:
    """``name`` in the checked directory ``dfd``, opened without following a link, checked by descriptor."""
    fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{here} is not a regular file")
        _check(st, here, directory=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_plain(path: str) -> int:
    fd = os.open(path, _FILE_FLAGS)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return fd


def load(name: str, environ: Optional[Mapping[str, str]] = None) -> NatsContext:
    """Read and check the context ``name``; raise one clear NatsError otherwise."""
    env = os.environ if environ is None else environ
    path = context_path(name, env)
    as_root = os.geteuid() == 0
    try:
        fd = open_trusted(path) if as_root else _open_plain(path)
    except FileNotFoundError:
        raise NatsError(f'unknown context "{name}" (looked for {path})') from None
    except Untrusted as exc:
        raise NatsError(f'refusing nats context "{name}" ({path}) as root: {exc}') from None
    except OSError as exc:
        raise NatsError(f'cannot read nats context "{name}" ({path}): {exc.strerror or exc}') from None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_CONTEXT_BYTES + 1)
    except OSError as exc:
        raise NatsError(f'cannot read nats context "{name}" ({path}): {exc.strerror or exc}') from None
    if len(raw) > MAX_CONTEXT_BYTES:
        raise NatsError(f'invalid nats context "{name}" ({path}): larger than {MAX_CONTEXT_BYTES} bytes')
    try:
        from ccm import jsonc   # not json: its import (re, enum) costs a report's publishing more than the rest

        doc = jsonc.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NatsError(f'invalid nats context "{name}" ({path}): not valid JSON: {exc}') from None
    if not isinstance(doc, dict):
        raise NatsError(f'invalid nats context "{name}" ({path}): expected a JSON object')
    ctx = from_document(name, path, doc, env)
    if as_root:
        _check_named_files(ctx)
    return ctx


def _check_named_files(ctx: NatsContext) -> None:
    """Root: the files a context names (TLS material, credentials) obey the same rule; a
    missing one is left to the connection, which names it."""
    for key, named in zip(_PATH_KEYS, (ctx.creds, ctx.nkey, ctx.cert, ctx.key, ctx.ca)):
        if not named:
            continue
        try:
            os.close(open_trusted(named))
        except Untrusted as exc:
            raise NatsError(f'refusing nats context "{ctx.name}" ({ctx.path}) as root: its {key} file: {exc}') from None
        except OSError:
            pass


def from_document(name: str, path: str, doc: Dict[str, Any], environ: Mapping[str, str]) -> NatsContext:
    where = f'invalid nats context "{name}" ({path})'
    values: Dict[str, str] = {}
    for key in _STRING_KEYS:
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise NatsError(f"{where}: {key} must be a string")
        values[key] = value
    tls_first = doc.get("tls_first", False)
    if tls_first is None:
        tls_first = False
    if not isinstance(tls_first, bool):
        raise NatsError(f"{where}: tls_first must be a boolean")
    for key in _UNSUPPORTED:
        if values.get(key):
            raise NatsError(f"{where}: {key} is not supported")
    if values.get("creds"):
        values["creds"] = _expand_env(values["creds"], environ)
    for key in _PATH_KEYS:
        if values.get(key):
            values[key] = _expand_home(values[key])
    if bool(values.get("cert")) != bool(values.get("key")):
        raise NatsError(f"{where}: cert and key must be given together")
    servers = [s.strip() for s in values.get("url", "").split(",") if s.strip()] or [DEFAULT_URL]
    for s in servers:
        if "://" not in s:
            continue
        scheme = s.split("://", 1)[0].lower()
        if scheme not in ("nats", "tls", "ws", "wss"):
            raise NatsError(f"{where}: unsupported server URL scheme in {redact_url(s)}")
    return NatsContext(
        name=name, path=path, servers=servers, user=values.get("user", ""), password=values.get("password", ""),
        token=values.get("token", ""), creds=values.get("creds", ""), nkey=values.get("nkey", ""),
        cert=values.get("cert", ""), key=values.get("key", ""), ca=values.get("ca", ""), tls_first=tls_first,
        inbox_prefix=values.get("inbox_prefix", ""), jetstream_domain=values.get("jetstream_domain", ""),
        jetstream_api_prefix=values.get("jetstream_api_prefix", ""), socks_proxy=values.get("socks_proxy", ""))
