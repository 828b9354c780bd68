"""The offline validator (deploy/tools/validate.py) passes the real overlays and refuses
broken manifests: each broken case is a real overlay's resource with one fault put in."""

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import validate

DEPLOY = Path(__file__).resolve().parent.parent
OVERLAYS = sorted(p for p in (DEPLOY / "overlays").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def scale_out():
    return validate.render(DEPLOY / "overlays" / "scale-out")


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return copy.deepcopy(found[0])


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_overlay_builds_and_validates(overlay):
    docs = validate.render(overlay)
    assert docs, "kustomize rendered nothing"
    assert validate.validate_documents(docs) == []


def test_scale_out_has_what_scale_out_needs(scale_out):
    kinds = {d["kind"] for d in scale_out}
    for kind in [
        "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler",
        "NetworkPolicy", "Cluster", "ScheduledBackup", "ObjectStore",
    ]:
        assert kind in kinds
    assert "PersistentVolumeClaim" not in kinds  # the SQLite volume is gone
    hpa = one(scale_out, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    dep = one(scale_out, "Deployment")
    assert "replicas" not in dep["spec"]  # the HPA owns it
    env = {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["BETE_NODE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["BETE_ADVERTISE_ADDR"]["value"] == "$(POD_IP):50051"
    assert env["BETE_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "bete-pg-app", "key": "uri"}
    svc = one(scale_out, "Service", "bete-server")
    assert svc["spec"]["ports"][0]["appProtocol"] == "kubernetes.io/h2c"
    peers = one(scale_out, "Service", "bete-peers")
    assert peers["spec"]["clusterIP"] == "None"
    # Nodes serving TLS forward over TLS: the peer name is one the shared certificate carries.
    cm = one(scale_out, "ConfigMap", "bete-server")["data"]
    cert = one(scale_out, "Certificate", "bete-tls")
    assert cm["BETE_TLS_CERT"].startswith("/etc/bete-tls/")
    assert cm["BETE_PEER_TLS_NAME"] in cert["spec"]["dnsNames"]
    assert cm["BETE_PEER_CA"]


def test_drain_fits_the_grace_period(scale_out):
    """terminationGracePeriodSeconds covers drain grace + a slow release + drain timeout."""
    cm = one(scale_out, "ConfigMap", "bete-server")["data"]
    pod = one(scale_out, "Deployment")["spec"]["template"]["spec"]
    slow_release = 5
    need = int(cm["BETE_DRAIN_GRACE_SECS"]) + slow_release + int(cm["BETE_DRAIN_TIMEOUT_SECS"])
    assert pod["terminationGracePeriodSeconds"] >= need + 5


def broken(docs, kind, name, fault):
    doc = one(docs, kind, name)
    fault(doc)
    return validate.validate_documents([doc])


def test_unknown_field_in_a_deployment_is_refused(scale_out):
    def fault(d):
        d["spec"]["replica"] = 3
    problems = broken(scale_out, "Deployment", "bete-server", fault)
    assert problems and "replica" in problems[0]


def test_unknown_nested_field_is_refused(scale_out):
    def fault(d):
        d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpcc"] = {"port": 50051}
    problems = broken(scale_out, "Deployment", "bete-server", fault)
    assert problems and "grpcc" in problems[0]


def test_a_strategic_merge_directive_left_in_the_output_is_refused(scale_out):
    # What a `$retainKeys` patch on a JSON-patched field rendered to before it was fixed.
    def fault(d):
        d["spec"]["strategy"]["$retainKeys"] = ["type", "rollingUpdate"]
    assert broken(scale_out, "Deployment", "bete-server", fault)


def test_wrong_type_is_refused(scale_out):
    def fault(d):
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "50051"
    problems = broken(scale_out, "Deployment", "bete-server", fault)
    assert problems and "containerPort" in problems[0]


def test_hpa_of_an_old_api_shape_is_refused(scale_out):
    def fault(d):
        d["spec"]["targetCPUUtilizationPercentage"] = 65  # autoscaling/v1's field
    assert broken(scale_out, "HorizontalPodAutoscaler", "bete-server", fault)


def test_cnpg_cluster_faults_are_refused(scale_out):
    def unknown(d):
        d["spec"]["instancess"] = 3
    problems = broken(scale_out, "Cluster", "bete-pg", unknown)
    assert problems and "instancess" in problems[0]

    def wrong_type(d):
        d["spec"]["instances"] = "three"
    assert broken(scale_out, "Cluster", "bete-pg", wrong_type)

    def bad_enum(d):
        d["spec"]["postgresql"]["synchronous"]["method"] = "all"
    assert broken(scale_out, "Cluster", "bete-pg", bad_enum)

    def missing_required(d):
        del d["spec"]["postgresql"]["synchronous"]["number"]
    assert broken(scale_out, "Cluster", "bete-pg", missing_required)


def test_scheduled_backup_and_object_store_faults_are_refused(scale_out):
    def no_cluster(d):
        del d["spec"]["cluster"]
    assert broken(scale_out, "ScheduledBackup", "bete-pg-nightly", no_cluster)

    def unknown(d):
        d["spec"]["configuration"]["destination"] = "s3://x"
    assert broken(scale_out, "ObjectStore", "bete-backups", unknown)


def test_a_kind_without_a_schema_is_refused():
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "x"}, "spec": {}}
    problems = validate.validate_documents([doc])
    assert problems and "no schema" in problems[0]


def test_the_restricted_profile_is_checked(scale_out):
    def root(d):
        d["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] = False
        del d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsNonRoot"]
    problems = broken(scale_out, "Deployment", "bete-server", root)
    assert problems == ["Deployment/bete-server: container bete-server: runAsNonRoot is not true"]

    def caps(d):
        d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"] = {"drop": ["NET_RAW"]}
    assert broken(scale_out, "Deployment", "bete-server", caps)


def test_the_command_line_fails_on_a_broken_file(tmp_path, scale_out):
    dep = one(scale_out, "Deployment")
    # A container without its required name.
    del dep["spec"]["template"]["spec"]["containers"][0]["name"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all([one(scale_out, "Namespace"), dep]))
    run = subprocess.run(
        [sys.executable, str(DEPLOY / "tools" / "validate.py"), str(bad)], capture_output=True, text=True
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "'name' is a required property" in run.stdout
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump_all(scale_out))
    run = subprocess.run(
        [sys.executable, str(DEPLOY / "tools" / "validate.py"), str(good)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_runbooks_manifests_validate():
    """The resources docs/operations.md tells the operator to apply (backup, restore) are valid."""
    text = (DEPLOY.parent / "docs" / "operations.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "apiVersion:" in b]
    docs = [d for b in blocks for d in yaml.safe_load_all(b)]
    assert {d["kind"] for d in docs} >= {"Backup", "Cluster"}
    assert validate.validate_documents(docs) == []
