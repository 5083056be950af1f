"""A small LSB init script running a tiny daemon with a pidfile, for the sysv tests.

The daemon (``sleep`` under ``setsid``) writes its own pid, so the pidfile never races the
fork. Liveness ignores zombies: a container's PID 1 may not reap orphans, and a killed
daemon must not look "running" because its zombie still answers ``kill -0``.
Every invocation is appended to the log file, so tests can assert what ran.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Optional

TEMPLATE = r"""#!/bin/sh
### BEGIN INIT INFO
# Provides:          @NAME@
# Required-Start:    $remote_fs
# Required-Stop:     $remote_fs
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: ccm test daemon
### END INIT INFO
PIDFILE="@PIDFILE@"
LOG="@LOG@"

running() {
    [ -f "$PIDFILE" ] || return 1
    pid=$(cat "$PIDFILE" 2>/dev/null)
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state=$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)
    [ "$state" != "Z" ]
}

echo "$1" >> "$LOG"
case "$1" in
  start)
    running && exit 0
    rm -f "$PIDFILE"
    setsid sh -c 'echo $$ > "$0"; exec sleep 86400' "$PIDFILE" </dev/null >/dev/null 2>&1 &
    i=0
    while [ $i -lt 50 ] && ! running; do sleep 0.1; i=$((i+1)); done
    running || { echo "@NAME@ failed to start" >&2; exit 1; }
    ;;
  stop)
    if running; then
        kill "$(cat "$PIDFILE")"
        i=0
        while [ $i -lt 50 ] && running; do sleep 0.1; i=$((i+1)); done
    fi
    rm -f "$PIDFILE"
    ;;
  restart)
    "$0" stop && "$0" start
    exit $?
    ;;
  status)
    if running; then echo "@NAME@ is running"; exit 0; fi
    if [ -f "$PIDFILE" ]; then echo "@NAME@ is dead but its pid file exists"; exit 1; fi
    echo "@NAME@ is not running"
    exit 3
    ;;
  *)
    echo "Usage: $0 {start|stop|restart|status}" >&2
    exit 2
    ;;
esac
exit 0
"""


def write(path: str, name: str, pidfile: str, log: str) -> str:
    text = TEMPLATE.replace("@NAME@", name).replace("@PIDFILE@", pidfile).replace("@LOG@", log)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    return path


def read_pid(pidfile: str) -> Optional[int]:
    try:
        with open(pidfile) as fh:
            text = fh.read().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def alive(pid: Optional[int]) -> bool:
    """Running and not a zombie."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill(pidfile: str) -> None:
    pid = read_pid(pidfile)
    if pid and alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for _ in range(50):
            if not alive(pid):
                break
            time.sleep(0.05)
