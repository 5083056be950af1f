"""The bad-input catalogue: every hostile or broken input fails cleanly and changes nothing.

Each case runs ccm as a subprocess in a sandbox directory and checks: the exit code, one
clear line naming the problem (``expect`` is a fragment of it), no traceback, a bounded
time and address space (``RLIMIT_AS``), and not one byte changed in the sandbox (a hash of
every path, mode and content before and after). ``make test-reliability`` runs it all;
the marker keeps it out of the default suite.
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import stat
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import pytest

from tests.kit import ccm
from tests.reliability.cli import cli_env
from tests.reliability.test_yaml_bounds import _bomb as bomb

pytestmark = pytest.mark.reliability

MEMORY_LIMIT = 2 << 30
TIME_LIMIT = 20.0
FILE_RES = """  - file:
      - {name}:
          ensure: {ensure}
          content: {content}
          owner: {owner}
          group: root
          mode: "{mode}"
"""


@dataclass
class Case:
    id: str
    args: List[str]
    expect: str
    files: Dict[str, object] = field(default_factory=dict)   # name -> str | bytes | "FIFO"
    env: Dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    code: int = 1
    json_error: bool = False     # pipe API: exit 0 with {"error": ...}
    runtime: bool = False        # the resource fails while running: one ERROR line on stdout
    setup: Optional[Callable[[str], None]] = None


def manifest(resources: str = "", data: str = "", top: str = "") -> str:
    out = top
    if data:
        out += "data:\n" + data
    out += "ccm:\n  resources:\n" + (resources or FILE_RES.format(
        name="/tmp/ccm-catalogue-never", ensure="present", content="x", owner="root", mode="0644"))
    return out


def file_res(**kw) -> str:
    vals = dict(name="/tmp/ccm-catalogue-never", ensure="present", content="x", owner="root", mode="0644")
    vals.update(kw)
    return FILE_RES.format(**vals)


YAML_SYNTAX = {
    "unclosed-flow": ("ccm: [unclosed\n", ":2:1: did not find expected ',' or ']'"),
    "bad-indent": ("ccm:\n  resources:\n - x\n", "did not find expected key"),
    "tab-indent": ("ccm:\n\tresources: []\n", "found character that cannot start any token"),
    "nul-byte": ("ccm: {}\nx: \x00\n", "unacceptable character #x00"),
    "undefined-alias": ("ccm: *nope\n", "found undefined alias"),
    "unclosed-quote": ('data:\n  a: "open\n', "found unexpected end of stream"),
    "mapping-in-scalar": ("data: a: b\n", ":1:8: mapping values are not allowed in this context"),
    "over-indented-key": ("data:\n  a: 1\n   b: 2\n", ":3:5: mapping values are not allowed in this context"),
    "stray-flow-close": ("data: ]\n", "did not find expected node content"),
    "bad-directive": ("%FOO bar\n---\nccm: {}\n", ""),
}
DUPLICATES = {
    "dup-top": ("ccm: {}\ndata: {}\nccm: {}\n", 'duplicate key "ccm" (first defined on line 1)'),
    "dup-ensure": ("ccm:\n  resources:\n    - file:\n        - /tmp/x:\n            ensure: present\n"
                   "            ensure: absent\n", 'duplicate key "ensure" (first defined on line 5)'),
    "dup-data": ("data:\n  a: 1\n  a: 2\n", 'duplicate key "a" (first defined on line 2)'),
    "dup-nested": ("data:\n  a:\n    b: 1\n    c: 2\n    b: 3\n", 'duplicate key "b"'),
    "dup-flow": ("data: {a: 1, a: 2}\n", 'duplicate key "a"'),
}
BOUNDS = {
    "deep-flow": ("data:\n  a: " + "[" * 200 + "]" * 200 + "\n", "nesting deeper than 100 levels"),
    "deep-block": ("data:\n  a:\n    " + "- " * 150 + "x\n", "nesting deeper than 100 levels"),
    "very-deep": ("[" * 60000 + "]" * 60000, "nesting deeper than 100 levels"),
    "alias-bomb": (bomb(), "aliases expand to"),
}


def _yaml_cases() -> List[Case]:
    cases = []
    for group in (YAML_SYNTAX, DUPLICATES, BOUNDS):
        for key, (text, expect) in group.items():
            cases.append(Case(f"manifest-{key}", ["apply", "m.yaml"], expect, {"m.yaml": text}))
            cases.append(Case(f"hiera-{key}", ["hiera", "parse", "h.yaml"], expect, {"h.yaml": text}))
            cases.append(Case(f"facts-{key}", ["hiera", "parse", "h.yaml", "--facts", "f.yaml"], expect,
                              {"h.yaml": "data: {a: 1}\n", "f.yaml": text}))
    return cases


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def _fifo(name: str) -> Dict[str, object]:
    return {name: "FIFO"}


NON_REGULAR = [
    Case("manifest-dev-zero", ["apply", "/dev/zero"], "manifest /dev/zero is not a regular file"),
    Case("manifest-fifo", ["apply", "m.yaml"], "is not a regular file", _fifo("m.yaml")),
    Case("manifest-directory", ["apply", "sub"], "manifest.yaml not found in directory sub", {"sub/x": "y"}),
    Case("facts-dev-zero", ["apply", "m.yaml", "--facts", "/dev/zero"], "facts file /dev/zero is not a regular file",
         {"m.yaml": manifest()}),
    Case("facts-fifo", ["hiera", "parse", "h.yaml", "--facts", "f.yaml"], "is not a regular file",
         {"h.yaml": "data: {}\n", **_fifo("f.yaml")}),
    Case("hiera-dev-zero", ["hiera", "parse", "/dev/zero"], "hiera data /dev/zero is not a regular file"),
    Case("hiera-fifo", ["hiera", "parse", "h.yaml"], "is not a regular file", _fifo("h.yaml")),
    Case("apply-hiera-fifo", ["apply", "m.yaml", "--hiera", "h.yaml"], "is not a regular file",
         {"m.yaml": manifest(), **_fifo("h.yaml")}),
    Case("jet-file-dev-zero", ["apply", "m.yaml"], "resources_jet_file /dev/zero is not a regular file",
         {"m.yaml": "ccm:\n  resources_jet_file: /dev/zero\n"}),
    Case("jet-file-fifo", ["apply", "m.yaml"], "is not a regular file",
         {"m.yaml": "ccm:\n  resources_jet_file: r.jet\n", **_fifo("r.jet")}),
    Case("readfile-dev-zero", ["apply", "m.yaml"], "readFile /dev/zero is not a regular file",
         {"m.yaml": manifest(resources=file_res(content='"{{ readFile(\'/dev/zero\') }}"'))}, runtime=True),
    Case("source-dev-zero", ["apply", "m.yaml"], "source /dev/zero is not a regular file",
         {"m.yaml": manifest(resources="  - file:\n      - /tmp/ccm-catalogue-never:\n          ensure: present\n"
                                       "          source: /dev/zero\n          owner: root\n          group: root\n"
                                       "          mode: '0644'\n")}, runtime=True),
    Case("env-fifo", ["apply", "m.yaml", "--read-env"], "environment file", {"m.yaml": manifest(), **_fifo(".env")}),
    Case("content-file-dev-zero", ["ensure", "file", "/tmp/ccm-catalogue-never", "--content-file", "/dev/zero"],
         "not a regular file"),
]
ENCODING = [
    Case("manifest-latin1", ["apply", "m.yaml"], "manifest", {"m.yaml": b"data:\n  a: caf\xe9\nccm: {}\n"}),
    Case("manifest-not-utf8-offset", ["apply", "m.yaml"], "byte offset 11", {"m.yaml": b"data:\n  a: \xff\xfe\n"}),
    Case("env-latin1", ["apply", "m.yaml", "--read-env"], ".env is not valid UTF-8 (byte offset 3)",
         {"m.yaml": manifest(), ".env": b"A=b\xe9\n"}),
    Case("facts-latin1", ["hiera", "parse", "h.yaml", "--facts", "f.yaml"], "not valid UTF-8",
         {"h.yaml": "data: {}\n", "f.yaml": b"a: \xe9\n"}),
    Case("hiera-latin1", ["hiera", "parse", "h.yaml"], "not valid UTF-8", {"h.yaml": b"data:\n  a: \xe9\n"}),
    Case("big-json-integer", ["hiera", "parse", "h.json"], "5000 digits",
         {"h.json": '{"data": {"a": ' + "9" * 5000 + "}}"}),
    Case("too-large-manifest", ["apply", "m.yaml"], "larger than the limit of 64 bytes",
         {"m.yaml": manifest()}, env={"CCM_MAX_DOCUMENT_BYTES": "64"}),
    Case("too-large-hiera", ["hiera", "parse", "h.yaml"], "larger than the limit of 16 bytes",
         {"h.yaml": "data:\n  a: 1\n  b: 2\n"}, env={"CCM_MAX_DOCUMENT_BYTES": "16"}),
    Case("too-large-facts", ["hiera", "parse", "h.yaml", "--facts", "f.yaml"], "larger than the limit",
         {"h.yaml": "data: {}\n", "f.yaml": "a: " + "x" * 100 + "\n"}, env={"CCM_MAX_DOCUMENT_BYTES": "50"}),
]
VALIDATION = [
    Case("nul-in-name", ["apply", "m.yaml"], "must not contain NUL bytes",
         {"m.yaml": manifest(resources=file_res(name='"/tmp/a\\0b"'))}),
    Case("nul-in-owner", ["apply", "m.yaml"], "owner: must not contain NUL bytes",
         {"m.yaml": manifest(resources=file_res(owner='"ro\\0ot"'))}),
    Case("nul-in-content", ["apply", "m.yaml"], "content: must not contain NUL bytes",
         {"m.yaml": manifest(resources=file_res(content='"a\\0b"'))}),
    Case("relative-path", ["apply", "m.yaml"], "file path must be absolute",
         {"m.yaml": manifest(resources=file_res(name="relative/x"))}),
    Case("non-canonical-path", ["apply", "m.yaml"], "file path must be canonical",
         {"m.yaml": manifest(resources=file_res(name="/tmp/../tmp/x"))}),
    Case("bad-mode", ["apply", "m.yaml"], 'mode "999" is not a valid octal number',
         {"m.yaml": manifest(resources=file_res(mode="999"))}),
    Case("mode-too-big", ["apply", "m.yaml"], "exceeds maximum value 0777",
         {"m.yaml": manifest(resources=file_res(mode="7777"))}),
    Case("bad-ensure", ["apply", "m.yaml"], "invalid ensure value",
         {"m.yaml": manifest(resources=file_res(ensure="sideways"))}),
    Case("empty-owner", ["apply", "m.yaml"], "owner cannot be empty",
         {"m.yaml": manifest(resources=file_res(owner='""'))}),
    Case("ref-two-hashes", ["apply", "m.yaml"], "invalid subscribe format file#a#b: expected type#name (exactly one '#')",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          subscribe: ['file#a#b']\n")}),
    Case("ref-no-hash", ["apply", "m.yaml"], "invalid require properties: 'nohash' is not type#name",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          require: ['nohash']\n")}),
    Case("ref-empty-name", ["apply", "m.yaml"], "invalid require properties: 'file#' is not type#name",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          require: ['file#']\n")}),
    Case("unknown-type", ["apply", "m.yaml"], "unknown resource type",
         {"m.yaml": manifest(resources="  - frobnicate:\n      - x: {}\n")}),
    Case("unknown-top-key", ["apply", "m.yaml"], "unknown top-level key 'extra'",
         {"m.yaml": "extra: 1\nccm: {}\n"}),
    Case("not-a-map", ["apply", "m.yaml"], "a manifest must be a map", {"m.yaml": "- a\n- b\n"}),
    Case("ccm-not-a-map", ["apply", "m.yaml"], "ccm must be a map", {"m.yaml": "ccm: [1]\n"}),
    Case("fail-on-error-type", ["apply", "m.yaml"], "ccm.fail_on_error must be a boolean",
         {"m.yaml": "ccm:\n  fail_on_error: maybe\n"}),
    Case("archive-bad-url", ["apply", "m.yaml"], "url must be absolute",
         {"m.yaml": manifest(resources="  - archive:\n      - /tmp/a.tar.gz:\n          ensure: present\n          url: nowhere.tar.gz\n"
                                       "          owner: root\n          group: root\n")}),
    Case("archive-bad-limit", ["apply", "m.yaml"], "max_extract_bytes",
         {"m.yaml": manifest(resources="  - archive:\n      - /tmp/a.tar.gz:\n          ensure: present\n          url: http://h/a.tar.gz\n"
                                       "          owner: root\n          group: root\n          max_extract_bytes: -1\n")}),
    Case("archive-password-with-hash", ["apply", "m.yaml"], "archive",
         {"m.yaml": manifest(resources="  - archive:\n      - /tmp/a.tar.gz:\n          ensure: present\n"
                                       "          url: 'http://u:pa#ss:x@h:bad/a.tar.gz'\n"
                                       "          owner: root\n          group: root\n")}),
    Case("exec-bad-timeout", ["apply", "m.yaml"], "timeout",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          timeout: soon\n")}),
    # issue 24: a 5,000-digit exit code ended with Python's "ValueError: Exceeds the limit (4300 digits)"
    Case("returns-huge-integer", ["apply", "m.yaml"],
         "(exec#/bin/true): returns: expected a list of integers, found a number of 5000 digits",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          returns: [" + "9" * 5000 + "]\n")}),
    Case("returns-huge-string", ["apply", "m.yaml"], "returns: expected a list of integers, found a number of 5000",
         {"m.yaml": manifest(resources="  - exec:\n      - /bin/true:\n          returns: ['" + "9" * 5000 + "']\n")}),
    # issue 24: a managed file whose path is a FIFO was replaced by a regular file
    Case("file-over-fifo", ["apply", "m.yaml"], "pipe exists and is not a regular file (a FIFO, socket or device)",
         setup=lambda d: (os.mkfifo(os.path.join(d, "pipe")),
                          _write(os.path.join(d, "m.yaml"), manifest(resources=file_res(name=os.path.join(d, "pipe"))))),
         runtime=True),
    Case("unknown-function", ["apply", "m.yaml"], "unknown function nope",
         {"m.yaml": manifest(resources=file_res(content='"{{ nope() }}"'))}),
    Case("nested-regex", ["apply", "m.yaml"], "nests a quantifier",
         {"m.yaml": manifest(resources=file_res(content="\"{{ 'aaa' matches '^(a+)+$' }}\""))}),
]
CLI = [
    Case("apply-empty-source", ["apply", ""], "source is required"),
    Case("hiera-empty-source", ["hiera", "parse", ""], "source is required"),
    Case("apply-missing-manifest", ["apply", "missing.yaml"], "missing.yaml"),
    Case("metrics-file-missing-dir", ["apply", "m.yaml", "--metrics-file", "/nonexistent/dir/m.prom"],
         "directory /nonexistent/dir does not exist", {"m.yaml": manifest()}),
    Case("session-report-missing", ["session", "report", "--session", "nope"], "does not exist"),
    Case("session-report-file", ["session", "report", "--session", "f"], "is not a directory", {"f": "x"}),
    Case("session-report-symlink", ["session", "report", "--session", "link", "--remove"], "is a symlink",
         {"target/keep": "x"}, setup=lambda d: os.symlink(os.path.join(d, "target"), os.path.join(d, "link"))),
    Case("malformed-header", ["ensure", "archive", "/tmp/ccm-catalogue.tar.gz", "http://127.0.0.1:1/a.tar.gz",
                              "-H", "Authorization Bearer Canary-Token"], "value not shown"),
    Case("unknown-command", ["frobnicate"], 'expected command but got "frobnicate"'),
    Case("hiera-bad-scheme", ["hiera", "parse", "gopher://u:Canary@h/x"], "unsupported hiera data source"),
    Case("hiera-http-refused", ["hiera", "parse", "http://u:Canary#x@127.0.0.1:1/h.yaml"],
         "failed to fetch hiera data from http://REDACTED@127.0.0.1:1/h.yaml: connection refused"),
    Case("bundle-refused", ["apply", "http://u:Canary/x@127.0.0.1:1/b.tar.gz"], "REDACTED"),
]
PIPE = [
    Case("pipe-type-list", ["ensure", "api", "pipe"], "type must be a string, got list",
         stdin=json.dumps({"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": ["file"],
                           "properties": {"name": "/tmp/x"}}), code=0, json_error=True),
    Case("pipe-type-map", ["ensure", "api", "pipe"], "type must be a string, got dict",
         stdin=json.dumps({"protocol": "io.choria.ccm.v1.resource.ensure.request", "type": {"a": 1},
                           "properties": {"name": "/tmp/x"}}), code=0, json_error=True),
    Case("pipe-malformed-json", ["ensure", "api", "pipe"], "invalid request", stdin='{"protocol": ', code=0,
         json_error=True),
    # issue 24: invalid JSON was answered in the YAML parser's words ("did not find expected node content")
    Case("pipe-invalid-json", ["ensure", "api", "pipe"],
         "invalid request: not valid JSON or YAML: Expecting value at line 1 column 27",
         stdin='{"protocol": "x", "type": ', code=0, json_error=True),
    Case("pipe-invalid-json-lines", ["ensure", "api", "pipe"], "not valid JSON or YAML: Expecting ',' delimiter at line 4 column 3",
         stdin='{\n  "protocol": "x",\n  "type": "file"\n  "properties": {}\n}', code=0, json_error=True),
    # issue 25: empty stdin was answered 'invalid protocol ""'
    Case("pipe-empty", ["ensure", "api", "pipe"], "invalid request: the request is empty", stdin="", code=0,
         json_error=True),
    Case("pipe-blank", ["ensure", "api", "pipe"], "the request is empty", stdin=" \n\t\n", code=0, json_error=True),
    Case("pipe-duplicate-keys", ["ensure", "api", "pipe"], 'duplicate key "type"',
         stdin='{"type": "file", "type": "exec"}', code=0, json_error=True),
    Case("pipe-deep", ["ensure", "api", "pipe"], "nesting deeper", stdin="[" * 5000 + "]" * 5000, code=0,
         json_error=True),
    Case("pipe-bomb", ["ensure", "api", "pipe"], "aliases expand", stdin=bomb(), code=0, json_error=True),
    Case("pipe-not-a-map", ["ensure", "api", "pipe"], "invalid protocol", stdin="[1, 2]", code=0, json_error=True),
    Case("pipe-too-large", ["ensure", "api", "pipe"], "larger than the limit of 10 bytes", stdin="x" * 100,
         env={"CCM_MAX_DOCUMENT_BYTES": "10"}, code=0, json_error=True),
]

CASES = _yaml_cases() + NON_REGULAR + ENCODING + VALIDATION + CLI + PIPE


def test_catalogue_size():
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)


def _digest(root: str) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(f"{os.path.relpath(p, root)}|{stat.S_IFMT(st.st_mode)}|{st.st_mode:o}|{st.st_size}".encode())
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    h.update(fh.read())
            elif stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
    return h.hexdigest()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, monkeypatch):
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    for name, content in case.files.items():
        path = sandbox / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == "FIFO":
            os.mkfifo(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(str(content))
    if case.setup:
        case.setup(str(sandbox))
    before = _digest(str(sandbox))
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CCM_CACHE_DIR": str(tmp_path / "cache"),
           "TMPDIR": str(tmp_path), **case.env}
    start = time.monotonic()
    res = ccm(*case.args, cwd=str(sandbox), env=cli_env(str(sandbox), env), stdin=case.stdin, timeout=TIME_LIMIT + 10,
              preexec_fn=_limit_memory)
    elapsed = time.monotonic() - start
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f}s"
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout
    assert "MemoryError" not in res.stderr and "RecursionError" not in res.stderr
    assert res.returncode == case.code, (res.returncode, res.stdout, res.stderr)
    if case.json_error:
        answer = json.loads(res.stdout)
        assert "state" not in answer and case.expect in answer["error"], answer
    elif case.runtime:
        problem = [ln for ln in res.stdout.splitlines() if " ERROR " in ln]
        assert len(problem) == 1 and case.expect in problem[0], res.stdout
    else:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip() and "level=" not in ln]
        assert lines, res.stdout
        # indented lines are usage/help text (flag descriptions may say "error")
        problem = [ln for ln in lines if "error" in ln.lower() and not ln.startswith((" ", "\t"))]
        assert len(problem) == 1, lines
        assert case.expect in problem[0], problem
        assert "Canary" not in res.stderr + res.stdout
    assert _digest(str(sandbox)) == before, "the sandbox changed"
