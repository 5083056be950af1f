"""``--syslog``: a copy of both log channels as RFC 3164 datagrams to the local syslog
socket, loaded only when the flag is given (``ccm.log.configure``)."""
from __future__ import annotations

import os
import sys

from ccm.log import DEBUG, ERROR, INFO, SYSLOG_SOCKET, WARN, _lock, escape_line
from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Optional

_LOG_DAEMON = 3  # syslog facility
_SEVERITY = {DEBUG: 7, INFO: 6, WARN: 4, ERROR: 3}


class SyslogSink:
    """RFC 3164 datagrams to the local syslog socket (what ``logger -t ccm -p daemon.*``
    sends). A missing or refusing socket gives one warning on stderr, then nothing. A
    syslog daemon that stops reading never hangs a run: a send waits at most
    ``SEND_TIMEOUT`` seconds, then the sink warns once and drops the rest."""

    SEND_TIMEOUT = 0.5

    def __init__(self, sock: Any, path: str, level: int) -> None:
        self._sock = sock
        self.path = path
        self.level = level
        self._warned = False

    @classmethod
    def open(cls, level: int, path: Optional[str] = None) -> "SyslogSink":
        import socket

        path = path or os.environ.get("CCM_SYSLOG_SOCKET") or SYSLOG_SOCKET
        sink = cls(None, path, level)
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                sock.connect(path)
            except OSError:
                sock.close()
                raise
            sock.settimeout(cls.SEND_TIMEOUT)
            sink._sock = sock
        except OSError as exc:
            sink._warn(exc)
        return sink

    def _warn(self, exc: OSError) -> None:
        if not self._warned:
            self._warned = True
            reason = "not accepting messages" if isinstance(exc, socket_timeout()) else (exc.strerror or exc)
            with _lock:
                sys.stderr.write(f"ccm: warning: syslog unavailable at {self.path}: "
                                 f"{reason}; logging to the terminal only\n")

    def send(self, level: int, text: str) -> None:
        """One record, scrubbed (no scrubbing stream on the way), escaped, newlines as spaces."""
        if self._sock is None or level < self.level:
            return
        from ccm.redact import scrub_text

        pri = _LOG_DAEMON * 8 + _SEVERITY.get(level, 6)
        line = escape_line(scrub_text(text).replace("\n", " "))[:4000]
        try:
            self._sock.send(f"<{pri}>ccm[{os.getpid()}]: {line}".encode("utf-8", "replace"))
        except OSError as exc:
            self._sock.close()
            self._sock = None
            self._warn(exc)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def socket_timeout() -> type:
    import socket

    return socket.timeout
