"""The agent's bootstrap configuration (``/etc/choria/ccm/config.yaml``).

What: ``load_config(path)`` reads the YAML file and returns a frozen ``AgentConfig``
with every default filled in. Guarantees: every key is checked, nested ones included;
an unknown key or a bad value raises ``ConfigError`` whose one-line message names the
file and the key (``manifest_set.interval: must be a duration ...``). The file is the
anchor nothing remote can repoint: it only says *where* the manifest set lives.
Not: the manifest set itself (``ccm.agent.manifest_set``).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ccm.agent import timing
from ccm.model.errors import ValidationError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple, Type

DEFAULT_PATH = "/etc/choria/ccm/config.yaml"
DEFAULT_CACHE_DIR = "/etc/choria/ccm/source"
MAX_CONFIG_BYTES = 1 << 20
LOG_LEVELS = ("debug", "info", "warn", "error")
REGISTRATION = ("nats", "jetstream")
KEYS = ("interval", "health_check_interval", "manifests", "manifest_set", "external_data_url", "cache_dir",
        "monitor_port", "monitor_address", "log_level", "nats_context", "registration", "report", "watch",
        "service_poll")
DEFAULT_SERVICE_POLL = 10.0
SET_KEYS = ("source", "interval", "ref", "path")
MANIFEST_SCHEMES = ("", "http", "https", "obj")
SET_SCHEMES = ("", "file", "http", "https", "obj", "git+https", "git+http", "git+file", "git+ssh")
DATA_SCHEMES = ("", "file", "http", "https", "kv")


class ConfigError(ValidationError):
    """The agent configuration is unusable; the message is one line naming the key."""


def scheme_of(source: str) -> str:
    head, sep, _ = source.partition("://")
    return head.lower() if sep and head and "/" not in head else ""


@dataclass(frozen=True)
class ManifestSetConfig:
    source: str
    interval: float = timing.DEFAULT_SET_INTERVAL
    ref: str = ""
    path: str = ""

    @property
    def mode(self) -> str:
        scheme = scheme_of(self.source)
        if scheme.startswith("git+"):
            return "git"
        if scheme in ("http", "https"):
            return "http"
        if scheme == "obj":
            return "obj"
        return "path"


@dataclass(frozen=True)
class AgentConfig:
    path: str = DEFAULT_PATH
    interval: float = timing.DEFAULT_INTERVAL
    health_check_interval: Optional[float] = None
    manifests: Tuple[str, ...] = ()
    manifest_set: Optional[ManifestSetConfig] = None
    external_data_url: str = ""
    cache_dir: str = DEFAULT_CACHE_DIR
    monitor_port: int = 0
    monitor_address: str = "127.0.0.1"
    log_level: str = "info"
    nats_context: str = "CCM"
    registration: str = ""
    report: Any = None         # ccm.fleet.config.ReportConfig: publish each run's report (issue 28)
    watch: bool = False        # watch what the manifests manage and repair drift at once (issue 29)
    service_poll: float = DEFAULT_SERVICE_POLL   # seconds between service checks while watching
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _fail(path: str, key: str, reason: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {reason}")


def _duration(path: str, key: str, value: Any, minimum: float) -> float:
    from ccm.model.durations import DurationError, go_duration_seconds, parse_duration

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _fail(path, key, f"must be a duration such as 5m or 30s, got {type(value).__name__}")
    try:
        seconds = parse_duration(value)
    except DurationError:
        raise _fail(path, key, f"must be a duration such as 5m or 30s, got {value!r}") from None
    if seconds <= 0:
        raise _fail(path, key, f"must be greater than zero, got {value!r}")
    if seconds < minimum:
        raise _fail(path, key, f"must be at least {go_duration_seconds(minimum)}, got {value!r}")
    return seconds


def _string(path: str, key: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _fail(path, key, f"must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise _fail(path, key, "must not be empty")
    if "\x00" in value or "\n" in value:
        raise _fail(path, key, "must be a single line of text")
    return value


def boolean(path: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, key, f"must be true or false, got {value!r}")
    return value


def _redacted(value: str) -> str:
    from ccm.httpget import redact_url

    return redact_url(value)


def check_manifest_source(path: str, key: str, value: Any, *, relative_base: Optional[str] = None) -> str:
    """A manifest source: local path, ``http(s)://`` tarball or ``obj://BUCKET/KEY``."""
    text = _string(path, key, value)
    scheme = scheme_of(text)
    if scheme not in MANIFEST_SCHEMES:
        raise _fail(path, key, f"unsupported manifest source: {_redacted(text)}")
    if scheme == "obj":
        bucket, _, obj = text[len("obj://"):].partition("/")
        if not bucket or not obj:
            raise _fail(path, key, f"invalid object store source {text!r}: expected obj://BUCKET/KEY")
    if not scheme:
        if not os.path.isabs(text):
            if relative_base is None:
                raise _fail(path, key, f"a local manifest must be an absolute path, got {text!r}")
            text = os.path.normpath(os.path.join(relative_base, text))
    return text


def _manifest_set(path: str, value: Any) -> ManifestSetConfig:
    if not isinstance(value, Mapping):
        raise _fail(path, "manifest_set", f"must be a mapping with source and interval, got {type(value).__name__}")
    for k in value:
        if k not in SET_KEYS:
            raise _fail(path, f"manifest_set.{k}", "unknown key (expected source, interval, and for git ref, path)")
    if "source" not in value:
        raise _fail(path, "manifest_set.source", "is required")
    source = _string(path, "manifest_set.source", value["source"])
    scheme = scheme_of(source)
    if scheme not in SET_SCHEMES:
        raise _fail(path, "manifest_set.source", f"unsupported manifest set source: {_redacted(source)}")
    if not scheme and not os.path.isabs(source):
        raise _fail(path, "manifest_set.source", f"must be an absolute path or a URL, got {source!r}")
    interval = timing.DEFAULT_SET_INTERVAL
    if "interval" in value:
        interval = _duration(path, "manifest_set.interval", value["interval"], timing.scaled(1.0))
    ref = _string(path, "manifest_set.ref", value["ref"]) if "ref" in value else ""
    sub = _string(path, "manifest_set.path", value["path"]) if "path" in value else ""
    if (ref or sub) and not scheme.startswith("git+"):
        raise _fail(path, "manifest_set.ref" if ref else "manifest_set.path", "only applies to git+ sources")
    cfg = ManifestSetConfig(source=source, interval=interval, ref=ref, path=sub)
    if cfg.mode == "git":
        from ccm.agent.gitsource import parse_git_source

        try:
            parse_git_source(source, ref, sub)
        except ValidationError as exc:
            raise _fail(path, "manifest_set.source", str(exc)) from None
    return cfg


def _manifests(path: str, items: Any) -> Tuple[str, ...]:
    if not isinstance(items, list):
        raise _fail(path, "manifests", f"must be a list of manifest sources, got {type(items).__name__}")
    seen: List[str] = []
    for i, item in enumerate(items):
        source = check_manifest_source(path, f"manifests[{i}]", item)
        if source not in seen:   # one worker per distinct source
            seen.append(source)
    return tuple(seen)


def _external_data_url(path: str, value: Any) -> str:
    url = _string(path, "external_data_url", value)
    scheme = scheme_of(url)
    if scheme not in DATA_SCHEMES:
        raise _fail(path, "external_data_url", f"unsupported data source: {_redacted(url)} "
                    "(expected a path, file://, http(s):// or kv://BUCKET/KEY)")
    if scheme == "kv":
        bucket, _, key = url[len("kv://"):].partition("/")
        if not bucket or not key:
            raise _fail(path, "external_data_url", f"invalid kv source {url!r}: expected kv://BUCKET/KEY")
    return url


def _cache_dir(path: str, value: Any) -> str:
    cache = _string(path, "cache_dir", value)
    if not os.path.isabs(cache):
        raise _fail(path, "cache_dir", f"must be an absolute path, got {cache!r}")
    return os.path.normpath(cache)


def _monitor_port(path: str, port: Any) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise _fail(path, "monitor_port", f"must be a port number 1..65535 (0 disables), got {port!r}")
    return int(port)


def _one_of(key: str, allowed: Any, message: Callable[[Any], str]) -> Callable[[str, Any], Any]:
    def check(path: str, value: Any) -> Any:
        if value not in allowed:
            raise _fail(path, key, message(value))
        return value
    return check


def _durations(key: str, floor: Callable[[], float]) -> Callable[[str, Any], Any]:
    return lambda path, value: _duration(path, key, value, floor())


# Each key's check, in the order they are checked (the first problem is the one reported),
# and whether a null value counts as not set (``interval: ~`` is an error, ``log_level: ~``
# the default).
_KEY_CHECKS: Tuple[Tuple[str, Callable[[str, Any], Any], bool], ...] = (
    ("interval", _durations("interval", lambda: timing.scaled(timing.MIN_INTERVAL)), False),
    ("health_check_interval", _durations("health_check_interval", lambda: timing.scaled(1.0)), True),
    ("manifests", _manifests, True),
    ("manifest_set", _manifest_set, True),
    ("external_data_url", _external_data_url, True),
    ("cache_dir", _cache_dir, False),
    ("monitor_port", _monitor_port, True),
    ("monitor_address", lambda path, value: _string(path, "monitor_address", value), False),
    ("log_level", _one_of("log_level", LOG_LEVELS,
                          lambda v: f"must be one of: {', '.join(LOG_LEVELS)}, got {v!r}"), True),
    ("nats_context", lambda path, value: _string(path, "nats_context", value), True),
    ("registration", _one_of("registration", REGISTRATION,
                             lambda v: f"invalid registration destination {v!r} (expected nats or jetstream)"), True),
    ("watch", lambda path, value: boolean(path, "watch", value), True),
    ("service_poll", _durations("service_poll", lambda: timing.scaled(1.0)), True),
)


def parse_config(doc: Any, path: str = DEFAULT_PATH) -> AgentConfig:
    """Validate a decoded configuration document."""
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{path}: must be a YAML mapping, got {type(doc).__name__}")
    for k in doc:
        if k not in KEYS:
            raise _fail(path, str(k), f"unknown key (expected one of: {', '.join(KEYS)})")
    kw: Dict[str, Any] = {"path": path, "raw": dict(doc)}
    for key, check, null_is_unset in _KEY_CHECKS:
        if key in doc and not (null_is_unset and doc[key] is None):
            kw[key] = check(path, doc[key])
    from ccm.fleet.config import parse_report   # pure and small: None unless the key is set

    kw["report"] = parse_report(path, doc.get("report"))
    cfg = AgentConfig(**kw)
    if not cfg.manifests and cfg.manifest_set is None:
        raise ConfigError(f"{path}: no manifests configured (set manifests or manifest_set)")
    return cfg


def load_config(path: str = DEFAULT_PATH) -> AgentConfig:
    """Read and validate the configuration file at ``path``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"agent configuration {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read agent configuration {path}: {exc.strerror or exc}") from None
    return parse_config(decode_yaml(raw, path, MAX_CONFIG_BYTES, ConfigError), path)


def decode_yaml(raw: bytes, shown: str, limit: int, error: Type[ValidationError]) -> Any:
    """One bounded YAML document; every failure is one line naming ``shown``."""
    from ccm import yamlio

    if len(raw) > limit:
        raise error(f"{shown}: larger than {limit} bytes")
    try:
        return yamlio.load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{shown}: not UTF-8 text") from None
    except yamlio.YAMLError as exc:
        raise error(f"{shown}: invalid YAML: {' '.join(str(exc).split())}") from None
