"""One rule for where commands are found: provider selection and the runner agree.

A wrapper directory put in front of ccm's PATH is seen by ``is_manageable`` and run by
the runner; relative PATH entries are ignored by both; a caller's own ``path`` is used
exactly; the child's environment keeps the fixed ``PATH``.
"""
from __future__ import annotations

import os

from ccm.cmdsearch import command_search_path, find_command
from ccm.model.runner import BASE_PATH
from ccm.resources.package.apt import AptFactory
from ccm.resources.package.dnf import DnfFactory
from ccm.resources.service import host
from ccm.runner import SubprocessRunner

FACTS = {"host": {"info": {"platformFamily": "rhel"}}}


def wrapper_dir(tmp_path, *tools):
    d = tmp_path / "wrappers"
    d.mkdir()
    for tool in tools:
        f = d / tool
        f.write_text(f'#!/bin/sh\necho "wrapper {tool} $*"\necho "child PATH=$PATH"\n')
        f.chmod(0o755)
    return str(d)


def test_wrapper_on_ccm_path_is_seen_by_selection_and_run_by_the_runner(tmp_path, monkeypatch):
    d = wrapper_dir(tmp_path, "dnf", "rpm")
    monkeypatch.setenv("PATH", d + ":/usr/bin:/bin")
    assert tuple(DnfFactory().is_manageable(FACTS, None)) == (True, 1)
    res = SubprocessRunner().run(["dnf", "-q", "check-update"])
    assert res.exit_code == 0 and res.error is None
    assert res.stdout == f"wrapper dnf -q check-update\nchild PATH={BASE_PATH}\n"


def test_without_the_wrapper_both_say_not_found(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    name = "ccm-no-such-tool-xyz"
    assert find_command(name) is None and host.which(name) is None
    res = SubprocessRunner().run([name])
    assert res.error == f'exec: "{name}": executable file not found in $PATH'


def test_relative_path_entries_are_ignored_by_both(tmp_path, monkeypatch):
    d = wrapper_dir(tmp_path, "apt-get", "apt-cache", "apt-mark", "dpkg-query", "ccm-only-here")
    monkeypatch.chdir(d)
    monkeypatch.setenv("PATH", ".:wrappers::" + str(tmp_path / "none"))
    assert "." not in command_search_path().split(":")
    assert command_search_path().split(":") == [str(tmp_path / "none")] + BASE_PATH.split(":")
    assert find_command("ccm-only-here") is None
    assert SubprocessRunner().run(["ccm-only-here"]).error is not None
    # the real dpkg tools, if any, are in BASE_PATH; the wrappers in "." are not used
    if find_command("dpkg-query"):
        assert os.path.dirname(find_command("dpkg-query") or "") != d
    else:
        assert tuple(AptFactory().is_manageable(FACTS, None))[0] is False


def test_a_callers_own_path_is_used_exactly(tmp_path, monkeypatch):
    d = wrapper_dir(tmp_path, "ccm-tool")
    monkeypatch.setenv("PATH", d)
    runner = SubprocessRunner()
    assert runner.run(["ccm-tool"]).stdout.startswith("wrapper ccm-tool")
    # exec's `path` (and an env PATH) replace the search path: ccm's own PATH is not used
    assert runner.run(["ccm-tool"], path="/usr/bin:/bin").error is not None
    assert runner.run(["ccm-tool"], env={"PATH": "/usr/bin"}).error is not None
    own = runner.run(["ccm-tool", "x"], path=d + ":/usr/bin:/bin")
    assert own.stdout == f"wrapper ccm-tool x\nchild PATH={d}:/usr/bin:/bin\n"


def test_probes_answer_as_a_full_search_after_tools_come_and_go(tmp_path, monkeypatch):
    """``on_search_path`` remembers where a tool was found, never what the search said:
    a tool removed, made non-executable or replaced by a directory mid-run is not on
    PATH any more, one installed later is, and another PATH is searched afresh."""
    from ccm.cmdsearch import on_search_path

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    name = "ccm-probe-tool"
    monkeypatch.setenv("PATH", f"{first}:{second}")
    assert on_search_path(name) is False
    tool = second / name
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert on_search_path(name) is True and on_search_path(name) is True
    (first / name).write_text("#!/bin/sh\n")
    (first / name).chmod(0o755)
    tool.unlink()
    assert on_search_path(name) is True              # the copy in the first directory
    (first / name).chmod(0o644)
    assert on_search_path(name) is False             # not executable: not found
    (first / name).unlink()
    (first / name).mkdir()
    assert on_search_path(name) is False             # a directory is not a command
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert on_search_path(name) is False and find_command(name) is None
    monkeypatch.setenv("PATH", f"{second}")
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert on_search_path(name) is True
    tool.unlink()
    assert on_search_path(name) is False
