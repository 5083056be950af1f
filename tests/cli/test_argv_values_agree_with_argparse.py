"""The argparse-free parse of plain command lines gives exactly argparse's namespace."""
from __future__ import annotations

import argparse
import random

import pytest

from ccm.cli import apply_cmd, fastargs
from ccm.model.errors import UsageError

# Tokens a command line is made of: flags (exact, abbreviated, with =), values, odd ones.
TOKENS = [
    "m.yaml", "site/", "", "x=y", "--noop", "--json", "--render", "--report", "--no-report", "--diff",
    "--no-diff", "--monitor-only", "--detailed-exit-codes", "--read-env", "--no-read-env", "--fact", "a=b",
    "--fact=c=d", "--facts", "f.json", "--hiera", "--hiera=h.yaml", "--checksum", "sha256:00", "--context",
    "CTX", "-R", "STREAM", "--registration=S2", "--metrics-file", "/tmp/m.prom", "--last-run", "lr.json",
    "--publish-registrations", "nats", "jetstream", "bogus", "--publish-registrations=nats",
    "--wait-lock", "30s", "--wait-lock=5m", "--no-rep", "--noop=1", "-", "--", "-h", "--help", "-1",
    "--unknown", "-Rx", "-R=S3",
]


def argparse_namespace(parser, argv):
    try:
        return vars(parser.parse_args(argv))
    except (UsageError, SystemExit):
        return "error"


def check(argv, parser=None):
    fast = fastargs.parse(apply_cmd.options(), argv)
    slow = argparse_namespace(parser or apply_cmd.parser(), argv)
    if fast is not None:
        assert slow != "error", argv
        assert vars(fast) == slow, argv
    return fast


@pytest.mark.parametrize("argv", [
    ["m.yaml"],
    ["--no-report", "m.yaml"],
    ["m.yaml", "--noop", "--json"],
    ["--fact", "a=b", "--fact=c=d", "m.yaml", "--hiera", "h.yaml"],
    ["-R", "S", "--registration=T", "--context", "C", "m.yaml"],
    ["--diff", "--no-diff", "--noop", "m.yaml"],
    ["--wait-lock", "30s", "--detailed-exit-codes", "--last-run", "lr.json", "--metrics-file", "p", "m"],
    ["--publish-registrations", "jetstream", "--no-read-env", "--read-env", "m"],
    [""],
])
def test_plain_command_lines_take_the_fast_path(argv):
    assert check(argv) is not None


@pytest.mark.parametrize("argv", [
    [], ["a", "b"], ["--help"], ["-h", "m"], ["--no-rep", "m"], ["--noop=1", "m"], ["--", "m"], ["-"],
    ["--fact"], ["--fact", "--noop", "m"], ["--publish-registrations", "bogus", "m"], ["-Rx", "m"],
    ["--unknown", "m"], ["--hiera", "-1", "m"],
])
def test_anything_else_goes_to_argparse(argv):
    assert fastargs.parse(apply_cmd.options(), argv) is None
    check(argv)


def test_random_command_lines_agree_with_argparse():
    rng = random.Random(16)
    parser = apply_cmd.parser()  # argparse keeps no state between parses
    taken = 0
    for _ in range(3000):
        argv = [rng.choice(TOKENS) for _ in range(rng.randint(0, 7))]
        taken += check(argv, parser) is not None
    assert taken > 100  # the comparison covered both paths


def test_defaults_follow_the_environment(monkeypatch):
    monkeypatch.setenv("CCM_HIERA_DATA", "env.yaml")
    monkeypatch.setenv("NATS_CONTEXT", "OTHER")
    fast = check(["m.yaml"])
    assert fast is not None and fast.hiera == "env.yaml" and fast.context == "OTHER"


def test_append_default_is_not_shared():
    options = apply_cmd.options()
    first = fastargs.parse(options, ["--fact", "a=b", "m"])
    second = fastargs.parse(options, ["m"])
    assert first is not None and second is not None
    assert first.fact == ["a=b"] and second.fact == []


def test_suppress_is_argparse_suppress_and_unsupported_keywords_are_refused():
    assert fastargs.SUPPRESS == argparse.SUPPRESS
    with pytest.raises(ValueError):
        fastargs.option("--n", type=int)
    with pytest.raises(ValueError):
        fastargs.option("--n", action="count")
