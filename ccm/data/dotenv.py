"""The ``Environ`` map: process environment plus ``./.env`` (cli.md "`.env` and `.hiera`").

Product decision for ``.env`` lines: blank lines and ``#`` comments are skipped, a
leading ``export `` is dropped, the line is split at the first ``=``, one matching pair
of surrounding quotes is stripped, and empty values are ignored. Process variables are
taken verbatim (empty values skipped). ``.env`` wins. Not: shell expansion, multi-line
values or escapes.
"""
from __future__ import annotations

import os

from ccm.log import internal
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Dict, Mapping

log = internal("ccm.data.dotenv")


def parse_dotenv(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        if "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.strip()
        if not key:
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
            value = value[1:-1]
        if value == "":
            continue
        out[key] = value
    return out


def build_environ(process_env: Mapping[str, str], cwd: str, read_env: bool = True) -> Dict[str, str]:
    """Process environment (verbatim, empty values skipped), then ``<cwd>/.env`` on top."""
    env = {k: v for k, v in process_env.items() if v != ""}
    if not read_env:
        return env
    path = os.path.join(cwd, ".env")
    if not os.path.lexists(path):
        return env
    from ccm.readfile import read_text

    text = read_text(path, "environment file")
    env.update(parse_dotenv(text))
    return env
