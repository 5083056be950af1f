"""The two log channels of every command.

* user output (stdout): `` INFO  message k=v k=v``; colour only on a terminal;
* internal (stderr): logfmt ``time=... level=WARN msg="..." k=v``; WARN by default.

``UserLogger.bind(**attrs)`` returns a logger whose lines carry those attributes first,
as upstream's ``With()`` does.
"""
from __future__ import annotations

import logging
import sys
import threading
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, TextIO, Tuple

DEBUG, INFO, WARN, ERROR = 10, 20, 30, 40
_TAGS = {DEBUG: "DEBUG", INFO: "INFO ", WARN: "WARN ", ERROR: "ERROR"}
_COLOURS = {DEBUG: "\x1b[37m", INFO: "\x1b[32m", WARN: "\x1b[33m", ERROR: "\x1b[31m"}
_RESET = "\x1b[0m"

_state = {"user_level": INFO, "internal_level": WARN}
_lock = threading.Lock()


def configure(*, debug: bool = False, info: bool = False) -> None:
    _state["user_level"] = DEBUG if debug else INFO
    _state["internal_level"] = DEBUG if debug else (INFO if info else WARN)
    # Our handler sits on the "ccm" logger only; records still propagate to the root
    # logger (which has no handler of ours), so embedding code and tests can observe them.
    logger = logging.getLogger("ccm")
    logger.setLevel(_state["internal_level"])
    if not any(isinstance(h, _InternalHandler) for h in logger.handlers):
        logger.addHandler(_InternalHandler())


def render_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(render_value(v) for v in value) + "]"
    return str(value)


class _InternalHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        ts = datetime.fromtimestamp(record.created, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        msg = record.getMessage().replace('"', '\\"')
        level = {10: "DEBUG", 20: "INFO", 30: "WARN", 40: "ERROR", 50: "ERROR"}.get(record.levelno, "INFO")
        extra = getattr(record, "kv", None) or {}
        parts = [f"time={ts}", f"level={level}", f'msg="{msg}"']
        for k, v in extra.items():
            text = render_value(v)
            parts.append(f'{k}="{text}"' if (" " in text or not text) else f"{k}={text}")
        with _lock:
            sys.stderr.write(" ".join(parts) + "\n")


def internal(name: str = "ccm") -> logging.Logger:
    return logging.getLogger(name if name.startswith("ccm") else f"ccm.{name}")


_tty: List[Tuple[Any, bool]] = []  # the last stream asked about and its answer


def _is_terminal(stream: TextIO) -> bool:
    """``stream.isatty()``, asked once per stream rather than on every line."""
    last = _tty[0] if _tty else None
    if last is not None and last[0] is stream:
        return last[1]
    try:
        answer = bool(stream.isatty())
    except (AttributeError, ValueError):
        answer = False
    _tty[:] = [(stream, answer)]
    return answer


class UserLogger:
    """Human-facing output, one line per record, attributes bound with ``bind``."""

    def __init__(self, stream: Optional[TextIO] = None, attrs: Optional[List[Tuple[str, Any]]] = None,
                 colour: Optional[bool] = None, level: Optional[int] = None, quiet: bool = False):
        self._stream = stream
        self.attrs: List[Tuple[str, Any]] = list(attrs or [])
        self._colour = colour
        self._level = level
        self.quiet = quiet
        self.records: Optional[List[Dict[str, Any]]] = None  # set to a list to capture

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stdout

    @property
    def level(self) -> int:
        return self._level if self._level is not None else _state["user_level"]

    def bind(self, **attrs: Any) -> "UserLogger":
        child = UserLogger(self._stream, self.attrs + list(attrs.items()), self._colour, self._level, self.quiet)
        child.records = self.records
        return child

    def _use_colour(self) -> bool:
        if self._colour is not None:
            return self._colour
        return _is_terminal(self.stream)

    def log(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        items = self.attrs + list(pairs) + list(attrs.items())
        if self.records is not None:
            self.records.append({"level": level, "message": message, "attrs": items})
        if self.quiet or level < self.level:
            return
        tag = _TAGS.get(level, "INFO ")
        colour = self._use_colour()
        if colour:
            tag = f"{_COLOURS[level]}{tag}{_RESET}"
        line = f" {tag} {message}"
        if items:
            line += " " + " ".join(f"{k}={render_value(v)}" for k, v in items)
        with _lock:
            self.stream.write(line + "\n")
            if colour:   # a terminal: show progress as it happens
                self.stream.flush()

    def debug(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(DEBUG, message, *pairs, **attrs)

    def info(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(INFO, message, *pairs, **attrs)

    def warn(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(WARN, message, *pairs, **attrs)

    def error(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(ERROR, message, *pairs, **attrs)
