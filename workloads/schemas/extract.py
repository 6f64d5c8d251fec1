#!/usr/bin/env python3
"""Derives the field lists lahar checks manifests against from the projects' own
CustomResourceDefinitions (docs/manifests.md, "Unknown fields").

Usage: extract.py OUT.json SOURCES.json [--onto EXISTING.json]
With --onto, the kinds and sources of an existing output are kept and the CRDs of
SOURCES.json are added to them (a kind they both list takes the new tree), so one
project's CRD can be added without checking out every other repository again.
SOURCES.json lists, per CRD, the repository, commit, path and the local file to
read (a checkout of that commit). The output holds, per `apiVersion kind`, a tree of
the field names the kind's openAPIV3Schema allows:
  - a map of field name -> subtree for an object with `properties`;
  - "*" where anything goes (x-kubernetes-preserve-unknown-fields, maps with
    free keys such as labels or resource requests, a top-level `status`);
  - 0 for a scalar (nothing below it is checked).
Lists are transparent: a list's subtree is its items'. Subtrees that repeat (the
PodSpec of every pod template) are stored once under "defs" and referenced as
{"$ref": "dN"}. `metadata` is Kubernetes' ObjectMeta, which CRDs leave untyped;
`v1 Pod` is the PodTemplateSpec of the Volcano Job CRD with `apiVersion`, `kind`
and a free `status`; `scheduling.k8s.io/v1 PriorityClass`, the `apps/v1` kinds
and `batch/v1` Job and CronJob are listed from the Kubernetes API reference
(they have no CRD).
"""
import hashlib
import json
import sys

import yaml

# Kubernetes ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1, ObjectMeta).
OBJECT_META = {
    "name": 0, "generateName": 0, "namespace": 0, "selfLink": 0, "uid": 0,
    "resourceVersion": 0, "generation": 0, "creationTimestamp": 0,
    "deletionTimestamp": 0, "deletionGracePeriodSeconds": 0,
    "labels": "*", "annotations": "*", "finalizers": 0, "managedFields": "*",
    "ownerReferences": {"apiVersion": 0, "kind": 0, "name": 0, "uid": 0,
                        "controller": 0, "blockOwnerDeletion": 0},
}

# scheduling.k8s.io/v1 PriorityClass (Kubernetes API reference).
PRIORITY_CLASS = {
    "apiVersion": 0, "kind": 0, "metadata": OBJECT_META, "value": 0,
    "globalDefault": 0, "description": 0, "preemptionPolicy": 0,
}


# apps/v1 Deployment, ReplicaSet and StatefulSet (Kubernetes API reference, v1.33):
# their spec beside the pod template, which is the PodTemplateSpec every CRD
# above embeds.
LABEL_SELECTOR = {"matchLabels": "*", "matchExpressions": {"key": 0, "operator": 0, "values": 0}}
APPS_SPECS = {
    "Deployment": {
        "replicas": 0, "selector": LABEL_SELECTOR, "minReadySeconds": 0,
        "revisionHistoryLimit": 0, "paused": 0, "progressDeadlineSeconds": 0,
        "strategy": {"type": 0, "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
    },
    "ReplicaSet": {"replicas": 0, "selector": LABEL_SELECTOR, "minReadySeconds": 0},
    "StatefulSet": {
        "replicas": 0, "selector": LABEL_SELECTOR, "minReadySeconds": 0,
        "revisionHistoryLimit": 0, "serviceName": 0, "podManagementPolicy": 0,
        "volumeClaimTemplates": "*",
        "updateStrategy": {"type": 0, "rollingUpdate": {"partition": 0, "maxUnavailable": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": 0, "whenScaled": 0},
        "ordinals": {"start": 0},
    },
}


# batch/v1 Job (Kubernetes API reference, v1.33): its spec beside the same pod
# template.
BATCH_JOB_SPEC = {
    "parallelism": 0, "completions": 0, "activeDeadlineSeconds": 0,
    "podFailurePolicy": {"rules": {
        "action": 0,
        "onExitCodes": {"containerName": 0, "operator": 0, "values": 0},
        "onPodConditions": {"type": 0, "status": 0},
    }},
    "successPolicy": {"rules": {"succeededIndexes": 0, "succeededCount": 0}},
    "backoffLimit": 0, "backoffLimitPerIndex": 0, "maxFailedIndexes": 0,
    "selector": LABEL_SELECTOR, "manualSelector": 0, "ttlSecondsAfterFinished": 0,
    "completionMode": 0, "suspend": 0, "podReplacementPolicy": 0, "managedBy": 0,
}


# batch/v1 CronJob (Kubernetes API reference, v1.33): its spec around a Job
# template (`jobTemplate`: ObjectMeta and a batch/v1 Job spec).
BATCH_CRON_JOB_SPEC = {
    "schedule": 0, "timeZone": 0, "startingDeadlineSeconds": 0,
    "concurrencyPolicy": 0, "suspend": 0,
    "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 0,
}


def tree(schema, top=False):
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return "*"
    t = schema.get("type")
    if t == "array":
        return tree(schema.get("items", {}))
    props = schema.get("properties")
    if props:
        out = {}
        for k, v in props.items():
            if k == "metadata" and v.get("type") == "object" and not v.get("properties"):
                out[k] = OBJECT_META
            elif top and k == "status":
                out[k] = "*"
            else:
                out[k] = tree(v)
        return out
    if t == "object" or "additionalProperties" in schema:
        return "*"
    return 0


def crd_trees(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    out = {}
    for crd in docs:
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for v in crd["spec"]["versions"]:
            schema = v["schema"]["openAPIV3Schema"]
            t = tree(schema, top=True)
            t.setdefault("metadata", OBJECT_META)
            out[f"{group}/{v['name']} {kind}"] = t
    return out


def dedupe(kinds):
    """Moves subtrees seen more than once (and larger than 2 KB) into defs."""
    seen = {}

    def count(t):
        if isinstance(t, dict):
            s = json.dumps(t, sort_keys=True)
            seen[s] = seen.get(s, 0) + 1
            for v in t.values():
                count(v)

    for t in kinds.values():
        count(t)
    defs, names = {}, {}
    big = sorted((s for s, n in seen.items() if n > 1 and len(s) > 2048), key=len, reverse=True)
    for s in big:
        names[s] = "d" + hashlib.sha256(s.encode()).hexdigest()[:10]

    def rewrite(t, root=False):
        if not isinstance(t, dict):
            return t
        s = json.dumps(t, sort_keys=True)
        if not root and s in names:
            n = names[s]
            if n not in defs:
                defs[n] = None
                defs[n] = {k: rewrite(v) for k, v in t.items()}
            return {"$ref": n}
        return {k: rewrite(v) for k, v in t.items()}

    out = {k: rewrite(t, root=True) for k, t in kinds.items()}
    return out, dict(sorted(defs.items()))


def expand(t, defs):
    """The tree `t` of an existing output with its {"$ref": id} inlined."""
    if isinstance(t, dict):
        if "$ref" in t:
            return expand(defs[t["$ref"]], defs)
        return {k: expand(v, defs) for k, v in t.items()}
    return t


def main():
    out_path, sources_path = sys.argv[1], sys.argv[2]
    with open(sources_path) as f:
        sources = json.load(f)
    if len(sys.argv) == 5 and sys.argv[3] == "--onto":
        with open(sys.argv[4]) as f:
            old = json.load(f)
        kept = {k: expand(t, old["defs"]) for k, t in old["kinds"].items()}
        added = {}
        for s in sources:
            added.update(crd_trees(s["file"]))
        kinds = dict(kept, **added)
        sources = old["sources"] + sources
        write(out_path, sources, kinds)
        return
    kinds = {}
    for s in sources:
        kinds.update(crd_trees(s["file"]))
    # v1 Pod: the pod template of the Volcano Job CRD.
    template = kinds["batch.volcano.sh/v1alpha1 Job"]["spec"]["tasks"]["template"]
    kinds["v1 Pod"] = {"apiVersion": 0, "kind": 0, "metadata": OBJECT_META,
                       "spec": template["spec"], "status": "*"}
    kinds["scheduling.k8s.io/v1 PriorityClass"] = PRIORITY_CLASS
    for kind, spec in APPS_SPECS.items():
        spec = dict(spec, template={"metadata": OBJECT_META, "spec": template["spec"]})
        kinds[f"apps/v1 {kind}"] = {"apiVersion": 0, "kind": 0, "metadata": OBJECT_META,
                                    "spec": spec, "status": "*"}
    spec = dict(BATCH_JOB_SPEC, template={"metadata": OBJECT_META, "spec": template["spec"]})
    kinds["batch/v1 Job"] = {"apiVersion": 0, "kind": 0, "metadata": OBJECT_META, "spec": spec, "status": "*"}
    cron = dict(BATCH_CRON_JOB_SPEC, jobTemplate={"metadata": OBJECT_META, "spec": spec})
    kinds["batch/v1 CronJob"] = {"apiVersion": 0, "kind": 0, "metadata": OBJECT_META, "spec": cron, "status": "*"}
    write(out_path, sources, kinds)


def write(out_path, sources, kinds):
    for k, t in kinds.items():
        t.setdefault("apiVersion", 0)
        t.setdefault("kind", 0)
    kinds = dict(sorted(kinds.items()))
    kinds, defs = dedupe(kinds)
    doc = {
        "about": "Field names per apiVersion and kind, derived by workloads/schemas/extract.py from the CRDs listed in sources",
        "sources": [{k: s[k] for k in ("repo", "commit", "path", "license")} for s in sources],
        "kinds": kinds,
        "defs": defs,
    }
    with open(out_path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
