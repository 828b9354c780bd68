"""The load-test Job (deploy/load): it validates like the overlays, its N is one number, each pod
is a shard of one load, it reaches the Service of the production overlays with the TLS name
their Certificate carries, and the REAL bete-load accepts its arguments: run for shard 0 of N
against a real bete-server with open signup off and account tokens from a file, as in a pod
(the server plaintext here; TLS is tested in clients/load/tests/tls.rs), it prints a JSON
report line that `bete-load merge` reads."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess

import grpc
import pytest

import realserver
import validate
from bete.v1 import account_service_pb2, account_service_pb2_grpc

DEPLOY = realserver.REPO / "deploy"
ADMIN = "deploy-test-admin-token"


def load_binary():
    path = realserver.Path(os.environ.get("BETE_LOAD_BIN") or realserver.REPO / "target" / "debug" / "bete-load")
    if not path.is_file():
        pytest.fail(f"no bete-load binary at {path}: run `cargo build -p bete-load` or set BETE_LOAD_BIN")
    return path


@pytest.fixture(scope="module")
def docs():
    return validate.render(DEPLOY / "load")


@pytest.fixture(scope="module")
def job(docs):
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert len(jobs) == 1
    return jobs[0]


def container(job):
    return job["spec"]["template"]["spec"]["containers"][0]


def flags(job) -> dict[str, str]:
    out = {}
    for arg in container(job)["args"]:
        name, _, value = arg.partition("=")
        out[name] = value
    return out


def test_the_job_validates(docs):
    assert validate.validate_documents(docs) == []


def test_a_broken_job_is_refused(job):
    """The validator checks this Job as it does the overlays: a bad field, an unknown one, a
    pod outside the restricted rules."""
    bad = copy.deepcopy(job)
    bad["spec"]["completions"] = "three"
    assert validate.validate_documents([bad])
    bad = copy.deepcopy(job)
    bad["spec"]["shards"] = 3
    assert validate.validate_documents([bad])
    bad = copy.deepcopy(job)
    del container(bad)["securityContext"]["capabilities"]
    assert any("capabilities" in e for e in validate.validate_documents([bad]))


def test_n_is_one_number_and_each_pod_is_a_shard(job):
    spec = job["spec"]
    env = {e["name"]: e for e in container(job)["env"]}
    n = int(env["BETE_LOAD_SHARDS"]["value"])
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == n
    assert flags(job)["--shard"] == "$(JOB_COMPLETION_INDEX)/$(BETE_LOAD_SHARDS)"
    assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    )
    # Bounded, and never a second run of a shard.
    assert spec["backoffLimit"] == 0
    assert 0 < spec["activeDeadlineSeconds"] <= 3600
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert flags(job)["--report"] == "-"


def test_tls_and_tokens_come_from_the_secret(job):
    pod = job["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = container(job)["volumeMounts"]
    secret_mounts = [m["mountPath"] for m in mounts if "secret" in volumes[m["name"]]]
    assert [volumes[m["name"]]["secret"]["secretName"] for m in mounts] == ["bete-load"]
    f = flags(job)
    for flag in ("--ca-cert", "--account-tokens"):
        assert any(f[flag].startswith(p + "/") for p in secret_mounts), flag
    assert f["--server"].startswith("https://")


@pytest.mark.parametrize("overlay", ["production", "scale-out"])
def test_it_reaches_the_service_of_the_production_overlays(job, overlay):
    server = validate.render(DEPLOY / "overlays" / overlay)
    svc = next(d for d in server if d["kind"] == "Service" and d["metadata"]["name"] == "bete-server")
    host, port = re.fullmatch(r"https://([^:/]+):(\d+)", flags(job)["--server"]).groups()
    assert host == svc["metadata"]["name"]
    assert job["metadata"]["namespace"] == svc["metadata"]["namespace"]
    assert int(port) in {p["port"] for p in svc["spec"]["ports"] if p["name"] == "grpc"}
    cert = next(d for d in server if d["kind"] == "Certificate")
    assert flags(job)["--tls-domain"] in cert["spec"]["dnsNames"]
    # The load pods are not the server's: no selector of its Service, PDB or policies takes them.
    labels = job["spec"]["template"]["metadata"]["labels"]
    for d in server:
        sel = (d.get("spec") or {}).get("selector")
        sel = (sel or {}).get("matchLabels", sel) if isinstance(sel, dict) else None
        if sel and d["kind"] in ("Service", "PodDisruptionBudget", "Deployment"):
            assert not all(labels.get(k) == v for k, v in sel.items()), d["metadata"]["name"]


def test_the_real_harness_runs_the_jobs_arguments(job, tmp_path):
    env = {
        "BETE_NO_WEB": "true",
        "BETE_HOUSE_TABLES": "0",
        "BETE_OPEN_SIGNUP": "false",
        "BETE_ADMIN_TOKEN": ADMIN,
    }
    n = container(job)["env"][1]["value"]
    with realserver.running(tmp_path, env, kill=True) as (api, _metrics):
        with grpc.insecure_channel(api) as ch:
            accounts = account_service_pb2_grpc.AccountServiceStub(ch)
            tokens = [
                accounts.CreateAccount(
                    account_service_pb2.CreateAccountRequest(name=f"load-{i}"),
                    metadata=[("authorization", f"Bearer {ADMIN}")],
                    timeout=10,
                ).token
                for i in range(2)
            ]
        (tmp_path / "account-tokens").write_text("\n".join(tokens) + "\n")
        args = []
        for arg in container(job)["args"]:
            name, eq, value = arg.partition("=")
            if not eq:
                args.append(arg)  # a switch, e.g. --quiet
                continue
            value = value.replace("$(JOB_COMPLETION_INDEX)", "0").replace("$(BETE_LOAD_SHARDS)", n)
            if name in ("--tls-domain", "--ca-cert"):
                continue  # plaintext here
            value = {
                "--server": f"http://{api}",
                "--account-tokens": str(tmp_path / "account-tokens"),
                "--tables": "6",
                "--duration": "1s",
            }.get(name, value)
            args.append(f"{name}={value}")
        args += ["--ceiling-duration=200ms", "--setup-timeout=30s"]
        run = subprocess.run(
            [str(load_binary()), *args], capture_output=True, text=True, timeout=180
        )
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, run.stdout
    report = json.loads(lines[0])
    assert report["shard"]["index"] == 0 and report["shard"]["count"] == int(n)
    assert report["settings"]["tables"] == -(-6 // int(n))
    assert report["moves"] > 0 and report["errors"]["total"] == 0, run.stderr
    assert {"submit_to_ack", "submit_to_event_at_every_seat"} <= set(report["histograms"])

    # The pod's log (stdout and stderr together) is what `bete-load merge` reads.
    log = tmp_path / "bete-load-0.log"
    log.write_text(run.stderr + run.stdout)
    merged = subprocess.run(
        [str(load_binary()), "merge", str(log), "--report", "-"],
        capture_output=True, text=True, timeout=60,
    )
    assert merged.returncode == 0, merged.stderr
    out = json.loads(merged.stdout)
    assert out["moves"] == report["moves"]
    assert out["merged"]["missing_shards"] == list(range(1, int(n)))
