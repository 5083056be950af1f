"""A command that needs a subcommand and is given none lists them, as its message says."""
from __future__ import annotations

import pytest

from tests.kit import ccm
from tests.operator.helpers import ccm_env


@pytest.mark.parametrize("command,names", [
    ("ensure", ["package (pkg)", "service (svc)", "file", "exec", "archive", "scaffold", "api"]),
    ("session", ["new (start, create)", "report"]),
])
def test_command_alone_lists_its_subcommands(tmp_path, command, names):
    r = ccm(command, cwd=tmp_path, env=ccm_env(tmp_path))
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0] == ("error: a subcommand from the list below is required, use --help for full help including "
                        "flags and arguments")
    assert lines[2].startswith(f"usage: ccm {command} ")
    listed = lines[lines.index("commands:") + 1:]
    assert [line.split("  ")[1].strip() if line.startswith("  ") else line for line in listed][:len(names)] \
        == names, r.stderr
    assert all(len(line.split()) > len(name.split()) for line, name in zip(listed, names))   # each with its help
