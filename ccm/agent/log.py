"""The agent's log: the CLI's coloured lines on a terminal, logfmt on stderr otherwise.

Under systemd or an init script the agent's output goes to a journal or a file, where
one ``time=... level=INFO msg="..." k=v`` line per record is what log tooling parses.
"""
from __future__ import annotations

import sys
import threading
from datetime import datetime, timezone
from typing import Any, Optional, TextIO, Tuple

from ccm.log import DEBUG, ERROR, INFO, WARN, UserLogger, render_value

LEVELS = {"debug": DEBUG, "info": INFO, "warn": WARN, "error": ERROR}
_NAMES = {DEBUG: "DEBUG", INFO: "INFO", WARN: "WARN", ERROR: "ERROR"}
_write_lock = threading.Lock()


def _quote(text: str) -> str:
    if not text or any(c in text for c in ' "=\n\t'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


class LogfmtLogger(UserLogger):
    """A ``UserLogger`` that writes logfmt lines (same ``bind``/level API)."""

    def bind(self, **attrs: Any) -> "UserLogger":
        child = LogfmtLogger(self._stream, self.attrs + list(attrs.items()), self._colour, self._level, self.quiet)
        child.records = self.records
        return child

    def log(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        items = self.attrs + list(pairs) + list(attrs.items())
        if self.records is not None:
            self.records.append({"level": level, "message": message, "attrs": items})
        if self.quiet or level < self.level:
            return
        ts = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        parts = [f"time={ts}", f"level={_NAMES.get(level, 'INFO')}", f"msg={_quote(message)}"]
        parts += [f"{k}={_quote(render_value(v))}" for k, v in items]
        with _write_lock:
            self.stream.write(" ".join(parts) + "\n")
            self.stream.flush()


def make_logger(level_name: str, *, debug: bool = False, info: bool = False,
                stream: Optional[TextIO] = None) -> UserLogger:
    """``--debug``/``--info`` override the configured ``log_level``."""
    level = DEBUG if debug else INFO if info else LEVELS.get(level_name, WARN)
    try:
        tty = sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty and stream is None:
        return UserLogger(level=level)
    return LogfmtLogger(stream=stream or sys.stderr, level=level, colour=False)
