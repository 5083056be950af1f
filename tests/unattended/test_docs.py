"""The documentation inside the file: help texts with defaults, examples, the man page,
bash/zsh completions generated from the argparse tree, --version, and a cheap --help."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from ccm.cli import docgen
from ccm.cli.common import shown_default
from ccm.cli.main import COMMANDS
from tests.kit import ccm
from tests.unattended.helpers import ROOT


def _nodes():
    return [n for n in docgen.walk(docgen.tree(strict=True)) if n.parser is not None]


def test_every_registered_command_is_in_the_tree():
    from ccm.cli.main import COMMANDS

    # strict: a command module without parser() fails here (the generators need its tree)
    assert [n.path[0] for n in docgen.tree(strict=True).children] == list(COMMANDS)


def test_every_flag_of_every_command_has_help():
    missing = []
    for node in _nodes():
        for action in node.parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if action.help is argparse.SUPPRESS:
                continue
            if not (action.help or "").strip():
                missing.append(f"ccm {' '.join(node.path)} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_every_default_is_stated_in_help():
    unstated = []
    for node in _nodes():
        text = node.parser.format_help()
        for action in node.parser._actions:
            if action.help is argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
                continue
            default = shown_default(action)
            if default is None:
                # no default to state, or the help text already words it ("default 5")
                assert action.default in (None, False, [], "", argparse.SUPPRESS) or "default" in action.help.lower() \
                    or isinstance(action, argparse._StoreFalseAction)   # --no-X: its --X states the default
                continue
            if f"(default: {default})" not in " ".join(text.split()):
                unstated.append(f"ccm {' '.join(node.path)} {action.option_strings or action.dest}")
    assert unstated == []


def test_subcommands_have_summaries():
    assert [" ".join(n.path) for n in docgen.walk(docgen.tree())[1:] if not n.summary] == []


@pytest.mark.parametrize("command", ["apply", "ensure"])
def test_help_shows_examples(command):
    res = ccm(command, "--help")
    assert res.returncode == 0
    examples = res.stdout[res.stdout.index("examples:"):]
    assert examples.count(f"ccm {command} ") >= 4


def test_plain_help_and_version_import_no_command_module():
    code = ("import sys; from ccm.cli.main import main; main(['--help']); main(['--version']);"
            "print(sorted(m for m in sys.modules if m.startswith('ccm.cli.') and m != 'ccm.cli.main'))")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip().splitlines()[-1] == "[]", res.stdout + res.stderr


def test_version_outside_a_pyz():
    import platform

    from ccm import __version__

    res = ccm("--version")
    assert res.returncode == 0 and res.stderr == ""
    line = res.stdout.strip()
    assert line.split()[0] == __version__
    assert "unknown build" in line and platform.python_version() in line and os.uname().machine in line


# --- man page ------------------------------------------------------------------------------

def test_man_page_renders_cleanly_and_covers_every_flag(tmp_path):
    res = ccm("--help-man")
    assert res.returncode == 0 and res.stdout.startswith(".TH CCM 1 ")
    page = tmp_path / "ccm.1"
    page.write_text(res.stdout)
    groff = shutil.which("groff")
    if groff is None:
        pytest.fail("groff is needed to check the man page (Debian package groff-base; make doc-tools)")
    out = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    text = subprocess.run([groff, "-man", "-Tascii", "-P", "-cbou", str(page)], capture_output=True,
                          text=True, env=dict(os.environ, MANWIDTH="200")).stdout
    for node in _nodes():
        assert "ccm " + " ".join(node.path) in text
        for action in docgen.flags(node):
            assert action.option_strings[-1] in text, (node.path, action.option_strings)
    for name in ("--quiet", "--log-level", "--syslog", "NO_COLOR", "CCM_SYSLOG_SOCKET", "EXIT STATUS"):
        assert name in text


# --- completions ---------------------------------------------------------------------------

BASH_CASES = [
    ("ccm ", set(COMMANDS)),  # whatever is registered
    ("ccm en", {"ensure"}),
    ("ccm ensure ", {"package", "service", "file", "exec", "archive", "scaffold", "api"}),
    ("ccm ensure exec /bin/true --re", {"--returns", "--refresh-only", "--require", "--read-env",
                                        "--registration"}),
    ("ccm ensure pkg zsh --no", {"--noop", "--no-read-env"}),  # the negation is in --help, so completed too
    ("ccm --log-level ", {"debug", "info", "warn", "error"}),
    ("ccm apply --color ", {"auto", "always", "never"}),
    ("ccm apply --publish-registrations ", {"nats", "jetstream"}),
    ("ccm apply --qu", {"--quiet"}),
    ("ccm status ", {"package", "service", "file", "exec", "archive", "scaffold", "apply"}),  # every type
    ("ccm hiera ", {"parse", "facts"}),
    ("ccm session ", {"new", "report"}),
    ("ccm ensure scaffold /tmp/x --engine ", {"go", "jet"}),
    ("ccm --quiet ensure ", {"package", "service", "file", "exec", "archive", "scaffold", "api"}),
]


def _bash_complete(script, line):
    words = line.split(" ")
    program = textwrap.dedent(f"""\
        source {script}
        COMP_WORDS=({" ".join(repr(w) for w in words)})
        COMP_CWORD={len(words) - 1}
        _ccm
        printf '%s\\n' "${{COMPREPLY[@]}}"
        """)
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                         cwd="/", timeout=30)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    return {w for w in res.stdout.splitlines() if w}


def _script(tmp_path_factory, shell):
    if shutil.which(shell) is None:
        pytest.fail(f"{shell} is needed (Debian package {shell}; make doc-tools installs it)")
    res = ccm(f"--completion-script-{shell}")
    assert res.returncode == 0 and res.stderr == ""
    path = tmp_path_factory.mktemp(shell) / "ccm"
    path.write_text(res.stdout)
    return path


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    return _script(tmp_path_factory, "bash")


@pytest.fixture(scope="module")
def zsh_script(tmp_path_factory):
    path = _script(tmp_path_factory, "zsh")
    assert path.read_text().startswith("#compdef ccm")
    return path


@pytest.mark.parametrize("line,expected", BASH_CASES)
def test_bash_completion(bash_script, line, expected):
    assert _bash_complete(bash_script, line) == expected


def test_bash_completion_of_file_values(bash_script, tmp_path):
    (tmp_path / "site.tgz").write_text("")
    got = _bash_complete(bash_script, f"ccm apply --last-run {tmp_path}/si")
    assert got == {f"{tmp_path}/site.tgz"}


def _zsh_complete(script, line):
    words = line.split(" ")
    program = textwrap.dedent(f"""\
        compadd() {{ [[ $1 == -- ]] && shift; print -rl -- "$@"; }}
        _files() {{ print -r -- FILES; }}
        compdef() {{ : }}
        source {script}
        words=({" ".join(repr(w) for w in words)})
        CURRENT={len(words)}
        _ccm
        """)
    res = subprocess.run(["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    got = {w for w in res.stdout.splitlines() if w}
    prefix = words[-1]
    return {w for w in got if w.startswith(prefix)} if prefix else got


@pytest.mark.parametrize("line,expected", BASH_CASES)
def test_zsh_completion(zsh_script, line, expected):
    assert _zsh_complete(zsh_script, line) == expected


def test_zsh_script_parses(zsh_script):
    res = subprocess.run(["zsh", "-n", "-f", str(zsh_script)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_a_new_command_appears_without_touching_the_generators(tmp_path, monkeypatch):
    """Register a command the way other work adds one (a module with parser()): it shows up
    in the man page and both completions, flags and help included."""
    (tmp_path / "ccm_extra_cmd.py").write_text(textwrap.dedent('''\
        from ccm.cli.common import ArgumentParser

        def parser():
            p = ArgumentParser(prog="ccm widget", description="Widgets")
            sub = p.add_subparsers(dest="action", metavar="<action>", parser_class=ArgumentParser)
            spin = sub.add_parser("spin", help="spin a widget")
            spin.add_argument("--speed", choices=("slow", "fast"), default="slow", help="how fast")
            return p
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    from ccm.cli import main

    monkeypatch.setitem(main.COMMANDS, "widget", ("ccm_extra_cmd", "Manage widgets"))
    man = docgen.render("man")
    assert "ccm widget spin" in man and "\\-\\-speed" in man and "how fast (default: slow)" in man
    script = tmp_path / "ccm.bash"
    script.write_text(docgen.render("bash"))
    assert _bash_complete(script, "ccm wid") == {"widget"}
    assert _bash_complete(script, "ccm widget spin --speed ") == {"slow", "fast"}
    assert "widget spin" in docgen.render("zsh")


@pytest.mark.parametrize("command", ["apply", "ensure"])
def test_help_examples_parse(command):
    """Each example line of the epilog is accepted by the command's parser (nothing runs)."""
    import importlib
    import shlex

    from ccm.cli.main import COMMANDS, split_globals

    module = importlib.import_module(COMMANDS[command][0])
    examples = [line.split("  ")[1] if line.startswith("  ") else "" for line in module.EXAMPLES.splitlines()]
    argvs = [shlex.split(e.split(";")[0]) for e in examples if e.startswith(f"ccm {command} ")]
    assert len(argvs) >= 4
    for argv in argvs:
        _flags, rest = split_globals(argv[2:])
        selected = rest[0] if command == "ensure" else None
        build = module.parser
        parser = build(selected) if selected else build()
        parser.parse_args([a.replace("...", "") if a.endswith("...") else a for a in rest])


def test_every_negation_is_in_help(tmp_path):
    """``--no-read-env``, ``--no-report`` ... are flags like any other: listed in --help (no
    default of their own stated: their positive flag states it)."""
    hidden = []
    for node in _nodes():
        text = node.parser.format_help()
        for action in node.parser._actions:
            for name in action.option_strings:
                if name.startswith("--no-") and (action.help is argparse.SUPPRESS or f"  {name} " not in text):
                    hidden.append(f"ccm {' '.join(node.path)} {name}")
    assert hidden == []
    out = ccm("apply", "--help", cwd=tmp_path).stdout
    assert "  --no-read-env         the opposite of --read-env\n" in out
    assert "  --no-report           the opposite of --report\n" in out
