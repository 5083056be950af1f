"""User output is coloured on a terminal only; the answer is asked once per stream."""
from __future__ import annotations

import io
import os

from ccm.log import UserLogger


def read_all(fd: int, want: str) -> str:
    """What the terminal received, read until ``want``'s length (a pty hands out lines)."""
    got = b""
    while len(got) < len(want.encode()):
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        got += chunk
    return got.decode()


def test_colour_on_a_terminal_only_and_per_stream():
    master, slave = os.openpty()
    try:
        tty = os.fdopen(slave, "w", closefd=False)
        log = UserLogger(stream=tty)
        log.info("hello", ("k", 1))
        log.info("again")
        want = " \x1b[32mINFO \x1b[0m hello k=1\r\n \x1b[32mINFO \x1b[0m again\r\n"
        assert read_all(master, want) == want
        plain = io.StringIO()
        UserLogger(stream=plain).info("hello", ("k", 1))  # another stream: asked again
        assert plain.getvalue() == " INFO  hello k=1\n"
        UserLogger(stream=tty).warn("back")  # and the terminal again
        want = " \x1b[33mWARN \x1b[0m back\r\n"
        assert read_all(master, want) == want
        forced = io.StringIO()
        UserLogger(stream=forced, colour=True).info("x")
        assert forced.getvalue() == " \x1b[32mINFO \x1b[0m x\n"
    finally:
        os.close(master)
        os.close(slave)
