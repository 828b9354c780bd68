"""The SDK over TLS against the REAL server started with a test certificate (made with trustme):
a bot plays a match over https://, a client that does not trust the server's CA is refused, and
a rotated token is revoked at once."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid

import grpc
import pytest
import trustme
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bete_bot import BeteError, Client, RandomBot, Tls, play_match, register_bot, rotate_token

from conftest import free_port, server_binary, stop

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """bete-server over TLS; yields (https target, CA PEM path)."""
    base = tmp_path_factory.mktemp("bete-tls")
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1")
    ca_path, chain, key = base / "ca.pem", base / "tls.crt", base / "tls.key"
    ca.cert_pem.write_to_path(str(ca_path))
    cert.private_key_pem.write_to_path(str(key))
    with open(chain, "wb") as f:
        for blob in cert.cert_chain_pems:
            f.write(blob.bytes())
    port = free_port()
    log = open(base / "server.log", "ab")
    proc = subprocess.Popen(
        [str(server_binary()), "--listen", f"127.0.0.1:{port}", "--data-dir", str(base / "data"),
         "--metrics-listen", "127.0.0.1:0", "--no-web", "--tls-cert", str(chain), "--tls-key", str(key)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    credentials = grpc.ssl_channel_credentials(root_certificates=ca_path.read_bytes())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        with grpc.secure_channel(f"localhost:{port}", credentials) as ch:
            try:
                health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=1)
                break
            except grpc.RpcError:
                time.sleep(0.05)
    else:
        stop(proc)
        pytest.fail((base / "server.log").read_text(errors="replace")[-3000:])
    try:
        yield f"https://localhost:{port}", ca_path
    finally:
        stop(proc)
        log.close()


def test_a_bot_plays_over_tls(tls_server, monkeypatch, tmp_path):
    target, ca = tls_server
    # As a bot's operator would: the CA from the environment, the server as https://.
    monkeypatch.setenv("BETE_CA_CERT", str(ca))
    states = asyncio.run(play_match(RandomBot(3), target, tables=1, token_file=tmp_path / "token.json"))
    (state,) = states.values()
    assert state.done and state.result is not None and state.decisions > 0


def test_an_untrusted_server_is_refused(tls_server, monkeypatch):
    target, _ = tls_server
    for var in ("BETE_CA_CERT", "BETE_TLS", "BETE_CLIENT_CERT", "BETE_TLS_DOMAIN"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(BeteError) as e:
        asyncio.run(register_bot(target, f"untrusting-{uuid.uuid4().hex[:6]}", timeout=5))
    assert e.value.code == grpc.StatusCode.UNAVAILABLE
    # Plaintext to the TLS port fails too.
    with pytest.raises(BeteError):
        asyncio.run(register_bot(target.replace("https://", "http://"), "in-clear", timeout=5))


def test_a_rotated_token_is_revoked(tls_server):
    target, ca = tls_server
    tls = Tls.from_files(ca_cert=ca)

    async def scenario():
        bot_id, old = await register_bot(target, f"rotating-{uuid.uuid4().hex[:6]}", tls=tls)
        new = await rotate_token(target, bot_id, old, tls=tls)
        assert new != old and new.startswith("bete_")
        async with Client(target, old, tls=tls) as stale:
            with pytest.raises(BeteError) as e:
                await stale.list_tables(page_size=1)
        assert e.value.code == grpc.StatusCode.UNAUTHENTICATED
        assert e.value.reason == "TOKEN_REVOKED"
        async with Client(target, new, tls=tls) as fresh:
            await fresh.list_tables(page_size=1)

    asyncio.run(scenario())
