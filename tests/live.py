"""Run real authflow processes (gunicorn) on loopback ports for end-to-end tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    url: str
    port: int
    process: subprocess.Popen
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_server(database_url: str, *, log_dir: Path, workers: int = 2, env: dict | None = None,
                 port: int | None = None) -> LiveServer:
    """Start gunicorn serving wsgi:app on 127.0.0.1 and wait until it answers."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    environ = dict(os.environ)
    environ.update(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": "live-secret-" + str(port),
            "AUTHFLOW_BASE_URL": url,
            "AUTHFLOW_ALLOW_PRIVATE_REMOTES": "true",
            "PYTHONPATH": str(ROOT),
        }
    )
    environ.update(env or {})
    log_path = log_dir / f"gunicorn-{port}.log"
    log_file = open(log_path, "wb")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "wsgi:app",
            "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers),
            "--threads", "4",
            "--timeout", "60",
        ],
        cwd=ROOT,
        env=environ,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    log_file.close()  # the child has its own descriptor; ours would leak (ResourceWarning)
    server = LiveServer(url, port, process, log_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited early:\n{server.log()}")
        try:
            requests.get(url + "/login", timeout=1)
            return server
        except (requests.ConnectionError, requests.Timeout):
            # A worker still importing accepts the connection but answers late: not fatal.
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"gunicorn did not answer in time:\n{server.log()}")
