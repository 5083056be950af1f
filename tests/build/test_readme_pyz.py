"""With a built ccm.pyz: the README's air-gapped example run as written, the extraction
directory and size the README states, and --version's build id."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.build.conftest import REPO, Pyz, base_python, clean_env, run

README = (REPO / "README.md").read_text(encoding="utf-8")


def readme_block(heading: str, lang: str) -> str:
    section = README[README.index(heading):]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def _python3_on_path(bindir: Path) -> str:
    bindir.mkdir()
    wrapper = bindir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec {base_python()} "$@"\n')
    wrapper.chmod(0o755)
    return f"{bindir}:/usr/bin:/bin"


def test_readme_air_gapped_install(pyz: Pyz, tmp_path: Path) -> None:
    block = readme_block("### Air-gapped installs", "sh")
    assert "--checksum" in block
    work = tmp_path / "work"
    (work / "site").mkdir(parents=True)
    shutil.copy(pyz.path, work / "ccm.pyz")
    target = tmp_path / "motd"
    (work / "site" / "manifest.yaml").write_text(
        f"ccm:\n  resources:\n    - file:\n        - {target}:\n            ensure: present\n"
        f"            content: \"air-gapped\\n\"\n            owner: \"{os.getuid()}\"\n"
        f"            group: \"{os.getgid()}\"\n            mode: \"0644\"\n")
    env = clean_env(PATH=_python3_on_path(tmp_path / "bin"), SHIV_ROOT=str(tmp_path / "shiv"))
    res = subprocess.run(["bash", "-e", "-c", block], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert target.read_text() == "air-gapped\n"
    assert "ccm.pyz: OK" in res.stdout and "site.tgz: OK" in res.stdout
    # a bundle altered on the way is refused before extraction, with the same command line
    (work / "site.tgz").write_bytes((work / "site.tgz").read_bytes() + b"\0")
    apply_line = block.strip().splitlines()[-1]
    res = subprocess.run(["bash", "-c", apply_line], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 1 and "checksum mismatch for site.tgz" in res.stderr


def test_readme_extraction_directory_and_size(pyz: Pyz, tmp_path: Path) -> None:
    section = README[README.index("### Environment variables and directories"):]
    stated = int(re.search(r"about\s+(\d+)\s+MB", section).group(1))
    block = readme_block("### Environment variables and directories", "sh")
    root = tmp_path / "var-cache-ccm-pyz"
    moved = block.replace("/var/cache/ccm/pyz", str(root))
    (tmp_path / "ccm.pyz").write_bytes(pyz.path.read_bytes())
    env = clean_env(PATH=_python3_on_path(tmp_path / "bin"))
    res = subprocess.run(["sh", "-e", "-c", moved], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    [extraction] = [p for p in root.iterdir() if p.is_dir()]  # beside it: lock files
    assert extraction.name == f"ccm_{pyz.build_id}"
    size_mb = sum(f.stat().st_size for f in extraction.rglob("*") if f.is_file()) / 1e6
    assert stated * 0.6 <= size_mb <= stated * 1.5, f"README says about {stated} MB, measured {size_mb:.1f} MB"
    assert res.stdout.split()[0] == pyz.version


def test_version_in_a_pyz_names_build_python_and_machine(pyz: Pyz, tmp_path: Path) -> None:
    import platform

    res = run([base_python(), str(pyz.path), "--version"], clean_env(SHIV_ROOT=str(tmp_path)))
    assert res.returncode == 0 and res.stderr == ""
    line = res.stdout.strip()
    assert line.split()[0] == pyz.version
    assert f"build {pyz.build_id[:12]}" in line
    assert f"CPython {platform.python_version()}" in line and os.uname().machine in line


def test_pyz_hidden_doc_flags(pyz: Pyz, tmp_path: Path) -> None:
    env = clean_env(SHIV_ROOT=str(tmp_path))
    man = run([base_python(), str(pyz.path), "--help-man"], env)
    assert man.returncode == 0 and man.stdout.startswith(".TH CCM 1") and "ccm ensure exec" in man.stdout
    bash = run([base_python(), str(pyz.path), "--completion-script-bash"], env)
    assert bash.returncode == 0 and "complete -o default -F _ccm ccm ccm.pyz" in bash.stdout
