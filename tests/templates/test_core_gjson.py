"""GJSON paths used by lookup() (spec §3.3)."""
from __future__ import annotations

import json

import pytest

from ccm.templates.gjson import get

DOC = {
    "data": {
        "users": [{"name": "alice", "uid": 1}, {"name": "bob", "uid": 2}, {"nick": "c", "uid": 3}],
        "packages": ["ca-certificates", "nginx"],
        "pkg": "zsh",
        "a.b": "dotted",
        "port": 8080,
        "ratio": 0.5,
        "flags": {"on": True, "off": False, "none": None},
        "empty": [],
        "nested": {"list": [[1, 2], [3]]},
    },
    "facts": {"network": {"interfaces": [{"name": "lo"}, {"name": "eth0"}]},
              "host": {"info": {"platformFamily": "debian"}}},
}


@pytest.mark.parametrize("path, expected", [
    ("data.pkg", "zsh"),
    ("data.port", 8080),
    ("data.ratio", 0.5),
    ("facts.network.interfaces.0.name", "lo"),
    ("facts.network.interfaces.1.name", "eth0"),
    ("facts.host.info.platformFamily", "debian"),
    ("data.packages.#", 2),
    ("data.empty.#", 0),
    ("data.a\\.b", "dotted"),
    ("data.pk*", "zsh"),
    ("data.p?g", "zsh"),
    ("data.users.#.name", ["alice", "bob"]),
    ("data.users.#.missing", []),
    ('data.users.#(name=="bob").uid', 2),
    ('data.users.#(name=="bob")', {"name": "bob", "uid": 2}),
    ("data.users.#(uid>0)#.name", ["alice", "bob"]),
    ("data.users.#(uid>5)#.name", []),
    ("data.users.#(uid>5)#", []),
    ("data.users.#(uid>=2)#.uid", [2, 3]),
    ("data.users.#(uid<2)#.uid", [1]),
    ("data.users.#(uid<=2)#.uid", [1, 2]),
    ("data.users.#(uid!=2)#.uid", [1, 3]),
    ('data.users.#(name!="bob")#.uid', [1]),  # a missing field never matches
    ('data.users.#(uid!="2")#.uid', []),  # nor does a value of another kind
    ('data.users.#(name%"al*").uid', 1),
    ('data.users.#(name%"b?b").uid', 2),
    ('data.users.#(name!%"al*")#.uid', [2]),
    ("data.users.#(nick)#.uid", [3]),
    ("data.packages.1", "nginx"),
    ("data.flags.on", True),
    ("data.flags.off", False),
    ("data.flags.none", None),
    ("data.nested.list.#.#", [2, 1]),
    ("data.users.#.uid", [1, 2, 3]),
])
def test_found(path, expected):
    found, value = get(DOC, path)
    assert found is True
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("path", [
    "data.nokey",
    "data.pkg.deeper",
    "data.packages.5",
    "data.packages.x",
    'data.users.#(name=="carol").uid',
    "data.users.#(uid>5).name",
    "data.pkg.#",
    "data.a.b",
    "data.x*",
    "",
    "data.",
    "nope",
])
def test_missing(path):
    assert get(DOC, path) == (False, None)


def test_accepts_json_text():
    assert get(json.dumps(DOC), "data.users.1.name") == (True, "bob")
    assert get("{bad json", "a") == (False, None)
