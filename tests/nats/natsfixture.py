"""Real nats-server processes for tests: one server, or a 3-node JetStream cluster.

Each server gets free loopback ports (``-p -1 --ports_file_dir``; cluster ports are
picked by binding port 0), its own store directory, and is stopped by PID.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(os.path.dirname(sys.executable), "nats-server")
if not os.path.exists(BIN):
    BIN = os.path.join(ROOT, ".venv", "bin", "nats-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, workdir: str, name: str = "n1", *, cluster_port: Optional[int] = None,
                 routes: Optional[List[int]] = None, port: Optional[int] = None, config: str = "",
                 http_port: Optional[int] = None):
        self.workdir = workdir
        self.name = name
        self.store = os.path.join(workdir, f"store-{name}")
        self.portsdir = os.path.join(workdir, f"ports-{name}")
        self.cluster_port = cluster_port
        self.routes = routes or []
        self.fixed_port = port
        self.config = config
        self.http_port = http_port       # the monitoring endpoint (/jsz), when given
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> "Server":
        os.makedirs(self.store, exist_ok=True)
        os.makedirs(self.portsdir, exist_ok=True)
        for f in os.listdir(self.portsdir):
            os.unlink(os.path.join(self.portsdir, f))
        args = [BIN, "-js", "-a", "127.0.0.1", "-sd", self.store, "-n", self.name,
                "-p", str(self.fixed_port or -1), "--ports_file_dir", self.portsdir]
        if self.http_port:
            args += ["-m", str(self.http_port)]
        if self.cluster_port:
            args += ["--cluster_name", "ccmtest", "--cluster", f"nats://127.0.0.1:{self.cluster_port}",
                     "--routes", ",".join(f"nats://127.0.0.1:{p}" for p in self.routes)]
        if self.config:
            conf = os.path.join(self.workdir, f"{self.name}.conf")
            with open(conf, "w") as fh:
                fh.write(self.config)
            args += ["-c", conf]
        log = open(os.path.join(self.workdir, f"{self.name}.log"), "ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            files = [f for f in os.listdir(self.portsdir) if f.endswith(".ports")]
            if files:
                with open(os.path.join(self.portsdir, files[0])) as fh:
                    try:
                        info = json.load(fh)
                    except ValueError:
                        info = {}
                if info.get("nats"):
                    self.port = int(info["nats"][0].rsplit(":", 1)[1])
                    self.fixed_port = self.port      # a restart keeps the URL clients know
                    return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server {self.name} exited: {self.proc.returncode}")
            time.sleep(0.01)
        raise RuntimeError(f"nats-server {self.name} did not start")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)


    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def jsz(self, query: str = "") -> Dict[str, Any]:
        """The server's monitoring ``/jsz`` document (needs ``http_port``)."""
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/jsz{query}", timeout=2) as resp:
            doc: Dict[str, Any] = json.loads(resp.read())
            return doc


class Cluster:
    def __init__(self, workdir: str, size: int = 3):
        cports = [free_port() for _ in range(size)]
        self.servers = [Server(workdir, f"n{i + 1}", cluster_port=cports[i], http_port=free_port(),
                               routes=[p for j, p in enumerate(cports) if j != i]) for i in range(size)]

    def start(self) -> "Cluster":
        for s in self.servers:
            s.start()
        self.wait_meta_leader()
        return self

    @property
    def urls(self) -> str:
        return ",".join(s.url for s in self.servers)

    def wait_meta_leader(self, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        live = [s for s in self.servers if s.proc is not None and s.proc.poll() is None]
        while time.monotonic() < deadline:
            try:
                info = run_js(",".join(s.url for s in live), lambda nc: nc.request("$JS.API.INFO", b"", timeout=1))
                doc = json.loads(info.data)
                if "error" not in doc:
                    return str(doc.get("meta_leader", "") or "ok")
            except Exception:
                pass
            time.sleep(0.2)
        raise RuntimeError("no JetStream meta leader")

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def live_urls(self) -> str:
        return ",".join(s.url for s in self.servers if s.alive)

    def meta_leader(self, timeout: float = 30.0) -> "Server":
        """The server leading the JetStream meta group (``/jsz`` ``meta_cluster.leader``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for s in [s for s in self.servers if s.alive]:
                try:
                    name = (s.jsz().get("meta_cluster") or {}).get("leader")
                except OSError:
                    continue
                leader = next((x for x in self.servers if x.name == name and x.alive), None)
                if leader is not None:
                    return leader
            time.sleep(0.2)
        raise RuntimeError("no JetStream meta leader")

    def stream_info(self, stream: str) -> Any:
        async def fn(nc: Any) -> Any:
            return await nc.jetstream().stream_info(stream)
        return run_js(self.live_urls(), fn)

    def lead_streams_from(self, target: "Server", streams: List[str], timeout: float = 60.0) -> None:
        """Move the leadership of every stream in ``streams`` to ``target`` (stepdown with a
        preferred placement, repeated until it holds)."""
        deadline = time.monotonic() + timeout
        for stream in streams:
            while True:
                try:
                    info = self.stream_info(stream)
                    if info.cluster.leader == target.name and all(p.current for p in info.cluster.replicas or []):
                        break
                    payload = json.dumps({"placement": {"preferred": target.name}}).encode()
                    run_js(self.live_urls(), lambda nc: nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}",
                                                                  payload, timeout=5))
                except Exception:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"could not move the leader of {stream} to {target.name}")
                time.sleep(0.5)

    def wait_current(self, server: "Server", streams: List[str], timeout: float = 60.0) -> None:
        """Until ``server`` is a current, lag-free replica (or the leader) of every stream."""
        deadline = time.monotonic() + timeout
        pending = list(streams)
        while pending:
            try:
                info = self.stream_info(pending[0])
                peers = {p.name: p for p in (info.cluster.replicas or [])}
                peer = peers.get(server.name)
                if info.cluster.leader == server.name or (peer is not None and peer.current and not peer.lag):
                    pending.pop(0)
                    continue
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server.name} did not catch up on {pending[0]}")
            time.sleep(0.3)


def run_js(servers: str, fn: Callable[[Any], Awaitable[Any]], timeout: float = 30.0) -> Any:
    """Run ``fn(nc)`` on a fresh nats-py connection (test set-up and baselines)."""
    import nats

    async def main() -> Any:
        nc = await nats.connect(servers=servers.split(","), connect_timeout=2, max_reconnect_attempts=3,
                                reconnect_time_wait=0.2)
        try:
            return await asyncio.wait_for(fn(nc), timeout)
        finally:
            await nc.close()

    return asyncio.run(main())


def write_context(config_home: str, name: str, doc: Dict[str, Any]) -> str:
    d = os.path.join(config_home, "nats", "context")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{name}.json")
    with open(path, "w") as fh:
        json.dump(doc, fh)
    return path



class Sniffer:
    """Every message a server carries on ``subject`` (default: all), seen by a real subscriber.

    Runs its own nats-py connection on a private event loop thread; ``messages`` holds
    ``(subject, data, headers)`` tuples, ``text()`` all of them as one string to grep.
    """

    def __init__(self, url: str, subject: str = ">"):
        import threading

        self.url, self.subject = url, subject
        self.messages: List[Any] = []
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._nc: Any = None

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._subscribe())
        self._ready.set()
        self._loop.run_forever()

    async def _subscribe(self) -> None:
        import nats

        async def cb(msg: Any) -> None:
            self.messages.append((msg.subject, bytes(msg.data), dict(msg.headers or {})))
        self._nc = await nats.connect(servers=[self.url], connect_timeout=2)
        await self._nc.subscribe(self.subject, cb=cb)
        await self._nc.flush()

    def __enter__(self) -> "Sniffer":
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("sniffer did not subscribe")
        return self

    def __exit__(self, *exc: Any) -> None:
        async def close() -> None:
            await self._nc.flush()
            await self._nc.close()
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def text(self) -> str:
        return "\n".join(f"{s} {d.decode('utf-8', 'replace')} {h}" for s, d, h in list(self.messages))
