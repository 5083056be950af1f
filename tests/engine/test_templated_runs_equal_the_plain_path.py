"""Templated manifests fast (issue 27 item 8, ``ccm.tmplcache``): the plan of a templated
manifest and the probed ``Data``/``Facts`` values give what the plain path gives.

The plain twin is ``CCM_TEMPLATE_CACHE=0`` (a full load on every run, every expression run
against the full environment, facts gathered). Both run the same runs of the real CLI (the first batching its writes), in
scratch trees of the same shape: first, steady, a fact only a template reads changes (the
plan is kept and renders anew), a fact the Hiera data reads changes (other data: a full
load), and back. Every run's events (``--json``, ids and times out), the log of a steady
run and the files written must be equal. A manifest with ``# @sensitive`` data gives the
same too, and its plan is never stored: nothing in the cache holds the secret.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

from tests import twins

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MANIFEST = """\
data:
  by: ccm
  port: 8080
  empty: ~
hierarchy:
  order: ["site:{{ lookup('facts.site') }}"]
overrides:
  "site:b":
    by: other
ccm:
  resources:
    - file:
        - defaults: {owner: root, group: root, mode: "0644", ensure: present}
        - WORK/f1: {content: "# {{ Data.by }} on {{ Facts.host.info.hostname }} as {{ Facts.role }}\\n"}
        - WORK/f2: {content: "{{ upper(Data.by) }} ${ Data.port } {{ Facts.host.info.platformFamily }}\\n"}
        - WORK/f3: {content: "{{ Data.missing ?? 'none' }} {{ Facts.role }}\\n"}
        - WORK/f4: {content: "{{ Data.empty }}\\n"}
        - WORK/f5: {content: "{{ Data.nokey }}\\n"}
        - WORK/f6: {content: "{{ Facts.role }}"}
        - WORK/plain: {content: "no template\\n"}
        - WORK/f8: {content: "{{ readFile('WORK/plain') }}"}
"""

# a template rendered while loading (``mode``): no plan, a full load every run
PARSED = """\
ccm:
  resources:
    - file:
        - WORK/f7: {content: "mode from a fact\\n", mode: "{{ Facts.perm }}", owner: root, group: root, ensure: present}
"""

SECRET = "s3cr3t-t0ken-value"
SENSITIVE = f"""\
data:
  by: ccm
  # @sensitive
  token: {SECRET}
ccm:
  resources:
    - file:
        - WORK/s1:
            ensure: present
            owner: root
            group: root
            mode: "0600"
            content: "{{{{ Data.by }}}} {{{{ Data.token }}}}\\n"
"""


def _normal(root, text):
    text = twins.log_text(root, text)   # runtimes out, the scratch root as ROOT
    text = re.sub(r"\b(runtime|Run Time:) ?=?\S+", r"\1 T", text)
    text = re.sub(r"^time=\S+", "time=T", text, flags=re.M)   # internal log lines
    text = re.sub(r'"(event_id|timestamp|start_time|end_time|mtime)": "[^"]*"', r'"\1": "X"', text)
    return re.sub(r'"(duration|total_duration)": \d+', r'"\1": 0', text)


class Tree:
    """One twin's scratch tree: its manifests, files and ccm cache."""

    def __init__(self, root, switch):
        self.root, self.switch = root, switch
        self.work = root / "work"
        self.work.mkdir(parents=True)
        self.cache = root / "cache"
        for name, text in (("m.yaml", MANIFEST), ("p.yaml", PARSED), ("s.yaml", SENSITIVE)):
            (root / name).write_text(text.replace("WORK", str(self.work)))

    def apply(self, manifest, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCM_")}
        env.update(PYTHONPATH=ROOT, NO_COLOR="1", HOME=str(self.root), CCM_CACHE_DIR=str(self.cache),
                   CCM_LOCK_DIR=os.environ["CCM_LOCK_DIR"], CCM_TEMPLATE_CACHE=self.switch)
        r = subprocess.run([sys.executable, "-m", "ccm", "apply", "--no-report", *args, str(self.root / manifest)],
                           cwd=str(self.root), env=env, capture_output=True, text=True, timeout=120)
        return r.returncode, _normal(self.root, r.stdout), _normal(self.root, r.stderr)

    def files(self):
        return {p.name: (p.read_text(), oct(p.stat().st_mode & 0o7777)) for p in sorted(self.work.iterdir())}

    def plans(self):
        return sorted(p.name for p in self.cache.iterdir() if p.name.startswith("plan-")) if self.cache.is_dir() else []


def _steps(tree):
    """Every run of the sequence: (exit code, events or log, stderr, files after it)."""
    web_a = ("--fact", "role=web", "--fact", "site=a", "--fact", "perm=0644")
    db = ("--fact", "role=db", "--fact", "perm=0600")   # read by templates only (one while loading)
    out = []
    for args in (("--json", *web_a),                                     # first
                 ("--json", *web_a),                                     # steady
                 ("--json", *db, "--fact", "site=a"),                    # facts only templates read
                 ("--json", *db, "--fact", "site=b"),                    # a fact the data reads
                 ("--json", *web_a),                                     # back
                 web_a):                                                 # steady, the log
        out.append(tree.apply("m.yaml", *args) + tree.apply("p.yaml", *args) + (tree.files(),))
    return out


def test_the_template_cache_gives_what_the_plain_path_gives(tmp_path):
    fast, plain = Tree(tmp_path / "fast", "1"), Tree(tmp_path / "plain", "0")
    fast_steps, plain_steps = _steps(fast), _steps(plain)
    for i, (f, p) in enumerate(zip(fast_steps, plain_steps)):
        assert f == p, f"run {i}"
    files = {k: text for k, (text, _mode) in fast_steps[2][-1].items()}
    assert files["f1"] == f"# ccm on {os.uname().nodename} as db\n"
    assert files["f2"].startswith("CCM 8080 ")
    assert fast_steps[3][-1]["f1"][0].startswith("# other on ")   # the override of site b
    assert files["f4"] == "<nil>\n" and "f5" not in files
    assert (fast_steps[1][-1]["f7"][1], fast_steps[2][-1]["f7"][1]) == ("0o644", "0o600")
    assert "Data has no key 'nokey'" in fast_steps[0][1]
    events = json.loads(fast_steps[1][1])["events"]
    assert [e["changed"] for e in events] == [False] * 8
    assert fast_steps[0][-1]["f8"][0] == "no template\n"   # read after the batch renamed it
    # what the fast twin keeps: m.yaml's plan (p.yaml has none), the plain twin none
    assert len(fast.plans()) == 1 and not plain.plans()


def test_sensitive_data_is_rendered_alike_and_never_stored(tmp_path):
    fast, plain = Tree(tmp_path / "fast", "1"), Tree(tmp_path / "plain", "0")
    runs = {}
    for tree in (fast, plain):
        runs[tree.switch] = [tree.apply("s.yaml", "--json") + (tree.files(),) for _ in range(2)]
    assert runs["1"] == runs["0"]
    assert runs["1"][1][3]["s1"][0] == f"ccm {SECRET}\n"
    assert SECRET not in runs["1"][0][1] + runs["1"][1][1]   # the events show it redacted
    assert not fast.plans()
    for p in fast.cache.iterdir():
        assert SECRET.encode() not in p.read_bytes(), p.name


def test_a_facts_file_wins_over_the_hostname_probe(tmp_path):
    """The hostname fact probed (not gathered) still honours a file fact over it, as the
    gather's merge does."""
    fast, plain = Tree(tmp_path / "fast", "1"), Tree(tmp_path / "plain", "0")
    for tree in (fast, plain):
        facts = tree.root / ".config" / "choria" / "ccm"
        facts.mkdir(parents=True)
        (facts / "facts.json").write_text(json.dumps({"host": {"info": {"hostname": "from-a-file"}}}))
    web = ("--fact", "role=web", "--fact", "site=a", "--fact", "perm=0644")
    got = [tree.apply("m.yaml", *web) + (tree.files(),) for tree in (fast, plain)]
    assert got[0] == got[1]
    assert got[0][3]["f1"][0] == "# ccm on from-a-file as web\n"


def test_the_fast_path_is_off_when_switched_off():
    """The seam's switch, as the plain twin above uses it."""
    code = textwrap.dedent("""\
        from ccm.tmplcache import enabled
        print(enabled())
        """)
    for value, want in (("0", "False"), ("1", "True"), ("", "True")):
        env = dict(os.environ, PYTHONPATH=ROOT, CCM_TEMPLATE_CACHE=value)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert r.stdout.strip() == want
