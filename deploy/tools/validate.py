"""Offline validation of the Kubernetes manifests (scripts/test.sh, step "deploy").

    python deploy/tools/validate.py [--kubernetes-version 1.33.0] [PATH ...]

Each PATH is an overlay folder (rendered with `kustomize build`) or a YAML file of rendered
resources; without PATH, every folder under deploy/overlays and deploy/load (the load-test
Job). Every resource is checked:

- built-in kinds against the JSON schemas of one pinned Kubernetes version, shipped offline by
  the `kubernetes-validate` package, in strict mode (an unknown field is an error, as the API
  server's strict field validation, kubectl's default, makes it);
- custom resources against their CRD's schema vendored in deploy/schemas (README there: which
  operator release each comes from), also with unknown fields refused; CEL rules
  (x-kubernetes-validations) are not evaluated;
- pod templates against the restricted Pod Security Standard's main rules (non-root, seccomp,
  no privilege escalation, every capability dropped), which the namespaces enforce.

A resource of a kind with no schema here is an error: vendor its CRD (deploy/tools/vendor_crd.py).
Exits 1 and lists every problem if there is one.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

KUBERNETES_VERSION = "1.33.0"
DEPLOY = Path(__file__).resolve().parent.parent
SCHEMAS = DEPLOY / "schemas"

POD_TEMPLATE_PATHS = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}


def _strict(node):
    """An OpenAPI v3 structural schema as JSON Schema (draft 4) that refuses unknown fields."""
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items()}
    if out.pop("x-kubernetes-int-or-string", False):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.pop("x-kubernetes-embedded-resource", False):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    preserve = out.pop("x-kubernetes-preserve-unknown-fields", False)
    if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


@cache
def crd_schemas() -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> JSON Schema, from deploy/schemas/*.json."""
    found = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        crd = json.loads(path.read_text())
        schema = _strict(crd["openAPIV3Schema"])
        schema.setdefault("properties", {}).setdefault("metadata", {"type": "object"})
        found[(f"{crd['group']}/{crd['version']}", crd["kind"])] = schema
    return found


def _where(path) -> str:
    return "/".join(str(p) for p in path) or "(top)"


def schema_errors(doc: dict, kubernetes_version: str = KUBERNETES_VERSION) -> list[str]:
    key = (doc.get("apiVersion"), doc.get("kind"))
    schema = crd_schemas().get(key)
    if schema is not None:
        validator = jsonschema.Draft4Validator(schema)
        return [f"{_where(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    try:
        kubernetes_validate.validate(copy.deepcopy(doc), kubernetes_version, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        return [
            f"no schema for {key[0]} {key[1]} in Kubernetes {kubernetes_version} or "
            "deploy/schemas: vendor its CRD (deploy/tools/vendor_crd.py)"
        ]
    except kubernetes_validate.ValidationError as e:
        return [f"{_where(e.path)}: {e.message}"]
    return []


def restricted_errors(doc: dict) -> list[str]:
    """The restricted Pod Security Standard's rules that a manifest can get wrong."""
    path = POD_TEMPLATE_PATHS.get(doc.get("kind"))
    if path is None:
        return []
    pod = doc
    for p in path:
        pod = (pod or {}).get(p)
    pod = pod or {}
    psc = pod.get("securityContext") or {}
    errors = []
    for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
        sc = c.get("securityContext") or {}
        name = c.get("name", "?")
        if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True):
            errors.append(f"container {name}: runAsNonRoot is not true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            errors.append(f"container {name}: runs as uid 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            errors.append(f"container {name}: seccompProfile is not RuntimeDefault or Localhost")
        if sc.get("allowPrivilegeEscalation") is not False:
            errors.append(f"container {name}: allowPrivilegeEscalation is not false")
        if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
            errors.append(f"container {name}: capabilities do not drop ALL")
        if sc.get("privileged"):
            errors.append(f"container {name}: privileged")
    return errors


def validate_documents(docs, kubernetes_version: str = KUBERNETES_VERSION) -> list[str]:
    """Every problem of the rendered resources `docs`, one line each; empty when all is well."""
    problems = []
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            problems.append(f"not a resource: {doc!r:.80}")
            continue
        name = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        for e in schema_errors(doc, kubernetes_version) + restricted_errors(doc):
            problems.append(f"{name}: {e}")
    return problems


def render(path: Path) -> list:
    if path.is_dir():
        out = subprocess.run(
            ["kustomize", "build", str(path)], check=True, capture_output=True, text=True
        ).stdout
    else:
        out = path.read_text()
    return list(yaml.safe_load_all(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kubernetes-version", default=KUBERNETES_VERSION)
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.paths or sorted(p for p in (DEPLOY / "overlays").iterdir() if p.is_dir()) + [DEPLOY / "load"]
    failed = False
    for path in paths:
        try:
            docs = render(path)
        except subprocess.CalledProcessError as e:
            print(f"{path}: kustomize build failed:\n{e.stderr}")
            failed = True
            continue
        problems = validate_documents(docs, args.kubernetes_version)
        for p in problems:
            print(f"{path}: {p}")
        kinds = sorted({d.get("kind") for d in docs if isinstance(d, dict)})
        state = "FAILED" if problems else "ok"
        print(f"{path}: {len(docs)} resources ({', '.join(kinds)}), Kubernetes {args.kubernetes_version}: {state}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
