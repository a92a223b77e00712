#!/usr/bin/env python3
"""The KernelCache CRD stays compatible with the previous release's.

Compares crds/kernelcache.kernelcache.io.yaml with the same file at the
previous release's commit (tests/upgrade/previous-release.env, read from the
repository's git history). Objects stored by the previous release must keep
their meaning after an upgrade, so for every version served before:
  - it is still served, and the storage version is the same;
  - every field of the old schema is still there, with the same type (no
    field renamed or removed: that needs a new API version and conversion);
  - a default stays the same; an enum keeps every old value; a minimum,
    maximum, maxLength or maxItems is never narrowed;
  - no field becomes required, and a new field is never required (a new
    field's default is the behaviour before it existed).
Usage: crd_compat_test.py <repo root>
"""
import os
import subprocess
import sys

import yaml

CRD = "crds/kernelcache.kernelcache.io.yaml"

# Bounds added where the previous release's schema had none, each no
# narrower than what that release's validation already refused, so no
# object it accepted falls outside: path -> (bound, least value, why).
BOUNDS_ALREADY_ENFORCED = {
    "v1alpha1.spec.warmup.podAnnotations[additionalProperties]": (
        "maxLength", 262144,
        "0.2.0 refused more than 256 KiB of podAnnotations in all (core/spec_validation.cc)"),
}


def previous(root):
    env = {}
    with open(os.path.join(root, "tests/upgrade/previous-release.env")) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.strip().split("=", 1)
                env[k] = v
    return env["KC_PREVIOUS_VERSION"], env["KC_PREVIOUS_COMMIT"]


def walk(old, new, path, problems):
    if new is None:
        problems.append(f"{path}: removed (or renamed); keep it, or add a new API version with a conversion")
        return
    if old.get("type") != new.get("type"):
        problems.append(f"{path}: type {old.get('type')} became {new.get('type')}")
    if "default" in old and old["default"] != new.get("default"):
        problems.append(f"{path}: default {old['default']!r} became {new.get('default')!r}")
    if "enum" in old and not set(old["enum"]) <= set(new.get("enum", old["enum"])):
        problems.append(f"{path}: enum lost {sorted(set(old['enum']) - set(new['enum']))}")
    for low in ("minimum", "minLength", "minItems", "minProperties"):
        if low in new and (low not in old or new[low] > old[low]):
            problems.append(f"{path}: {low} narrowed from {old.get(low)} to {new[low]}")
    for high in ("maximum", "maxLength", "maxItems", "maxProperties"):
        enforced = BOUNDS_ALREADY_ENFORCED.get(path)
        if high not in old and enforced and enforced[0] == high and new.get(high, 0) >= enforced[1]:
            continue
        if high in new and (high not in old or new[high] < old[high]):
            problems.append(f"{path}: {high} narrowed from {old.get(high)} to {new[high]}")
    newly = set(new.get("required", [])) - set(old.get("required", []))
    if newly:
        problems.append(f"{path}: {sorted(newly)} became required; a new or old field must stay optional")
    for k, v in old.get("properties", {}).items():
        walk(v, new.get("properties", {}).get(k), f"{path}.{k}", problems)
    for k in ("items", "additionalProperties"):
        if isinstance(old.get(k), dict):
            walk(old[k], new.get(k) if isinstance(new.get(k), dict) else None, f"{path}[{k}]", problems)


def check(old_crd, new_crd):
    problems = []
    new_versions = {v["name"]: v for v in new_crd["spec"]["versions"]}
    for v in old_crd["spec"]["versions"]:
        if not v.get("served"):
            continue
        nv = new_versions.get(v["name"])
        if nv is None or not nv.get("served"):
            problems.append(f"version {v['name']}: no longer served")
            continue
        if v.get("storage") and not nv.get("storage"):
            problems.append(f"version {v['name']}: no longer the storage version (needs a storage migration)")
        walk(v["schema"]["openAPIV3Schema"], nv["schema"]["openAPIV3Schema"], v["name"], problems)
    return problems


def self_test():
    """The rules catch what they must (on a copy of the current CRD)."""
    import copy
    base = yaml.safe_load(open(os.path.join(ROOT, CRD)))
    spec = lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    edits = {
        "removed field": lambda c: spec(c)["properties"].pop("image"),
        "changed default": lambda c: spec(c)["properties"]["warmup"]["properties"]["backoffLimit"].update(default=3),
        "new required field": lambda c: (spec(c)["properties"].update(newField={"type": "string"}),
                                         spec(c).setdefault("required", []).append("newField")),
        "narrowed maximum": lambda c: spec(c)["properties"]["warmup"]["properties"]["backoffLimit"].update(maximum=5),
        "type change": lambda c: spec(c)["properties"]["image"].update(type="integer"),
        "narrowed map value": lambda c: spec(c)["properties"]["warmup"]["properties"]["podAnnotations"][
            "additionalProperties"].update(maxLength=10),
    }
    bad = []
    for name, edit in edits.items():
        c = copy.deepcopy(base)
        edit(c)
        if not check(base, c):
            bad.append(f"self-test: '{name}' was not caught")
    if check(base, copy.deepcopy(base)):
        bad.append("self-test: the CRD is not compatible with itself")
    return bad


ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")


def main():
    version, commit = previous(ROOT)
    r = subprocess.run(["git", "-C", ROOT, "show", f"{commit}:{CRD}"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: the previous release {version} ({commit}) is not in this clone's history "
              f"(a shallow clone? fetch main's full history): {r.stderr.strip()}")
        return 1
    problems = self_test() + check(yaml.safe_load(r.stdout), yaml.safe_load(open(os.path.join(ROOT, CRD))))
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print(f"ok: the CRD keeps every field, default and bound of {version} ({commit[:7]}); "
              "no new required field")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
