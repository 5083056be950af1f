from __future__ import annotations

from ccm.data.dotenv import build_environ, parse_dotenv


def test_parse_dotenv_product_rules():
    text = "\n".join([
        "# a comment",
        "   # indented comment",
        "",
        "A=1",
        "export B=two",
        'C="quoted value"',
        "D='single'",
        "E=",
        "F=a=b",
        'G="unbalanced',
        "H='x\"",
        "I=\"\"",
        "no separator",
        "A=override",
    ])
    assert parse_dotenv(text) == {
        "A": "override",
        "B": "two",
        "C": "quoted value",
        "D": "single",
        "F": "a=b",
        "G": '"unbalanced',
        "H": "'x\"",
    }


def test_build_environ_dotenv_wins_and_empty_process_values_skipped(tmp_path):
    (tmp_path / ".env").write_text("PATH=/from/dotenv\nNEW=1\n")
    env = build_environ({"PATH": "/usr/bin", "EMPTY": "", "KEEP": '"raw"'}, str(tmp_path))
    assert env == {"PATH": "/from/dotenv", "NEW": "1", "KEEP": '"raw"'}


def test_build_environ_without_read_env_or_file(tmp_path):
    (tmp_path / ".env").write_text("PATH=/from/dotenv\n")
    assert build_environ({"PATH": "/usr/bin"}, str(tmp_path), read_env=False) == {"PATH": "/usr/bin"}
    assert build_environ({"X": "1"}, str(tmp_path / "nowhere")) == {"X": "1"}
