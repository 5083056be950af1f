"""ccm's exit without interpreter teardown keeps everything a normal exit does."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(code, **kw):
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, **kw)


def test_atexit_callbacks_run_and_buffered_output_is_flushed_with_the_code():
    r = run("import atexit, sys; from ccm.__main__ import finish;"
            "atexit.register(lambda: sys.stdout.write('bye'));"
            "sys.stdout.write('out-'); sys.stderr.write('err'); finish(3)")
    assert (r.returncode, r.stdout, r.stderr) == (3, "out-bye", "err")


def test_a_live_thread_gets_the_normal_exit_which_waits_for_it(tmp_path):
    done = tmp_path / "done"
    r = run("import threading, time; from ccm.__main__ import finish;"
            f"t = threading.Thread(target=lambda: (time.sleep(0.3), open({str(done)!r}, 'w').write('x')));"
            "t.start(); finish(4)")
    assert r.returncode == 4
    assert done.read_text() == "x"


def test_a_failing_stdout_flush_exits_like_python_does():
    """Output still buffered at exit on a full device: the message and status 120 Python gives."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    code = "import sys; from ccm.__main__ import finish; sys.stdout.write('x' * 100); {}"
    got = []
    for end in ("finish(0)", "sys.exit(0)"):
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-c", code.format(end)], cwd=ROOT, stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60, env=env)
        got.append((r.returncode, r.stderr))
    assert got[0] == got[1]
    assert got[0][0] == 120 and "No space left on device" in got[0][1]
