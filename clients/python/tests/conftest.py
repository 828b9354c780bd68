"""Fixtures: the REAL bete-server on a free loopback port with a temporary data folder.

The server is not built here: set BETE_SERVER_BIN or build it first (`cargo build -p bete-server`,
which gives <repo>/target/debug/bete-server).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "tests" / "vectors"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serving(target: str) -> bool:
    with grpc.insecure_channel(target) as channel:
        try:
            resp = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        except grpc.RpcError:
            return False
    return resp.status == health_pb2.HealthCheckResponse.SERVING


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> str:
    """Starts bete-server, waits for health SERVING, yields "127.0.0.1:PORT", kills it at the end."""
    binary = Path(os.environ.get("BETE_SERVER_BIN") or REPO / "target" / "debug" / "bete-server")
    if not binary.is_file():
        pytest.fail(f"no server binary at {binary}: run `cargo build -p bete-server` or set BETE_SERVER_BIN")
    base = tmp_path_factory.mktemp("bete-server")
    last_log = ""
    for attempt in range(3):  # another process may grab the free port before the server binds it
        target = f"127.0.0.1:{_free_port()}"
        data = base / f"data{attempt}"
        data.mkdir()
        log_path = base / f"server{attempt}.log"
        log = open(log_path, "wb")
        proc = subprocess.Popen(
            [str(binary), "--listen", target, "--data-dir", str(data), "--metrics-listen", "127.0.0.1:0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None and not _serving(target):
            time.sleep(0.1)
        if proc.poll() is None and _serving(target):
            try:
                yield target
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
            return
        proc.kill()
        proc.wait()
        log.close()
        last_log = log_path.read_text(errors="replace")[-3000:]
    pytest.fail(f"bete-server did not become SERVING:\n{last_log}")
