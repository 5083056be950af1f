"""Publishing reports from ``ccm apply --publish-report`` into a real nats-server: delivery,
the queue, hostile input, secrets, the exit code, and the fast path against the reference."""
from __future__ import annotations

import json
import os
import socket
import sys
import time

import pytest
from natsfixture import Sniffer, free_port, run_js
from tests.kit import ROOT, ccm

from ccm.fleet import STREAM
from ccm.fleet.subjects import instance_token

pytestmark = pytest.mark.nats

HOST = os.uname().nodename
SUBJECTS = "choria.ccm.reports.>"


def manifest(tmp_path, *, fail=True, name="m.yaml", extra=""):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    text = (f"ccm:\n  resources:\n    - file:\n        - {out}/changed.txt:\n            ensure: present\n"
            f"            content: \"{time.time_ns()}\\n\"\n            owner: \"{os.getuid()}\"\n"
            f"            group: \"{os.getgid()}\"\n            mode: \"0644\"\n")
    if fail:
        text += (f"        - {out}/missing-dir/x/y.txt:\n            ensure: present\n            content: x\n"
                 f"            owner: \"{os.getuid()}\"\n            group: \"{os.getgid()}\"\n            mode: \"0644\"\n")
    path = tmp_path / name
    path.write_text(text + extra)
    return path


def apply(tmp_path, env, path, *extra, kind="jetstream", timeout=60.0):
    args = ["apply", "--no-report", str(path), "--publish-report", kind, *extra]
    started = time.monotonic()
    r = ccm(*args, env=env, cwd=tmp_path, timeout=timeout)
    r.elapsed = time.monotonic() - started   # type: ignore[attr-defined]
    return r


def stored(url):
    """Every message of CCM_REPORTS: (subject, document, headers), oldest first."""
    async def fn(nc):
        js = nc.jetstream()
        info = await js.stream_info(STREAM)
        out = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg(STREAM, seq)
            out.append((msg.subject, json.loads(msg.data), dict(msg.headers or {})))
        return out
    return run_js(url, fn)


def queued(state):
    d = os.path.join(state, "reports")
    return sorted(n for n in os.listdir(d) if n.endswith(".report")) if os.path.isdir(d) else []


def test_a_run_before_init_is_queued_and_delivered_first_once_the_stream_exists(tmp_path, env, nats_server,
                                                                                   state_dir):
    path = manifest(tmp_path)
    first = apply(tmp_path, env, path, "--last-run", str(tmp_path / "last.json"), "--fact", "role=web")
    assert first.returncode == 1, first.stderr   # the failing resource's exit code, reporting or not
    assert "report queued (1 waiting" in first.stderr and "ccm report init" in first.stderr
    assert json.loads((tmp_path / "last.json").read_text())["report_delivered"] is False
    assert len(queued(state_dir)) == 1
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    second = apply(tmp_path, env, path, "--last-run", str(tmp_path / "last.json"), "--fact", "role=web")
    assert second.returncode == 1 and "report" not in second.stderr, second.stderr
    assert json.loads((tmp_path / "last.json").read_text())["report_delivered"] is True
    assert queued(state_dir) == []
    msgs = stored(nats_server.url)
    assert len(msgs) == 2
    (s1, d1, h1), (s2, d2, h2) = msgs
    assert s1 == s2 and s1.startswith(f"choria.ccm.reports.{instance_token(HOST)}.")
    assert d1["start"] < d2["start"], "the queued (older) report is delivered before the current one"
    assert d1["hostname"] == HOST and d1["labels"] == {"role": "web"} and d1["exit_code"] == 1
    assert d1["manifest"]["source"] == str(path)
    import hashlib

    assert d2["manifest"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [r["outcome"] for r in d1["resources"]] == ["failed", "changed"]
    assert d2["resources"][0]["resource"] == f"file#{tmp_path}/out/missing-dir/x/y.txt"
    assert h1["Nats-Expected-Stream"] == STREAM and h1["Nats-Msg-Id"] != h2["Nats-Msg-Id"]


def test_the_nats_publisher_and_a_clean_run(tmp_path, env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    r = apply(tmp_path, env, manifest(tmp_path, fail=False), "--detailed-exit-codes", kind="nats")
    assert r.returncode == 2 and r.stderr == "", r.stderr
    (subject, doc, headers), = stored(nats_server.url)
    assert doc["exit_code"] == 2 and doc["summary"]["failed"] == 0 and "Nats-Expected-Stream" not in headers


def test_a_down_server_costs_the_run_little_and_the_report_is_queued(tmp_path, env, state_dir):
    path = manifest(tmp_path, fail=False)
    down = dict(env)
    cfg = tmp_path / "down"
    from natsfixture import write_context

    write_context(str(cfg), "CCM", {"url": f"nats://127.0.0.1:{free_port()}"})
    down["XDG_CONFIG_HOME"] = str(cfg)
    plain = ccm("apply", "--no-report", str(path), env=down, cwd=tmp_path)
    r = apply(tmp_path, down, path)
    assert plain.returncode == r.returncode == 0
    assert "report queued (1 waiting" in r.stderr and "could not connect to nats://127.0.0.1:" in r.stderr
    assert r.elapsed < 5, r.elapsed
    # a server that accepts connections and never speaks: the budget bounds the run
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(16)
        write_context(str(cfg), "CCM", {"url": f"nats://127.0.0.1:{mute.getsockname()[1]}"})
        r = apply(tmp_path, dict(down, CCM_REPORT_SECONDS="2"), path)
    assert r.returncode == 0 and "report queued (2 waiting" in r.stderr, r.stderr
    assert r.elapsed < 6, r.elapsed
    assert len(queued(state_dir)) == 2


def test_the_queue_is_bounded_oldest_dropped_first(tmp_path, env, nats_server, state_dir):
    path = manifest(tmp_path, fail=False)
    nats_server.stop()
    small = dict(env, CCM_REPORT_QUEUE_MAX="2")
    for _ in range(4):
        assert apply(tmp_path, small, path).returncode == 0
    r = apply(tmp_path, small, path)
    assert "report queue full: dropped the 1 oldest report(s) (3 dropped in all)" in r.stderr, r.stderr
    nats_server.start()
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    assert apply(tmp_path, small, path).stderr == ""
    msgs = stored(nats_server.url)
    assert len(msgs) == 3 and [d["start"] for _, d, _ in msgs] == sorted(d["start"] for _, d, _ in msgs)


@pytest.mark.parametrize("fact,named", [
    ("role=web.1", "label 'role': value holds '.'"), ("role=*", "label 'role': value holds '*'"),
    ("role=a>b", "label 'role': value holds '>'"), ("role=a b", "label 'role': value holds a space"),
    ("role=" + "x" * 10240, "label 'role': value is 10240 characters long"),
    ("ro.le=web", "label name 'ro.le' holds '.'"),
])
def test_hostile_labels_are_refused_nothing_is_published_and_the_exit_code_stands(tmp_path, env, nats_server,
                                                                                  state_dir, fact, named):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    with Sniffer(nats_server.url, SUBJECTS) as sniffer:
        r = apply(tmp_path, env, manifest(tmp_path), "--fact", fact)
    assert r.returncode == 1   # the failing resource's, as without reporting
    lines = [ln for ln in r.stderr.splitlines() if "report" in ln]
    assert len(lines) == 1 and named in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert len(lines[0]) < 300
    assert sniffer.messages == [] and queued(state_dir) == []


def test_sensitive_values_never_reach_the_report(tmp_path, env, nats_server):
    canary = "canary-Rq93kz"
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    path = tmp_path / "m.yaml"
    path.write_text(f"""
data:
  # @sensitive
  token: "{canary}"
ccm:
  resources:
    - exec:
        - "/bin/sh -c 'echo {{{{ Data.token }}}} >&2; exit 3'":
            cwd: /
    - file:
        - {tmp_path}/{{{{ Data.token }}}}/f.txt:
            ensure: present
            content: x
            owner: "{os.getuid()}"
            group: "{os.getgid()}"
            mode: "0644"
""")
    with Sniffer(nats_server.url) as sniffer:
        r = apply(tmp_path, env, path)
    assert r.returncode == 1, r.stderr
    (subject, doc, _), = stored(nats_server.url)
    assert [x["outcome"] for x in doc["resources"]] == ["failed", "failed"]
    assert canary not in json.dumps(doc) and canary not in sniffer.text() and canary not in r.stdout + r.stderr
    assert "REDACTED" in json.dumps(doc)


def test_nested_applies_fold_into_the_parents_report(tmp_path, env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    child = manifest(tmp_path, name="child.yaml")
    parent = tmp_path / "parent.yaml"
    parent.write_text(f"ccm:\n  resources:\n    - apply:\n        - {child}: {{}}\n")
    r = apply(tmp_path, env, parent)
    assert r.returncode == 1, r.stdout + r.stderr
    (subject, doc, _), = stored(nats_server.url)
    refs = [x["resource"] for x in doc["resources"]]
    assert f"file#{tmp_path}/out/changed.txt" in refs and f"file#{tmp_path}/out/missing-dir/x/y.txt" in refs
    assert doc["manifest"]["source"] == str(parent)


def test_a_steady_publish_imports_neither_nats_nor_asyncio(tmp_path, env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    path = manifest(tmp_path, fail=False)
    code = ("import sys; from ccm.cli.main import main; rc = main(['apply', '--no-report', %r, '--publish-report',"
            " 'jetstream']); print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('nats', 'asyncio')))"
            % str(path))
    import subprocess

    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=60)
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stdout + r.stderr
    assert len(stored(nats_server.url)) == 1


def test_the_fast_path_and_the_reference_publish_the_same_messages(tmp_path, env, nats_server, monkeypatch):
    """One differential test: the same report through ``ccm.fleet.wire`` and through nats-py."""
    from ccm.fleet.publish import NoStream, ReportPublisher, Unreachable
    from ccm.fleet.queue import ReportQueue
    from ccm.fleet.reference import ReferenceTransport
    from ccm.fleet.publish import WireTransport

    def publisher(client, kind="jetstream", **environ):
        monkeypatch.setenv("CCM_REPORT_CLIENT", client)
        p = ReportPublisher(kind, queue=ReportQueue(str(tmp_path / client)), environ=dict(os.environ, **environ))
        assert isinstance(p.transport(), WireTransport if client == "wire" else ReferenceTransport)
        return p

    body = json.dumps({"x": 1}).encode()
    subject = "choria.ccm.reports.0123456789abcdef.fedcba9876543210"
    outcomes = {}
    for client in ("wire", "nats-py"):
        p = publisher(client)
        with pytest.raises(NoStream):
            p.send(subject, f"id-{client}", body, time.monotonic() + 3)
        p.close()
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0
    for client in ("wire", "nats-py"):
        for kind in ("jetstream", "nats"):
            p = publisher(client, kind)
            p.send(subject, f"id-{client}-{kind}", body, time.monotonic() + 3)
            p.send(subject, f"id-{client}-{kind}", body, time.monotonic() + 3)   # re-sent: stored once
            p.close()
    msgs = stored(nats_server.url)
    assert [(s, d, h) for s, d, h in msgs] == [
        (subject, {"x": 1}, {"Nats-Msg-Id": f"id-{c}-{k}", **({"Nats-Expected-Stream": STREAM} if k == "jetstream"
                                                                else {})})
        for c in ("wire", "nats-py") for k in ("jetstream", "nats")]
    nats_server.stop()
    for client in ("wire", "nats-py"):
        p = publisher(client)
        with pytest.raises(Unreachable) as err:
            p.send(subject, "id", body, time.monotonic() + 3)
        outcomes[client] = str(err.value)
        p.close()
    assert all(f"could not connect to {nats_server.url}" in text and "context 'CCM'" in text
               for text in outcomes.values()), outcomes
