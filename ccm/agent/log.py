"""The agent's log: the CLI's coloured lines on a terminal, logfmt on stderr otherwise.

Under systemd or an init script the agent's output goes to a journal or a file, where
one ``time=... level=INFO msg="..." k=v`` line per record is what log tooling parses.
Either way every message and attribute passes through ``ccm.redact.redact_url`` first:
a source or an error holding ``https://user:password@...`` never reaches a log line.
"""
from __future__ import annotations

import sys
from datetime import datetime, timezone

from ccm import log as ccmlog
from ccm.log import DEBUG, INFO, LEVEL_LABELS, LEVEL_NAMES, WARN, UserLogger, render_value
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Optional, TextIO, Tuple


def _quote(text: str) -> str:
    if not text or any(c in text for c in ' "=\n\t'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def _redacted(value: Any) -> Any:
    from ccm.redact import redact_url

    return redact_url(value) if isinstance(value, str) else value


class RedactingLogger(UserLogger):
    """A ``UserLogger`` whose messages and attributes (bound ones too) have URL user info redacted."""

    def bind(self, **attrs: Any) -> UserLogger:
        return super().bind(**{k: _redacted(v) for k, v in attrs.items()})

    def log(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self._emit(level, _redacted(message), *((k, _redacted(v)) for k, v in pairs),
                   **{k: _redacted(v) for k, v in attrs.items()})

    def _emit(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        UserLogger.log(self, level, message, *pairs, **attrs)


class LogfmtLogger(RedactingLogger):
    """A ``UserLogger`` (same ``bind``/level/capture API, same syslog copy) that writes logfmt lines."""

    def _emit(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        items = self.attrs + list(pairs) + list(attrs.items())
        if self.records is not None:
            self.records.append({"level": level, "message": message, "attrs": items})
        shown = not self.quiet and level >= self.level
        if not shown and not ccmlog.syslog_active():
            return
        fields = " ".join([f"level={LEVEL_LABELS.get(level, 'INFO')}", f"msg={_quote(message)}"]
                          + [f"{k}={_quote(render_value(v))}" for k, v in items])
        ccmlog.to_syslog(level, fields)
        if not shown:
            return
        ts = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        ccmlog.write_line(self.stream, f"time={ts} {fields}\n")


def make_logger(level_name: str, *, debug: bool = False, info: bool = False,
                stream: Optional[TextIO] = None) -> UserLogger:
    """``--debug``/``--info`` override the configured ``log_level``."""
    level = DEBUG if debug else INFO if info else LEVEL_NAMES.get(level_name, WARN)
    try:
        tty = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty and stream is None:
        return RedactingLogger(level=level)
    return LogfmtLogger(stream=stream or sys.stderr, level=level, colour=False)
