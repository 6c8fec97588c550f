"""Start and stop the storage emulators the tests talk to, on free loopback ports.

Plain functions, no pytest: a session fixture calls ``start_moto()`` / ``start_azurite()``
and ``server.stop()`` when done. Each server runs as a child process with its output in a
temp log file (shown when it fails to start) and is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

LOOPBACK = "127.0.0.1"
REPO_ROOT = Path(__file__).resolve().parent.parent

# Azurite's well-known development account (public, documented by Microsoft; the same
# string is in node_modules/azurite/dist/src/blob/utils/constants.js).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


@dataclass
class ServerProcess:
    """A started emulator: ``url`` answers HTTP until ``stop()``."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    host: str = LOOPBACK
    _log_file: object = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, grace: float = 5.0) -> None:
        """Terminate by PID, then kill if it has not exited within ``grace`` seconds."""
        stop_process(self.process, grace)
        if self._log_file is not None:
            self._log_file.close()  # type: ignore[attr-defined]
            self._log_file = None
        try:
            self.log_path.unlink()
        except OSError:
            pass


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port nobody listens on right now (the kernel picks it for a bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace)


def wait_until_answers(server: ServerProcess, path: str = "/", timeout: float = 30.0) -> None:
    """Poll ``server.url + path`` until any HTTP answer (4xx counts); raise if it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"{server.name} exited with {server.process.returncode} before answering:\n"
                f"{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(server.url + path, timeout=1):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(
        f"{server.name} did not answer on {server.url} within {timeout:g} s:\n{server.log_tail()}"
    )


def _start(name: str, argv_for_port, probe_path: str, env: dict[str, str] | None,
           attempts: int = 3) -> ServerProcess:
    # The port is free when picked but could be taken before the child binds it; retry then.
    last_error: Exception | None = None
    for _ in range(attempts):
        port = free_port()
        fd, log_name = tempfile.mkstemp(prefix=f"{name}-", suffix=".log")
        log_file = os.fdopen(fd, "wb")
        process = subprocess.Popen(
            argv_for_port(port),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=tempfile.gettempdir(),
        )
        server = ServerProcess(name, process, port, Path(log_name), _log_file=log_file)
        try:
            wait_until_answers(server, probe_path)
            return server
        except RuntimeError as exc:
            last_error = exc
            server.stop()
    raise RuntimeError(f"could not start {name}: {last_error}")


def moto_server_command() -> list[str]:
    script = Path(sys.executable).parent / "moto_server"
    if script.exists():
        return [str(script)]
    found = shutil.which("moto_server")
    return [found] if found else [sys.executable, "-m", "moto.server"]


def start_moto(env: dict[str, str] | None = None) -> ServerProcess:
    """moto's standalone server (all services, S3 and IAM included) on a free loopback port."""
    command = moto_server_command()
    return _start(
        "moto_server",
        lambda port: [*command, "-H", LOOPBACK, "-p", str(port)],
        "/moto-api/",
        env,
    )


def azurite_blob_command() -> list[str]:
    binary = REPO_ROOT / "node_modules" / ".bin" / "azurite-blob"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run `npm ci` in {REPO_ROOT}")
    return [str(binary)]


def start_azurite() -> ServerProcess:
    """Azurite's Blob service, in memory, on a free loopback port."""
    command = azurite_blob_command()
    return _start(
        "azurite-blob",
        lambda port: [
            *command,
            "--inMemoryPersistence",
            "--silent",
            "--skipApiVersionCheck",
            "--loose",
            "--blobHost", LOOPBACK,
            "--blobPort", str(port),
        ],
        f"/{AZURITE_ACCOUNT}?comp=list",
        None,
    )
