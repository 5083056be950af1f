"""Debian version comparison: a table, then hundreds of generated pairs against real dpkg."""
from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from ccm.resources.package import debversion

TABLE = [
    ("1.0", "1.0", 0),
    ("1.0", "1.1", -1),
    ("1.10", "1.9", 1),
    ("1.0~rc1", "1.0", -1),
    ("1.0~~", "1.0~", -1),
    ("1.0~", "1.0", -1),
    ("1.0", "1.0a", -1),
    ("1.0", "1.0+", -1),
    ("1.0a", "1.0+", -1),          # dpkg: letters before non-letters (upstream CCM says +1)
    ("1.0a", "1.0.", -1),
    ("1:1.0", "2.0", 1),
    ("0:1.0", "1.0", 0),
    ("1.0-1", "1.0-2", -1),
    ("1.0-0", "1.0", 0),
    ("1.00", "1.0", 0),
    ("5.9-8+b18", "5.9-8", 1),
    ("2:9.1.1230-2", "9.1.1230-2", 1),
    ("1.2-3-4", "1.2-3-5", -1),     # revision after the last '-'
    ("10.5.3.5-1", "10.5.3.5-1+deb12u1", -1),
    ("2.36-9+deb12u14", "2.36-9+deb12u9", 1),
]


@pytest.mark.parametrize("a,b,want", TABLE)
def test_table(a, b, want):
    assert debversion.compare(a, b) == want
    assert debversion.compare(b, a) == -want


def test_parse():
    assert debversion.parse("2:9.1.1230-2") == (2, "9.1.1230", "2")
    assert debversion.parse("1.2-3-4") == (0, "1.2-3", "4")
    assert debversion.parse("5.9") == (0, "5.9", "")
    assert str(debversion.parse("2:9.1-2")) == "2:9.1-2"


@pytest.mark.parametrize("bad,message", [
    ("", 'invalid version "": unable to parse empty string as a debian version identifier'),
    ("1.0 beta", 'invalid version "1.0 beta": unable to parse "1.0 beta" as a debian version identifier'),
    ("a:1.0", 'invalid version "a:1.0": unable to parse "a:1.0" as a debian version identifier'),
    ("1.0_1", 'invalid version "1.0_1": unable to parse "1.0_1" as a debian version identifier'),
])
def test_parse_errors(bad, message):
    with pytest.raises(ValueError) as err:
        debversion.compare(bad, "1.0")
    assert str(err.value) == message


# --- generated pairs against the real dpkg -------------------------------------------------

_UP_CHARS = "0123456789" * 3 + "abcxyzABZ" + "..++~~"
_REV_CHARS = "0123456789" * 2 + "abuXdeb" + ".+~"


def _part(rng, chars, n):
    return "".join(rng.choice(chars) for _ in range(n))


def _version(rng):
    epoch = "" if rng.random() < 0.6 else f"{rng.randint(0, 3)}:"
    upstream = str(rng.randint(0, 12)) + _part(rng, _UP_CHARS, rng.randint(0, 6))
    revision = ""
    if rng.random() < 0.6:
        if rng.random() < 0.2:
            upstream += "-" + _part(rng, "0123456789ab", rng.randint(1, 2))   # hyphen inside upstream
        revision = "-" + _part(rng, _REV_CHARS, rng.randint(1, 5))
    return epoch + upstream + revision


def _mutate(rng, v):
    choice = rng.randint(0, 5)
    if choice == 0:
        return v + "~" + _part(rng, "abc1", rng.randint(0, 2))
    if choice == 1:
        return v + rng.choice(["a", "+", ".", "0", "1", "~~"])
    if choice == 2 and ":" not in v:
        return f"{rng.randint(0, 2)}:{v}"
    if choice == 3:
        i = rng.randrange(len(v))
        c = v[i]
        if c.isdigit():
            return v[:i] + str((int(c) + rng.choice([1, 9])) % 10) + v[i + 1:]
    if choice == 4 and "-" in v:
        return v + rng.choice(["0", "+b1", "~1", "a"])
    return v.replace(".", ".0", 1) if "." in v else v + ".0"


def _pairs(n, seed=20261129):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        a = _version(rng)
        r = rng.random()
        if r < 0.4:
            b = _mutate(rng, a)
        elif r < 0.7:   # siblings: same base, different tails (letters vs punctuation vs tilde vs end)
            tails = ["", "a", "Z", "+", ".", "~", "~a", "0", "1", "+a", ".1", "a1"]
            base = a
            a, b = base + rng.choice(tails), base + rng.choice(tails)
        else:
            b = _version(rng)
        try:
            debversion.parse(a)
            debversion.parse(b)
        except ValueError:
            continue
        if b.split(":")[-1][:1].isdigit() and a.split(":")[-1][:1].isdigit():
            out.append((a, b))
    return out


N_PAIRS = 600


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="needs dpkg")
def test_generated_pairs_agree_with_dpkg():
    pairs = _pairs(N_PAIRS)
    script = ('while read a b; do if dpkg --compare-versions "$a" lt "$b" 2>/dev/null; then echo -1; '
              'elif dpkg --compare-versions "$a" eq "$b" 2>/dev/null; then echo 0; else echo 1; fi; done')
    res = subprocess.run(["sh", "-c", script], input="".join(f"{a} {b}\n" for a, b in pairs),
                         capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    got = [int(x) for x in res.stdout.split()]
    assert len(got) == len(pairs)
    mismatches = [(a, b, dpkg, debversion.compare(a, b)) for (a, b), dpkg in zip(pairs, got)
                  if debversion.compare(a, b) != dpkg]
    assert not mismatches, mismatches[:20]
    # the sample really exercises epochs, tildes, revisions and all three outcomes
    assert sum(1 for a, b in pairs if ":" in a or ":" in b) > 100
    assert sum(1 for a, b in pairs if "~" in a or "~" in b) > 100
    assert sum(1 for a, b in pairs if "-" in a and "-" in b) > 100
    assert {-1, 0, 1} <= set(got)
