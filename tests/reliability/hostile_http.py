"""A deliberately hostile HTTP/1.0 server on 127.0.0.1 (raw sockets, one thread per client).

Behaviours by path: ``/endless`` streams forever without a length, ``/slow`` drips one byte
every 0.3 s, ``/short`` declares 100 bytes and sends 50, ``/long`` declares 10 and sends 20,
``/redirect?to=URL`` answers 302 to URL, ``/ok`` answers ``hello``. Every request's headers
are recorded in ``requests``.
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Dict, List, Tuple


class HostileServer:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests: List[Tuple[str, Dict[str, str]]] = []
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._stop = True
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            path = head[0].split(" ")[1]
            headers = {}
            for line in head[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            self.requests.append((path, headers))
            route, _, query = path.partition("?")
            if route == "/endless":
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n")
                block = b"x" * 65536
                while not self._stop:
                    conn.sendall(block)
            elif route == "/slow":
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n")
                for _ in range(1000):
                    conn.sendall(b"a")
                    time.sleep(0.3)
            elif route == "/slowheaders":
                conn.sendall(b"HTTP/1.0 200 OK\r\n")
                for i in range(1000):
                    conn.sendall(f"X-Drip-{i}: a\r\n".encode())
                    time.sleep(0.3)
            elif route == "/short":
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + b"a: 1\n" * 10)
            elif route == "/long":
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n" + b"a: 1\n" * 4)
            elif route == "/redirect":
                target = query[len("to="):]
                conn.sendall(f"HTTP/1.0 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
            else:
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        except OSError:
            pass
        finally:
            conn.close()
