"""The README's cron, systemd timer and cloud-init examples, run as written with their
absolute paths moved under a scratch directory (ccm itself runs from this source tree).
The air-gapped example and the extraction size are checked with a built pyz in
tests/build/test_readme_pyz.py."""
from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kit import clean_env
from tests.unattended.helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MOVED = re.compile(r"(?<![\w./-])/(etc|var/lib|usr/local)/")


def readme_block(heading: str, lang: str) -> str:
    section = README[README.index(heading):]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


class Host:
    """A scratch "/" for the examples' /etc, /var/lib and /usr/local, with python3 on PATH
    running ccm from this tree as /usr/local/bin/ccm.pyz would."""

    def __init__(self, base: Path) -> None:
        self.root = base / "root"
        self.bin = base / "bin"
        self.bin.mkdir()
        python3 = self.bin / "python3"  # a wrapper, not a symlink: the venv must stay the venv
        python3.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        python3.chmod(0o755)
        pyz = self.path("/usr/local/bin/ccm.pyz")
        pyz.parent.mkdir(parents=True)
        pyz.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom ccm.__main__ import main\nmain()\n")

    def path(self, p: str) -> Path:
        return Path(self.move(p))

    def move(self, text: str) -> str:
        return MOVED.sub(lambda m: f"{self.root}/{m.group(1)}/", text)

    def env(self, path: str = "/usr/bin:/bin") -> dict:
        return clean_env(PATH=f"{self.bin}:{path}", HOME=str(self.root), LANG="C.UTF-8")

    def sh(self, command: str, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", "-c", self.move(command)], env=self.env(path), cwd="/",
                              capture_output=True, text=True, timeout=120)


@pytest.fixture
def host(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the README examples manage root-owned files (CI runs as root)")
    return Host(tmp_path)


def site_bundle(host: Host) -> Path:
    """/etc/ccm/site.tgz: a bundle writing /etc/motd (moved)."""
    site = host.root / "src" / "site"
    site.mkdir(parents=True)
    (site / "manifest.yaml").write_text(host.move(
        "ccm:\n  resources:\n    - file:\n        - /etc/motd:\n            ensure: present\n"
        "            content: \"from the site bundle\\n\"\n            owner: root\n            group: root\n"
        "            mode: \"0644\"\n"))
    target = host.path("/etc/ccm/site.tgz")
    target.parent.mkdir(parents=True)
    subprocess.run(["tar", "-czf", str(target), "-C", str(site.parent), "site"], check=True)
    return target


def cron_lines(text: str):
    env, jobs = {}, []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^([A-Z_]+)=(.*)$", line)
        if m:
            env[m.group(1)] = m.group(2)
            continue
        fields = line.split(None, 6)
        assert len(fields) == 7, f"not a /etc/cron.d line (5 time fields, user, command): {line}"
        for f in fields[:5]:
            assert re.fullmatch(r"[\d*/,-]+", f), line
        jobs.append((fields[5], fields[6]))
    return env, jobs


def test_readme_cron(host):
    env, jobs = cron_lines(readme_block("### Cron", "cron"))
    assert env["SHELL"] == "/bin/sh" and [user for user, _ in jobs] == ["root"]
    [(_, command)] = jobs
    assert "--quiet" in command and "--detailed-exit-codes" in command and "--last-run" in command
    site_bundle(host)
    first = host.sh(command, env["PATH"])
    assert first.returncode == 2, first.stderr          # changed
    assert " WARN  file#" in first.stdout and "changed" in first.stdout and first.stderr == ""
    assert host.path("/etc/motd").read_text() == "from the site bundle\n"
    second = host.sh(command, env["PATH"])
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")  # cron mails nothing
    import json

    record = json.loads(host.path("/var/lib/ccm/last_run.json").read_text())
    assert record["exit_code"] == 0 and record["resources"]["stable"] == 1


def _unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # keys are case-sensitive in systemd
    parser.read(path)
    return parser


def test_readme_systemd_timer(host):
    block = readme_block("### systemd timer", "sh")
    install = [line for line in block.splitlines() if line.startswith("install ")]
    assert install, block
    files = [ROOT / p for p in shlex.split(install[0])[3:-1]]
    assert [f.name for f in files] == ["ccm-apply.service", "ccm-apply.timer"] and all(f.is_file() for f in files)
    analyze = shutil.which("systemd-analyze")
    if analyze:  # real checks of both units (syntax, directives, ExecStart binary, timer/service pairing)
        res = subprocess.run([analyze, "verify", "--man=no", *map(str, files)], capture_output=True, text=True)
        assert res.returncode == 0 and res.stderr == "", res.stderr
    service, timer = _unit(files[0]), _unit(files[1])
    assert service["Service"]["Type"] == "oneshot"
    assert timer["Timer"]["OnCalendar"] and timer["Install"]["WantedBy"] == "timers.target"
    assert "enable --now ccm-apply.timer" in block
    # run the unit's command as systemd would: StateDirectory created first, then ExecStart
    host.path(f"/var/lib/{service['Service']['StateDirectory']}").mkdir(parents=True)
    argv = shlex.split(host.move(service["Service"]["ExecStart"]))
    assert argv[0] == "/usr/bin/python3"
    argv[0] = sys.executable
    site_bundle(host)
    ok = {0} | {int(c) for c in service["Service"]["SuccessExitStatus"].split()}
    for expected in (2, 0):
        res = subprocess.run(argv, env=host.env(), capture_output=True, text=True, timeout=120)
        assert res.returncode == expected and res.returncode in ok, res.stderr
    metrics = host.path("/var/lib/ccm/ccm.prom").read_text()
    assert "choria_ccm_last_run_exit_code 0\n" in metrics
    # next to a manual run holding the run lock, the unit's run is skipped, and that is no failure
    from ccm.locks import GlobalLock

    locks = host.path("/run/ccm-locks")
    held = GlobalLock("run", directory=str(locks))
    with held.hold("a manual run"):
        res = subprocess.run(argv, env={**host.env(), "CCM_LOCK_DIR": str(locks)}, capture_output=True, text=True,
                             timeout=120)
    assert "holds the run lock" in res.stderr and res.returncode in ok and res.returncode != 0, res.stderr


def test_readme_cloud_init(host):
    text = readme_block("### cloud-init", "yaml")
    assert text.startswith("#cloud-config\n")
    doc = yaml.safe_load(text)
    for entry in doc["write_files"]:
        path = host.path(entry["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(host.move(entry["content"]))
        path.chmod(int(entry["permissions"], 8))
    for command in doc["runcmd"]:
        if isinstance(command, list):
            argv = [host.move(str(a)) for a in command]
            argv[0] = shutil.which(argv[0], path=str(host.bin)) or argv[0]
            res = subprocess.run(argv, env=host.env(), cwd="/", capture_output=True, text=True, timeout=120)
        else:
            res = host.sh(command)
        assert res.returncode == 0, res.stderr
        assert res.stderr == ""
    assert host.path("/etc/motd").read_text() == "managed by ccm\n"
    # the cron job it installed runs too, and has nothing to say the second time
    _env, [(user, cron_command)] = cron_lines(host.path("/etc/cron.d/ccm").read_text())
    res = host.sh(cron_command)
    assert (user, res.returncode, res.stdout) == ("root", 0, "")


def _code_variables():
    """Every "CCM_..." string literal in the code (environment names, read directly or
    through a constant), minus Python identifiers named in ``__all__`` (``CCM_FUNCTIONS``)."""
    literals, identifiers = set(), set()
    for path in (ROOT / "ccm").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        literals.update(re.findall(r"""["'](CCM_[A-Z_]+)["']""", text))
        identifiers.update(re.findall(r"^(CCM_[A-Z_]+)\s*=", text, re.M))
    return literals - identifiers


def test_readme_environment_table_matches_the_code():
    section = README[README.index("### Environment variables and directories"):]
    table = set(re.findall(r"^\| `(CCM_[A-Z_]+)`", section, re.M))
    code = _code_variables()
    assert code, "no CCM_ variable found in the code: the scan is broken"
    assert table == code
    from ccm.cli.docgen import ENVIRONMENT

    assert {name for name, _ in ENVIRONMENT if name.startswith("CCM_")} == code  # the man page's list too
