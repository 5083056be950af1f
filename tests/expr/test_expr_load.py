"""Manifests that use expr-lang's newer builtins and statements load and run (issue 26:
they were refused at load as unknown functions), and a did-you-mean for an unknown
function never offers a validator-only name."""
from __future__ import annotations

import re

import pytest

from ccm.expr.validators import VALIDATORS
from ccm.model.errors import ValidationError
from tests import kit
from tests.kit import run


def _file(path: str, content: str, **extra: object) -> dict:
    raw = {"name": path, "ensure": "present", "content": content, "owner": "root", "group": "root",
           "mode": "0644"}
    raw.update(extra)
    return raw


@pytest.mark.parametrize("content,want", [
    ('{{ string(duration("1h30m")) }}', "1h30m0s"),
    ("{{ let x = 2; x * 3 }}", "6"),
    ('{{ date("2023-08-14").Year() }} {{ timezone("UTC") }}', "2023 UTC"),
    ("{{ median([1, 5, 3]) }} {{ take([1, 2, 3], 2) }} {{ get(Data.m, 'k') }}", "3 [1 2] v"),
    ("{{ toPairs(Data.m) }} {{ fromPairs([['a', 1]]) }}", "[[k v]] map[a:1]"),
    ('{{ toBase64("hi") }} {{ fromBase64("aGk=") }} {{ splitAfter("a,b", ",") }}', "aGk= hi [a, b]"),
    ("{{ bitand(6, 3) }} {{ bitor(4, 1) }} {{ bitxor(3, 1) }} {{ bitnand(7, 2) }} {{ bitnot(0) }} "
     "{{ bitshl(1, 4) }} {{ bitshr(16, 2) }} {{ bitushr(-1, 60) }}", "2 5 2 5 -1 16 4 15"),
    ("{{ 1 /* comment */ + 1 }}", "2"),
])
def test_manifest_with_new_builtins_loads_and_renders(tmp_path, content: str, want: str) -> None:
    target = tmp_path / "out.txt"
    m = kit.manager(data={"m": {"k": "v"}})
    ev = run(m, "file", _file(str(target), content))
    assert not ev.failed, ev.errors
    assert target.read_text() == want


def test_control_may_use_let_and_dates(tmp_path) -> None:
    target = tmp_path / "out.txt"
    m = kit.manager()
    control = {"if": 'let age = now() - date("2000-01-01"); age > duration("24h")'}
    ev = run(m, "file", _file(str(target), "x", control=control))
    assert not ev.failed, ev.errors
    assert target.read_text() == "x"


@pytest.mark.parametrize("source,hint", [
    ('{{ durations("1h") }}', "(did you mean `duration`?)"),
    ("{{ medain([1]) }}", "(did you mean `median`?)"),
])
def test_did_you_mean_offers_the_builtin(tmp_path, source: str, hint: str) -> None:
    with pytest.raises(ValidationError) as info:
        kit.manager().prepare("file", _file(str(tmp_path / "x"), source))
    assert hint in str(info.value)


@pytest.mark.parametrize("source", ['{{ isDurationn("1h") }}', "{{ is_ipv5(Data.x) }}", "{{ isFQDNs(Data.x) }}"])
def test_did_you_mean_never_offers_a_validator(tmp_path, source: str) -> None:
    """Validators (isDuration, is_ipv4 ...) exist upstream only inside @validate annotations."""
    with pytest.raises(ValidationError) as info:
        kit.manager().prepare("file", _file(str(tmp_path / "x"), source))
    message = str(info.value)
    assert "unknown function" in message
    hint = re.search(r"did you mean `(\w+)`", message)
    assert hint is None or hint.group(1) not in VALIDATORS, message
