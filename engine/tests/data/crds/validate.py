"""Validate Kubernetes manifests against CRD openAPIV3Schemas kept here.

Usage: python3 validate.py MANIFESTS.yaml
  MANIFESTS.yaml holds one or more YAML documents. Each document's
  apiVersion and kind pick its schema (SCHEMAS below); a document of any
  other kind is an error. Prints one line per problem and exits 1 if there
  is any, else prints "ok N" (the number of documents) and exits 0.

Checked as an API server with strict field validation
(`kubectl apply --validate=strict`) would:
- the schema with `jsonschema` (Draft 7 keywords; the CRD's
  `x-kubernetes-*` keys are ignored by jsonschema);
- objects that list `properties` and neither `additionalProperties` nor
  `x-kubernetes-preserve-unknown-fields` are closed: an unknown field is
  an error (structural schemas prune unknown fields; strict validation
  refuses them);
- no two documents are one object (same apiVersion, kind, namespace and
  name): applied, the later would silently replace the earlier;
- metadata: `name` a DNS-1123 subdomain (at most 253 characters),
  `namespace` a DNS-1123 label (at most 63), `labels` and `annotations`
  maps of strings, label values at most 63 characters.
"""

import copy
import re
import sys
from pathlib import Path

import jsonschema
import yaml

HERE = Path(__file__).resolve().parent
SCHEMAS = {
    ("policy.karmada.io/v1alpha1", "PropagationPolicy"): "policy.karmada.io_propagationpolicies.schema.yaml",
    ("policy.karmada.io/v1alpha1", "OverridePolicy"): "policy.karmada.io_overridepolicies.schema.yaml",
    ("cluster.open-cluster-management.io/v1beta1", "Placement"): "cluster.open-cluster-management.io_placements.schema.yaml",
}
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def closed(schema):
    """The schema with every object that lists properties closed."""
    s = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(s)
    return s


def metadata_problems(meta):
    out = []
    if not isinstance(meta, dict):
        return ["metadata: not an object"]
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not SUBDOMAIN.match(name):
        out.append(f"metadata.name: {name!r} is not a DNS-1123 subdomain")
    ns = meta.get("namespace")
    if ns is not None and (not isinstance(ns, str) or len(ns) > 63 or not LABEL.match(ns)):
        out.append(f"metadata.namespace: {ns!r} is not a DNS-1123 label")
    for field in ("labels", "annotations"):
        m = meta.get(field, {})
        if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in m.items()):
            out.append(f"metadata.{field}: not a map of strings")
            continue
        if field == "labels":
            for k, v in m.items():
                if len(v) > 63 or not LABEL_VALUE.match(v):
                    out.append(f"metadata.labels.{k}: {v!r} is not a label value")
    return out


def main(path):
    docs = [d for d in yaml.safe_load_all(Path(path).read_text()) if d is not None]
    problems = []
    cache = {}
    seen = {}
    for i, doc in enumerate(docs):
        where = f"document {i + 1}"
        if not isinstance(doc, dict):
            problems.append(f"{where}: not an object")
            continue
        key = (doc.get("apiVersion"), doc.get("kind"))
        if key not in SCHEMAS:
            problems.append(f"{where}: no schema kept for apiVersion {key[0]!r} kind {key[1]!r}")
            continue
        if key not in cache:
            schema = yaml.safe_load((HERE / SCHEMAS[key]).read_text())
            cache[key] = jsonschema.Draft7Validator(closed(schema))
        where = f"{where} ({key[1]} {doc.get('metadata', {}).get('name')!r})"
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        identity = (key, meta.get("namespace"), meta.get("name"))
        if identity in seen:
            problems.append(
                f"{where}: the same object as document {seen[identity] + 1} "
                f"({key[1]} {meta.get('namespace')}/{meta.get('name')}): applied, the later replaces the earlier"
            )
        else:
            seen[identity] = i
        for e in sorted(cache[key].iter_errors(doc), key=lambda e: list(e.path)):
            at = ".".join(str(p) for p in e.path) or "/"
            problems.append(f"{where}: {at}: {e.message}")
        problems.extend(f"{where}: {p}" for p in metadata_problems(doc.get("metadata")))
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok {len(docs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
