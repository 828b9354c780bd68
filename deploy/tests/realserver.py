"""Starts the REAL bete-server (BETE_SERVER_BIN, or target/debug/bete-server) on free loopback
ports for the deploy tests, and stops it (SIGTERM, then SIGKILL if it lingers)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "clients" / "python"))  # the committed stubs: bete.v1


def binary() -> Path:
    path = Path(os.environ.get("BETE_SERVER_BIN") or REPO / "target" / "debug" / "bete-server")
    if not path.is_file():
        pytest.fail(f"no server binary at {path}: run `cargo build -p bete-server` or set BETE_SERVER_BIN")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(folder: Path, env: dict[str, str] | None = None, kill: bool = False):
    """Yields (api address, metrics address) once the server accepts gRPC connections. `env` is
    the server's whole BETE_* environment (the caller's BETE_* variables are not passed on); the
    addresses and the data folder are set here. `kill`: stop with SIGKILL rather than wait for
    the drain (whose grace the manifests set to seconds)."""
    api, metrics = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    full = {k: v for k, v in os.environ.items() if not k.startswith(("BETE_", "OTEL_"))}
    full.update(env or {"BETE_NO_WEB": "true", "BETE_HOUSE_TABLES": "0"})
    full.update({
        "BETE_LISTEN": api,
        "BETE_METRICS_LISTEN": metrics,
        "BETE_WEB_LISTEN": f"127.0.0.1:{free_port()}",
        "BETE_DATA_DIR": str(folder / "data"),
    })
    log_path = folder / "server.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([str(binary())], env=full, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        with grpc.insecure_channel(api) as ch:
            while True:
                try:
                    grpc.channel_ready_future(ch).result(timeout=0.2)
                    break
                except grpc.FutureTimeoutError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(
                            f"bete-server did not come up (exit {proc.poll()}):\n{log_path.read_text()[-3000:]}"
                        )
        yield api, metrics
    finally:
        if kill:
            proc.kill()
        else:
            proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
