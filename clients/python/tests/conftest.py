"""Fixtures: the REAL bete-server on a free loopback port with a temporary data folder.

The server is not built here: set BETE_SERVER_BIN or build it first (`cargo build -p bete-server`,
which gives <repo>/target/debug/bete-server).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "tests" / "vectors"


def server_binary() -> Path:
    binary = Path(os.environ.get("BETE_SERVER_BIN") or REPO / "target" / "debug" / "bete-server")
    if not binary.is_file():
        pytest.fail(f"no server binary at {binary}: run `cargo build -p bete-server` or set BETE_SERVER_BIN")
    return binary


def free_port() -> int:
    """A loopback port free a moment ago, for a server process started next.

    Taken below the kernel's ephemeral range (32768 and up): a port from bind(0), once
    dropped, may be taken by any outgoing connection of the machine before the server binds it.
    """
    for _ in range(1000):
        port = random.randrange(10_000, 30_000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serving(target: str) -> bool:
    with grpc.insecure_channel(target) as channel:
        try:
            resp = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        except grpc.RpcError:
            return False
    return resp.status == health_pb2.HealthCheckResponse.SERVING


def launch(target: str, data: Path, log_path: Path, timeout: float = 30) -> subprocess.Popen | None:
    """Starts the server on ``target`` with ``data``; returns it once SERVING, or None if it died."""
    data.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [str(server_binary()), "--listen", target, "--data-dir", str(data), "--metrics-listen", "127.0.0.1:0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if serving(target):
            return proc
        time.sleep(0.05)
    stop(proc)
    return None


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the server drains), then SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> str:
    """Starts bete-server, waits for health SERVING, yields "127.0.0.1:PORT", kills it at the end."""
    base = tmp_path_factory.mktemp("bete-server")
    log_path = base / "server.log"
    for attempt in range(3):  # another process may grab the free port before the server binds it
        target = f"127.0.0.1:{free_port()}"
        proc = launch(target, base / f"data{attempt}", log_path)
        if proc is not None:
            try:
                yield target
            finally:
                stop(proc)
            return
    pytest.fail(f"bete-server did not become SERVING:\n{log_path.read_text(errors='replace')[-3000:]}")
