"""ccm.log.internal(): logging is imported only when a record can go somewhere."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

from ccm.log import internal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(code):
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def test_records_below_the_level_do_not_import_logging_and_others_print_as_before():
    r = run("import sys; from ccm import log; log.configure();"
            "log.internal('ccm.t').debug('quiet', extra={'kv': {'a': 1}}); log.internal('ccm.t').info('also');"
            "print('logging' in sys.modules);"
            "log.internal('ccm.t').warning('loud %s', 'x', extra={'kv': {'k': 'v w'}});"
            "print('logging' in sys.modules)")
    assert r.stdout.split() == ["False", "True"]
    line = r.stderr.strip()
    assert line.startswith("time=") and line.endswith(' level=WARN msg="loud x" k="v w"'), line


def test_debug_level_and_syslog_threshold_let_records_through():
    r = run("from ccm import log; log.configure(debug=True); log.internal('t').debug('dbg')")
    assert 'level=DEBUG msg="dbg"' in r.stderr


def test_records_name_the_caller_and_reach_the_standard_logger(caplog):
    with caplog.at_level(logging.DEBUG, logger="ccm.t"):
        internal("ccm.t").debug("one", extra={"kv": {"a": 1}})
        try:
            raise ValueError("x")
        except ValueError:
            internal("t").exception("two")
    assert [(r.name, r.levelno, r.getMessage(), r.filename, r.funcName) for r in caplog.records] == [
        ("ccm.t", logging.DEBUG, "one", "test_internal_log.py", "test_records_name_the_caller_and_reach_the_standard_logger"),
        ("ccm.t", logging.ERROR, "two", "test_internal_log.py", "test_records_name_the_caller_and_reach_the_standard_logger"),
    ]
    assert caplog.records[0].kv == {"a": 1} and caplog.records[1].exc_info is not None
