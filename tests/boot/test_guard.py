"""The interpreter guard: one line naming what runs and what is supported, plus the distro
package that gives a supported CPython (the pyz-level runs on 2.7-3.8 are in tests/build)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from pyzboot import boot

HOST = {"amd64": "x86_64", "arm64": "aarch64"}.get(os.uname().machine, os.uname().machine)
HERE = sys.version_info[:2]


def test_guard_accepts_this_interpreter() -> None:
    assert boot.check_interpreter(supported=[HERE], arch=HOST) is None


def test_guard_names_running_and_supported_versions() -> None:
    msg = boot.check_interpreter(supported=[(3, 8), (3, 99)], arch=HOST)
    assert msg is not None and "\n" not in msg
    assert "running CPython %d.%d.%d" % sys.version_info[:3] in msg
    assert "supports CPython 3.8, 3.99 on %s" % HOST in msg


def test_guard_other_machine() -> None:
    other = "aarch64" if HOST == "x86_64" else "x86_64"
    msg = boot.check_interpreter(supported=[HERE], arch=other)
    assert msg is not None and "machine " + os.uname().machine in msg


def test_refusal_names_the_distro_package(tmp_path: Path) -> None:
    rel = tmp_path / "os-release"
    supported = [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14)]
    msg = boot.check_interpreter(supported=[(3, 99)], arch=HOST)
    rel.write_text('NAME="Red Hat Enterprise Linux"\nID="rhel"\nVERSION_ID="8.9"\n'
                   'PRETTY_NAME="Red Hat Enterprise Linux 8.9 (Ootpa)"\n')
    out = boot.refusal(msg, supported=supported, release_path=str(rel), running=(3, 11))
    assert out == msg  # running a supported minor (another problem): nothing to install
    out = boot.refusal(msg, supported=supported, release_path=str(rel), running=(3, 6))
    assert out.startswith(msg) and "\n" not in out
    assert out.endswith("; on Red Hat Enterprise Linux 8.9 (Ootpa) install one with: "
                        "dnf install python3.11 (then run: python3.11 ccm.pyz)")
    rel.write_text("ID=rocky\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=8.10\n")
    assert "dnf install python3.11" in boot.refusal(msg, supported, str(rel), (3, 6))
    rel.write_text('ID=ubuntu\nVERSION_ID="20.04"\nPRETTY_NAME="Ubuntu 20.04.6 LTS"\n')
    assert boot.refusal(msg, supported, str(rel), (3, 6)).endswith(
        "on Ubuntu 20.04.6 LTS install one with: apt install python3.9 (then run: python3.9 ccm.pyz)")
    rel.write_text("ID=ubuntu\nVERSION_ID=18.04\n")  # nothing supported packaged: no hint
    assert boot.refusal(msg, supported, str(rel), (3, 6)) == msg
    assert boot.refusal(msg, supported, str(tmp_path / "missing"), (3, 6)) == msg


