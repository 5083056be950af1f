"""The streaming composer (``yamlio.StreamLoader``) gives exactly what composing PyYAML's
whole node graph first gives: the same values, the same positions, and an error wherever
the whole-graph load has one. It builds each item early and keeps no node graph."""
from __future__ import annotations

import random
import tracemalloc
from typing import Any, List, Optional, Tuple

import pytest
import yaml

from ccm import yamlio


def whole_graph_load(text: str, positions: Optional[yamlio.Positions] = None) -> Any:
    """The reference: libyaml composes the whole document, then our constructor builds it."""
    loader = yamlio.Loader(text)
    loader.source = "m.yaml"
    loader.positions = positions
    try:
        node = loader.get_single_node()
        if node is not None and "*" in text:
            yamlio._check_aliases(node, "m.yaml")   # as load does (a recursive one fails here)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def outcome(load: Any, text: str) -> Tuple[Any, ...]:
    positions: yamlio.Positions = {}
    try:
        value = load(text, positions=positions)
    except (yaml.YAMLError, KeyError, ValueError, TypeError, RecursionError):
        return ("error",)
    lines: List[Any] = []
    seen = set()

    def walk(item: Any) -> None:
        if isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            lines.append(positions.get(id(item)))
            for child in item.values() if isinstance(item, dict) else item:
                walk(child)

    walk(value)
    return ("ok", repr(value), lines)


ATOMS = ["a", "1", "0644", "yes", "&x a", "*x", "{}", "[]", "!!str 1", "<<", "~", "'q'", "&y [1]", "*y",
         "!!set {a}", "{<<: *y}", "[*x]", "!!binary aGk=", "!!omap [{a: 1}]", "2001-12-14", ".inf"]


def _random_node(rnd: random.Random, depth: int = 0) -> str:
    roll = rnd.random()
    if depth > 3 or roll < 0.3:
        return rnd.choice(ATOMS)
    if roll < 0.65:
        return "[" + ", ".join(_random_node(rnd, depth + 1) for _ in range(rnd.randint(0, 3))) + "]"
    keys = ["a", "b", "c", "<<", "[1]"]
    return "{" + ", ".join(f"{rnd.choice(keys)}: {_random_node(rnd, depth + 1)}"
                           for _ in range(rnd.randint(0, 3))) + "}"


CASES = [
    "- &a {k: 1}\n- *a\n- {<<: *a, j: 2}\n",
    "x: !!omap [{a: 1}, {b: 2}]\ny: !!pairs [{a: 1}, {a: 2}]\nz: !!set {a, b}\n",
    "- {<<: [{a: 1}, {b: 2}], c: 3}\n- {<<: {a: 1}, a: 2}\n",
    "- [1, [2, [3, {x: 0644, y: 0x1f, z: 1_000, t: 2001-12-14, b: yes}]]]\n",
    "- !!binary aGVsbG8=\n- {? [1, 2] : 3}\n- !!str [a]\n- !!map [1]\n",
    "- &r [*r]\n", "a: &r {b: *r}\n", "", "# only a comment\n", "- {}\n- []\n- - - - x\n",
    "- {<<: 1}\n- {b: a}\n",   # a merge error inside an item built early is still an error
    "ccm:\n  resources:\n    - file:\n        - defaults: {owner: root}\n        - /a: {content: x}\n",
]


@pytest.mark.parametrize("text", CASES)
def test_examples_match_the_whole_graph_load(text):
    assert outcome(yamlio.load, text) == outcome(whole_graph_load, text)


def test_random_documents_match_the_whole_graph_load():
    rnd = random.Random(16)
    for _ in range(3000):
        for text in ("- " + _random_node(rnd) + "\n- " + _random_node(rnd) + "\n", _random_node(rnd)):
            assert outcome(yamlio.load, text) == outcome(whole_graph_load, text), text


@pytest.mark.parametrize("text, expected", [
    ("a: &x 1\nb: &x 2\n", "m.yaml:2:4: second occurrence (found duplicate anchor; first occurrence)"),
    ("a: *y\n", "m.yaml:1:4: found undefined alias"),
    ("--- a\n--- b\n", "m.yaml:2:1: but found another document (expected a single document in the stream)"),
    ("- {a: 1, a: 2}\n- *undefined\n", "m.yaml:2:3: found undefined alias"),   # composing comes first
])
def test_composer_errors_keep_libyaml_wording(text, expected):
    with pytest.raises(yamlio.YAMLLoadError) as err:
        yamlio.load(text, source="m.yaml")
    assert str(err.value) == expected


def _manifest(n: int) -> str:
    lines = ["ccm:", "  resources:", "    - file:", "        - defaults:", "            ensure: present"]
    for i in range(n):
        lines += [f"        - /srv/f{i:05d}.conf:", f"            content: \"setting_{i} = {i}\\n\"",
                  "            mode: \"0644\""]
    return "\n".join(lines) + "\n"


def test_a_large_manifest_never_holds_the_node_graph():
    text = _manifest(5000)
    tracemalloc.start()
    try:
        value = yamlio.load(text)
        kept, streamed_peak = tracemalloc.get_traced_memory()
        del value
        tracemalloc.stop()
        tracemalloc.start()
        reference = whole_graph_load(text)
        _kept, graph_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(reference["ccm"]["resources"][0]["file"]) == 5001
    # the values themselves are most of the streaming peak; the graph costs several times that
    assert streamed_peak < 1.6 * kept
    assert graph_peak > 2 * streamed_peak
