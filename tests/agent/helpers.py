"""Real things for the agent tests: manifests on disk, tarball bundles, a conditional
HTTP server on 127.0.0.1 (ETag / Last-Modified / 304), git repositories, and a real
``ccm agent`` subprocess."""
from __future__ import annotations

import getpass
import grp
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
USER = getpass.getuser()
GROUP = grp.getgrgid(os.getgid()).gr_name
FAST = {"CCM_AGENT_TEST_TIMESCALE": "0.01"}


def file_manifest(out_dir: str, count: int = 1, content: str = "hello", prefix: str = "f",
                  extra: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    resources: List[Dict[str, Any]] = [{"file": {"name": os.path.join(out_dir, f"{prefix}{i}.txt"), "ensure": "present",
                                                 "content": content, "owner": USER, "group": GROUP, "mode": "0644"}}
                                       for i in range(count)]
    return {"ccm": {"resources": resources + list(extra or [])}}


def write_yaml(path: str, doc: Any) -> str:
    """Publish atomically (temp + rename), as the README tells writers to."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        yaml.safe_dump(doc, fh)
    os.replace(tmp, path)
    return path


def bundle(files: Dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class CondServer:
    """Serves ``bodies[path]``; ETag and/or Last-Modified per ``validators``; answers
    conditional requests with 304. Records (method, path, status, bytes sent)."""

    def __init__(self, validators: str = "etag") -> None:
        self.bodies: Dict[str, bytes] = {}
        self.validators = validators
        self.log: List[Dict[str, Any]] = []
        self.mtime: Dict[str, float] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                body = outer.bodies.get(path)
                entry = {"path": path, "headers": {k.lower(): v for k, v in self.headers.items()}, "bytes": 0}
                outer.log.append(entry)
                if body is None:
                    entry["status"] = 404
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                lm = formatdate(outer.mtime.get(path, 1700000000), usegmt=True)
                inm = self.headers.get("If-None-Match")
                ims = self.headers.get("If-Modified-Since")
                fresh = False
                if "etag" in outer.validators and inm is not None:
                    fresh = inm == etag
                elif "lm" in outer.validators and ims is not None:
                    fresh = ims == lm
                if fresh:
                    entry["status"] = 304
                    self.send_response(304)
                    self.end_headers()
                    return
                entry["status"] = 200
                entry["bytes"] = len(body)
                self.send_response(200)
                if "etag" in outer.validators:
                    self.send_header("ETag", etag)
                if "lm" in outer.validators:
                    self.send_header("Last-Modified", lm)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def set(self, path: str, body: bytes, mtime: Optional[float] = None) -> None:
        self.bodies[path] = body
        if mtime is not None:
            self.mtime[path] = mtime

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def git(cwd: str, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME=cwd)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def git_repo(path: str) -> str:
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    return path


def commit(repo: str, files: Dict[str, str], message: str = "c") -> str:
    for name, text in files.items():
        full = os.path.join(repo, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(pred: Callable[[], Any], timeout: float = 10.0, step: float = 0.05, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


class AgentProcess:
    """``python -m ccm agent --config CFG`` with the test time scale."""

    def __init__(self, cfg: str, workdir: str, port: Optional[int] = None, env: Optional[Dict[str, str]] = None,
                 preexec_fn: Optional[Callable[[], None]] = None, wrap: Optional[List[str]] = None):
        self.port = port
        self.out = open(os.path.join(workdir, "agent.out"), "w+")
        full_env = {**os.environ, **FAST, "PYTHONPATH": ROOT, **(env or {})}
        argv = [sys.executable, "-m", "ccm", "agent", "--config", cfg]
        self.proc = subprocess.Popen(list(wrap or []) + argv, cwd=workdir,
                                     stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT, env=full_env,
                                     preexec_fn=preexec_fn)

    def output(self) -> str:
        if not self.out.closed:
            self.out.flush()
        with open(self.out.name) as fh:
            return fh.read()

    def wait_log(self, text: str, timeout: float = 15.0, count: int = 1) -> str:
        return wait_for(lambda: self.output() if self.output().count(text) >= count else None, timeout,
                        what=f"{text!r} x{count} in agent output:\n{self.output()}")

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
            return resp.read().decode()

    def status(self) -> Dict[str, Any]:
        return json.loads(self.get("/status"))

    def wait_status(self, pred: Callable[[Dict[str, Any]], Any], timeout: float = 15.0) -> Dict[str, Any]:
        def probe() -> Any:
            try:
                st = self.status()
            except OSError:
                return None
            return st if pred(st) else None
        return wait_for(probe, timeout, what=f"status condition; output:\n{self.output()}")

    def stop(self, sig: int = 15, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.out.close()
