"""A real Jupyter server for tests: started on a free local port, reached through its REST API, always stopped."""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
import urllib.request
from typing import Iterator

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, token: str, path: str, method: str = "GET", body: dict | None = None) -> dict:
    """One REST call with the token; the JSON answer as a dict."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read() or b"{}")


@contextlib.contextmanager
def running_server(cmd: list[str], port: int, token: str, start_timeout_s: float = 120, **popen) -> Iterator[str]:
    """Start `cmd` (a Jupyter server listening on `port`), wait until it answers, yield its base URL, stop it."""
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                api(base, token, "/api/status")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"the Jupyter server did not start: {' '.join(cmd)}")
                time.sleep(0.3)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
