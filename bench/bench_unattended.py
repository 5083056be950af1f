"""What the unattended-run features cost: ``ccm apply`` of a stable manifest plain, with
``--quiet``, with ``--last-run`` and ``--metrics-file``, with ``--syslog`` (to a local
datagram socket), and a local ``.tgz`` bundle with ``--checksum``; plus the hidden
documentation flags. Figures, not pass/fail.

Every figure is the minimum of N runs of ``python -m ccm`` from this tree (warm bytecode),
shown as a ratio to the plain apply measured in the same run; ``python -c pass`` is the
interpreter's floor.

Usage: .venv/bin/python bench/bench_unattended.py [--runs N]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parent.parent


def best(argv: List[str], env: Dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-unattended-"))
    site = work / "site"
    site.mkdir()
    (site / "manifest.yaml").write_text(
        f"ccm:\n  resources:\n    - file:\n        - {work}/motd:\n            ensure: present\n"
        f"            content: \"x\\n\"\n            owner: \"{os.getuid()}\"\n            group: \"{os.getgid()}\"\n"
        "            mode: \"0644\"\n")
    bundle = work / "site.tgz"
    with tarfile.open(bundle, "w:gz") as tf:
        tf.add(site, arcname="site")
    digest = "sha256:" + hashlib.sha256(bundle.read_bytes()).hexdigest()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(work / "log.sock"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(REPO), CCM_SYSLOG_SOCKET=str(work / "log.sock"), CCM_CACHE_DIR=str(work / "cache"))
    ccm = [sys.executable, "-m", "ccm"]
    manifest = str(site / "manifest.yaml")
    subprocess.run(ccm + ["apply", manifest], env=env, stdout=subprocess.DEVNULL, check=False)  # warm up
    cases = {
        "apply (baseline)": ccm + ["apply", manifest],
        "apply --quiet": ccm + ["apply", "--quiet", manifest],
        "apply --last-run --metrics-file": ccm + ["apply", "--last-run", str(work / "lr.json"),
                                                  "--metrics-file", str(work / "m.prom"), manifest],
        "apply --syslog": ccm + ["apply", "--syslog", manifest],
        "apply site.tgz --checksum": ccm + ["apply", "--checksum", digest, str(bundle)],
        "--version": ccm + ["--version"],
        "--help": ccm + ["--help"],
        "--help-man": ccm + ["--help-man"],
        "--completion-script-bash": ccm + ["--completion-script-bash"],
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
    }
    base = best(cases["apply (baseline)"], env, args.runs)
    print(f"{'case':<34}{'best ms':>10}{'x apply':>10}")
    for name, argv in cases.items():
        t = base if name == "apply (baseline)" else best(argv, env, args.runs)
        print(f"{name:<34}{t * 1000:>10.1f}{t / base:>10.2f}")
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
