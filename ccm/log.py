"""The two log channels of every command.

* user output (stdout): `` INFO  message k=v k=v``; colour only on a terminal;
* internal (stderr): logfmt ``time=... level=WARN msg="..." k=v``; WARN by default.

``UserLogger.bind(**attrs)`` returns a logger whose lines carry those attributes first,
as upstream's ``With()`` does.

``configure`` sets, once per process, the levels (``--debug``/``--info``/``--log-level``,
``--quiet`` = user level WARN), the colour policy (``--color auto|always|never``; auto =
a terminal, no ``NO_COLOR`` in the environment whatever its value, ``TERM`` not ``dumb``)
and an optional syslog copy of both channels (``--syslog``: ``/dev/log`` or
``$CCM_SYSLOG_SOCKET``, facility daemon, ident ``ccm``; at INFO or below whatever the
terminal shows, so a quiet cron run still leaves its record in syslog).

Internal records go through the standard ``logging`` module (a handler on the ``ccm``
logger), but ``internal(name)`` hands out an ``InternalLogger`` that imports ``logging``
only when it is already loaded (embedding code, tests) or when a record passes the
configured level: a plain run, whose internal records are all debug, never loads it.
"""
from __future__ import annotations

import os
import sys
from _thread import allocate_lock

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

    import logging

DEBUG, INFO, WARN, ERROR = 10, 20, 30, 40
_TAGS = {DEBUG: "DEBUG", INFO: "INFO ", WARN: "WARN ", ERROR: "ERROR"}
LEVEL_LABELS = {DEBUG: "DEBUG", INFO: "INFO", WARN: "WARN", ERROR: "ERROR", 50: "ERROR"}  # logfmt level=...
_COLOURS = {DEBUG: "\x1b[37m", INFO: "\x1b[32m", WARN: "\x1b[33m", ERROR: "\x1b[31m"}
_RESET = "\x1b[0m"


def _head(level: int, colour: bool) -> str:
    """What a user line starts with, up to its message."""
    if colour:
        return f" {_COLOURS[level]}{_TAGS.get(level, 'INFO ')}{_RESET} "
    return f" {_TAGS.get(level, 'INFO ')} "


# C0 controls (CR, ESC, NUL...), DEL and C1, shown escaped (``\r``, ``\x1b``) wherever text
# from names, data or command output is printed: it cannot move the cursor or paint a line
# passing for ccm's own. User lines keep newlines and tabs (multi-line errors indent what a
# command printed); one-line records (logfmt, syslog) escape those too.
_TEXT_ESCAPES = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c not in (0x09, 0x0A)}
_TEXT_ESCAPES[0x0D] = "\\r"
_LINE_ESCAPES = {**_TEXT_ESCAPES, 0x09: "\\t", 0x0A: "\\n"}


def escape_controls(text: str) -> str:
    """``text`` with control characters escaped, newlines and tabs kept (user lines)."""
    return text if text.isprintable() else text.translate(_TEXT_ESCAPES)


def escape_line(text: str) -> str:
    """``text`` with every control character escaped, newlines and tabs too (one-line records)."""
    return text if text.isprintable() else text.translate(_LINE_ESCAPES)


_PLAIN_HEADS = {level: _head(level, False) for level in _TAGS}
_COLOUR_HEADS = {level: _head(level, True) for level in _TAGS}

LEVEL_NAMES: Dict[str, int] = {"debug": DEBUG, "info": INFO, "warn": WARN, "warning": WARN, "error": ERROR}
COLOR_MODES = ("auto", "always", "never")
SYSLOG_SOCKET = "/dev/log"

_state: Dict[str, Any] = {"user_level": INFO, "internal_level": WARN, "color": "auto", "syslog": None}
_lock = allocate_lock()


def configure(*, debug: bool = False, info: bool = False, level: Optional[str] = None,
              quiet: bool = False, color: str = "auto", syslog: bool = False) -> None:
    """Set the process-wide log policy (see the module docstring). ``level`` is one of
    ``LEVEL_NAMES``; it wins over ``debug``/``info``; ``quiet`` raises the user level to WARN."""
    user = DEBUG if debug else INFO
    internal_level = DEBUG if debug else (INFO if info else WARN)
    if level is not None:
        user = LEVEL_NAMES[level]
        internal_level = user if user != INFO else internal_level
    if quiet:
        user = max(user, WARN)
    _state["user_level"] = user
    _state["internal_level"] = internal_level
    _state["quiet"] = quiet
    _state["color"] = color if color in COLOR_MODES else "auto"
    if _state["syslog"] is not None:
        _state["syslog"].close()
        _state["syslog"] = None
    if syslog:
        from ccm.logsyslog import SyslogSink

        _state["syslog"] = SyslogSink.open(min(user, INFO))
    _state["configured"] = True
    if "logging" in sys.modules:
        _install()   # else on the first record that passes _threshold() (InternalLogger)


def _threshold() -> int:
    """The level of the ``ccm`` logger: records below it go nowhere."""
    sink = _state["syslog"]
    level = int(_state["internal_level"])
    return min(level, sink.level) if sink is not None else level


def _install() -> None:
    """Apply the policy to the standard ``ccm`` logger (level, our handler)."""
    import logging

    # Our handler sits on the "ccm" logger only; records still propagate to the root
    # logger (which has no handler of ours), so embedding code and tests can observe them.
    logger = logging.getLogger("ccm")
    logger.setLevel(_threshold())
    if _state.get("handler") is None:   # one handler per process; addHandler adds it once
        _state["handler"] = _internal_handler()
    logger.addHandler(_state["handler"])


def colour_wanted(stream: Any, mode: Optional[str] = None, environ: Optional[Dict[str, str]] = None) -> bool:
    """Whether to colour ``stream``: ``always``/``never``, or on a terminal without
    ``NO_COLOR`` (any value, even empty) and with ``TERM`` other than ``dumb``."""
    mode = mode or _state["color"]
    if mode == "always":
        return True
    if mode == "never":
        return False
    if not _is_terminal(stream):   # first: cached per stream, cheaper than the environment
        return False
    env = os.environ if environ is None else environ
    return not ("NO_COLOR" in env or env.get("TERM") == "dumb")


def to_syslog(level: int, text: str) -> None:
    """Copy one rendered line to ``--syslog`` (nothing when it is off)."""
    sink = _state["syslog"]
    if sink is not None:
        sink.send(level, text)


def syslog_active() -> bool:
    return _state["syslog"] is not None


def write_line(stream: TextIO, line: str) -> None:
    """Write one whole line under the output lock (lines of threads never interleave), its
    control characters but the final newline escaped."""
    if not line[:-1].isprintable():
        line = escape_line(line[:-1]) + line[-1:] if line.endswith("\n") else escape_line(line)
    with _lock:
        stream.write(line)
        stream.flush()


def user_level() -> int:
    return int(_state["user_level"])


def internal_level() -> int:
    return int(_state["internal_level"])


def quiet() -> bool:
    """``--quiet``: print only what needs attention (the CLI also drops its summaries)."""
    return bool(_state.get("quiet"))


def render_value(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(render_value(v) for v in value) + "]"
    return str(value)


def _internal_handler() -> "logging.Handler":
    import logging

    class _InternalHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            _emit_internal(record)

    return _InternalHandler()


def _record_kv(record: "logging.LogRecord") -> Dict[str, Any]:
    """The ``extra={"kv": ...}`` of a record: ``logging`` sets extras as attributes of the
    record, present only on records that were given one, so this is genuine reflection."""
    return getattr(record, "kv", None) or {}


def _emit_internal(record: "logging.LogRecord") -> None:
    from datetime import datetime, timezone

    ts = datetime.fromtimestamp(record.created, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    msg = escape_line(record.getMessage()).replace('"', '\\"')
    level = LEVEL_LABELS.get(record.levelno, "INFO")
    extra = _record_kv(record)
    parts = [f"level={level}", f'msg="{msg}"']
    for k, v in extra.items():
        text = escape_line(render_value(v))   # command output, names: one logfmt line, nothing to paint
        if " " in text or not text or '"' in text:
            text = '"' + text.replace('"', '\\"') + '"'
        parts.append(f"{k}={text}")
    line = " ".join(parts)
    levelno = min(record.levelno, ERROR)
    to_syslog(levelno, line)
    if levelno < _state["internal_level"]:
        return
    with _lock:
        sys.stderr.write(f"time={ts} " + line + "\n")


class InternalLogger:
    """The ``logging.Logger`` of ``name``, looked up (and ``logging`` imported) on the first
    record that can go anywhere: while ``logging`` is not loaded, the ``ccm`` logger's
    level is ``_threshold()`` and records below it are dropped here, as the logger would."""

    __slots__ = ("name", "_real")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: Optional[logging.Logger] = None

    def _logger(self, level: int) -> Optional["logging.Logger"]:
        real = self._real
        if real is None:
            if "logging" not in sys.modules and level < _threshold():
                return None
            import logging

            if _state.get("configured"):
                _install()
            real = self._real = logging.getLogger(self.name)
        return real

    def isEnabledFor(self, level: int) -> bool:
        real = self._logger(level)
        return real is not None and real.isEnabledFor(level)

    def _record(self, level: int, msg: object, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        real = self._logger(level)
        if real is not None:
            # the record names our caller's file and line, not this class (``Logger.log``
            # is as deep as ``Logger.debug`` ...: the same stack level for every method)
            kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
            real.log(level, msg, *args, **kwargs)

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        self._record(level, msg, args, kwargs)

    def debug(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self._record(DEBUG, msg, args, kwargs)

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self._record(INFO, msg, args, kwargs)

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self._record(WARN, msg, args, kwargs)

    def error(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self._record(ERROR, msg, args, kwargs)

    def exception(self, msg: object, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)  # what Logger.exception adds to error()
        self._record(ERROR, msg, args, kwargs)


def internal(name: str = "ccm") -> InternalLogger:
    return InternalLogger(name if name.startswith("ccm") else f"ccm.{name}")


_tty: List[Tuple[Any, bool]] = [(None, False)]  # the last stream asked about and its answer, swapped whole


def _is_terminal(stream: TextIO) -> bool:
    """``stream.isatty()``, asked once per stream rather than on every line."""
    last, answer = _tty[0]
    if last is stream:
        return answer
    try:
        answer = bool(stream.isatty())
    except (AttributeError, ValueError):
        answer = False
    _tty[0] = (stream, answer)
    return answer


class LineSink:
    """What a caller needs to print lines exactly as ``UserLogger.log`` does, read once for
    a run rather than on every line (``UserLogger.line_sink``). Per line, the caller skips
    levels below ``threshold``, takes ``stream = sys.stdout if own is None else own``,
    ``last = seen[0]`` (or ``target(stream)`` when ``last[0] is not stream``: the stream
    changed), and writes ``f"{last[2][level]}{text}\\n"`` under ``lock``, flushed when
    ``last[1]`` (coloured: a terminal). ``seen[0]`` is swapped as one tuple, so a thread
    never pairs one stream with another's colour."""

    __slots__ = ("own", "threshold", "seen", "_colour")
    lock = _lock   # the lock of every user and internal line: lines of threads never interleave

    def __init__(self, own: Optional[TextIO], colour: Optional[bool], threshold: int) -> None:
        self.own = own
        self.threshold = threshold   # above ERROR when quiet: nothing is printed
        self._colour = colour
        self.seen: List[Tuple[Any, bool, Dict[int, str]]] = [(None, False, _PLAIN_HEADS)]

    def target(self, stream: TextIO) -> Tuple[Any, bool, Dict[int, str]]:
        """(stream, coloured, line starts by level) of ``stream``, remembered in ``seen``."""
        coloured = colour_wanted(stream) if self._colour is None else self._colour
        last = self.seen[0] = (stream, coloured, _COLOUR_HEADS if coloured else _PLAIN_HEADS)
        return last


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
        child = type(self)(self._stream, self.attrs + list(attrs.items()), self._colour, self._level, self.quiet)
        child.records = self.records
        return child

    def log(self, level: int, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        items: Sequence[Tuple[str, Any]] = self.attrs + list(pairs) if self.attrs else pairs
        if attrs:
            items = list(items)
            items += attrs.items()
        rendered = ""
        for k, v in items:
            rendered += f" {k}={escape_controls(v if type(v) is str else render_value(v))}"
        if self.records is not None:
            self.records.append({"level": level, "message": message, "attrs": list(items)})
        text = escape_controls(message) + rendered
        to_syslog(level, text)
        if self.quiet or level < self.level:
            return
        stream = self.stream
        colour = colour_wanted(stream) if self._colour is None else self._colour
        line = f"{_head(level, colour)}{text}\n"
        with _lock:
            stream.write(line)
            if colour:   # a terminal: show progress as it happens
                stream.flush()

    def line_sink(self) -> Optional["LineSink"]:
        """For a caller that prints many lines of one run (the status line of every
        resource) as ``log`` prints them: the policy (level, quiet, colour per stream) read
        once (``LineSink``). ``None`` when this logger needs the generic path: bound
        attributes, captured records, syslog, or a subclass with its own ``log``."""
        if self.attrs or self.records is not None or _state["syslog"] is not None \
                or type(self).log is not UserLogger.log:
            return None
        return LineSink(self._stream, self._colour, ERROR + 1000 if self.quiet else self.level)

    def debug(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(DEBUG, message, *pairs, **attrs)

    def info(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(INFO, message, *pairs, **attrs)

    def warn(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(WARN, message, *pairs, **attrs)

    def error(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self.log(ERROR, message, *pairs, **attrs)
