"""The environment the manifests give bete-server is one the REAL server accepts: every BETE_*
variable is one of its flags (from `bete-server --help`), and each overlay's ConfigMap, with the
ladders file it mounts, starts a server that serves those ladders."""

from __future__ import annotations

import re
import subprocess
import tomllib

import grpc
import pytest

import realserver
import validate
from bete.v1 import ladder_service_pb2, ladder_service_pb2_grpc

DEPLOY = realserver.REPO / "deploy"
OVERLAYS = sorted(p for p in (DEPLOY / "overlays").iterdir() if p.is_dir())
# Flags the manifests may set ahead of the server (none now: the scale-out flags of issue #15,
# BETE_DATABASE_URL, BETE_NODE_ID and BETE_ADVERTISE_ADDR, are the server's).
PENDING: set[str] = set()


@pytest.fixture(scope="module")
def flags() -> set[str]:
    out = subprocess.run([str(realserver.binary()), "--help"], capture_output=True, text=True, check=True).stdout
    found = set(re.findall(r"env: (BETE_[A-Z0-9_]+)", out))
    assert {"BETE_LISTEN", "BETE_DRAIN_GRACE_SECS", "BETE_LADDERS"} <= found
    return found


def server_env(docs) -> tuple[dict[str, str], list[str]]:
    """The ConfigMap's variables and the names of the container's own env entries."""
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "bete-server")
    dep = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "bete-server")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    return cm["data"], [e["name"] for e in container.get("env", [])]


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_variable_is_a_flag_of_the_server(overlay, flags):
    data, env = server_env(validate.render(overlay))
    unknown = sorted(
        n for n in list(data) + env
        if n.startswith("BETE_") and n not in flags and n not in PENDING
    )
    assert unknown == []


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_the_configmap_starts_a_server_with_its_ladders(overlay, tmp_path):
    data, _ = server_env(validate.render(overlay))
    env = {k: v for k, v in data.items() if k.startswith("BETE_") and k not in PENDING}
    # The file the ladders ConfigMap mounts at BETE_LADDERS.
    assert env["BETE_LADDERS"] == "/etc/bete/ladders.toml"
    env["BETE_LADDERS"] = str(DEPLOY / "base" / "ladders.toml")
    # The certificate comes from the Secret the TLS component mounts; TLS itself is tested
    # against the real server in service/server/tests/tls.rs, so here the server runs plaintext.
    for key in ("BETE_TLS_CERT", "BETE_TLS_KEY"):
        if key in env:
            assert env.pop(key).startswith("/etc/bete-tls/"), key
    # The peers' TLS settings need TLS (tests/cluster_tls.rs tests them with real nodes).
    for key in ("BETE_PEER_TLS_NAME", "BETE_PEER_CA"):
        env.pop(key, None)
    want = {entry["id"] for entry in tomllib.loads((DEPLOY / "base" / "ladders.toml").read_text())["ladder"]}
    with realserver.running(tmp_path, env, kill=True) as (api, _metrics):
        with grpc.insecure_channel(api) as ch:
            ladders = ladder_service_pb2_grpc.LadderServiceStub(ch).ListLadders(
                ladder_service_pb2.ListLaddersRequest(), timeout=10
            )
    assert {ladder.ladder_id for ladder in ladders.ladders} == want
