"""The fleet page rendered by a real browser: headless Chromium (Debian's ``chromium``) and the
text browser w3m (``make test-report-html``, marker ``report_html``; the target installs both).

The page comes from ``ccm report fleet --html`` against a real nats-server holding reports
whose host names, labels and errors carry markup. Chromium's rendered DOM must show every
text as text (no element made of it, nothing loaded), the summary and the rows sorted by
outcome; its screenshot must be a real, non-blank picture of the page; w3m's dump must
read as a table.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest
from fleetreports import report
from natsfixture import run_js
from tests.kit import ROOT, ccm

pytestmark = [pytest.mark.report_html, pytest.mark.nats]

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)>'


def chromium(*args: str) -> "subprocess.CompletedProcess[str]":
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "chromium is not installed (make test-report-html installs Debian's package)"
    profile = tempfile.mkdtemp(prefix="ccm-chromium-")
    try:
        return subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def png_size(path: str) -> "tuple[int, int]":
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def png_colours(path: str) -> int:
    """How many distinct RGB(A) pixel values the (8-bit, non-interlaced) PNG holds."""
    data = open(path, "rb").read()
    pos, idat, width, colour = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, _h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = {2: 3, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    rows = [raw[i + 1:i + stride] for i in range(0, len(raw), stride)]   # filter bytes skipped: a lower bound
    return len({row[j:j + channels] for row in rows[::7] for j in range(0, len(row), channels * 5)})


@pytest.fixture
def page(tmp_path, env, nats_server):
    assert ccm("report", "init", env=env, cwd=ROOT).returncode == 0

    async def fn(nc):
        js = nc.jetstream()
        for subject, body in (report("web1.example.net", "failed", labels={"role": "web"}, error="disk full", age=60),
                              report("evil<b>.example.net", "failed", labels={"role": "<i>x</i>"}, error=HOSTILE,
                                     resource="/etc/<b>conf</b>", age=30),
                              report("db1.example.net", "changed", labels={"role": "db"}, age=20),
                              report("cache1.example.net", "ok", labels={"role": "cache"}, age=10),
                              report("old1.example.net", "ok", labels={"role": "db"}, age=3 * 3600)):
            await js.publish(subject, body)
    run_js(nats_server.url, fn)
    path = tmp_path / "fleet.html"
    r = ccm("report", "fleet", "--stale", "2h", "--html", str(path), env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return str(path)


def test_chromium_renders_every_text_as_text_and_loads_nothing(page, tmp_path):
    r = chromium("--dump-dom", f"file://{page}")
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "<h1>ccm fleet report</h1>" in dom
    # the hostile texts are text nodes, not elements: no script, no image, no bold
    assert "<script" not in dom and "<img" not in dom and "<b>" not in dom and "<i>" not in dom
    assert "&lt;script&gt;alert(\"owned\")&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in dom
    assert "evil&lt;b&gt;.example.net" in dom and "role=&lt;i&gt;x&lt;/i&gt;" in dom
    assert "file#/etc/&lt;b&gt;conf&lt;/b&gt;" in dom
    for text in ("hosts: 5", "failed: 2", "stale: 1", "changed: 1", "ok: 1", "disk full"):
        assert text in dom, text
    rows = [line for line in dom.splitlines() if line.startswith("<tr class=")]
    assert [row.split('"')[1] for row in rows] == ["failed", "failed", "stale", "changed", "ok"]
    for needle in ("<link", "<iframe", "<object", "http://", "https://", "src=\""):
        assert needle not in dom


def test_chromium_screenshot_is_a_real_picture_of_the_page(page, tmp_path):
    shot = str(tmp_path / "fleet.png")
    r = chromium("--window-size=1280,900", f"--screenshot={shot}", f"file://{page}")
    assert r.returncode == 0 and os.path.exists(shot), r.stderr[-2000:]
    assert png_size(shot) == (1280, 900)
    assert os.path.getsize(shot) > 15_000         # text, a table and coloured badges, not a blank page
    assert png_colours(shot) > 20


def test_a_text_browser_reads_the_page_as_a_table(page):
    w3m = shutil.which("w3m")
    assert w3m, "w3m is not installed (make test-report-html installs Debian's package)"
    r = subprocess.run([w3m, "-dump", "-cols", "200", "-T", "text/html", page], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    lines = [ln.split() for ln in r.stdout.splitlines() if ln.strip()]
    assert lines[0] == ["ccm", "fleet", "report"]
    header = next(i for i, ln in enumerate(lines) if ln[:2] == ["Host", "Outcome"])
    assert lines[header][-2:] == ["Failed", "resources"]
    body = lines[header + 1:]
    assert body[0][:2] == ["evil<b>.example.net", "failed"]   # failed first, newest first
    assert any(ln[:2] == ["web1.example.net", "failed"] and "disk" in ln for ln in body)
    assert any(ln[:2] == ["old1.example.net", "stale"] for ln in body)
    assert any("<script>alert(\"owned\")</script><img" in " ".join(ln) for ln in body)
