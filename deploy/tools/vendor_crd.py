"""Writes the schema of a CustomResourceDefinition into deploy/schemas/, for validate.py.

    python deploy/tools/vendor_crd.py CRD.yaml SOURCE

SOURCE says where the CRD came from (project, tag, path); it is recorded in the output. The
schema is kept whole except descriptions and `status` (not ours to write), which is what makes
it small enough to keep in the repository.
"""

import json
import sys
from pathlib import Path

import yaml

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def main(crd_path: str, source: str) -> None:
    crd = yaml.safe_load(Path(crd_path).read_text())
    spec = crd["spec"]
    for version in spec["versions"]:
        schema = strip(version["schema"]["openAPIV3Schema"])
        schema.get("properties", {}).pop("status", None)
        out = {
            "group": spec["group"],
            "kind": spec["names"]["kind"],
            "version": version["name"],
            "source": source,
            "openAPIV3Schema": schema,
        }
        name = f"{spec['group']}_{spec['names']['kind'].lower()}_{version['name']}.json"
        (SCHEMAS / name).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
        print(f"wrote deploy/schemas/{name}")


if __name__ == "__main__":
    main(*sys.argv[1:])
