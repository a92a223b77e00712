"""Summarises bench/gpu/converge_probe.sh: per sealed cache, the warmup's
runs (entries added, autotune variants, seconds) from the convergence record
the product wrote, then every pod gated on it: first-pass time, the ratio to
the delivery limit (the same process again on its own warm copy, measured
in the same run), and the entries it compiled after its gate (`initwarm
misses`). Usage: converge_summary.py RESULTS_DIR OUT_JSON
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(res, out):
    caches = {}
    for rec_path in sorted(glob.glob(os.path.join(res, "conv-*.json"))):
        name = os.path.basename(rec_path)[5:-5]
        rec = load(rec_path)
        caches[name] = {"record": rec}
    for p in sorted(glob.glob(os.path.join(res, "*.json"))):
        base = os.path.basename(p)[:-5]
        if base.startswith(("conv-", "misses-", "warm-")) or "-" not in base:
            continue
        kind, name = base.split("-", 1)
        r = load(p) or {}
        m = load(os.path.join(res, f"misses-{base}.json")) or {}
        pod = {"kind": kind, "first_pass_ms": r.get("first_pass_ms"), "error": r.get("error"),
               "misses": len(m.get("misses", [])) if m else None,
               "miss_details": [x.get("detail", "")[:100] for x in m.get("misses", [])][:8],
               "steady_ms": [s.get("steady_ms") for s in r.get("shapes", [])]}
        caches.setdefault(name, {}).setdefault("pods", []).append(pod)
    for name, c in caches.items():
        pods = c.get("pods", [])
        limit = next((p["first_pass_ms"] for p in pods if p["kind"] == "again"), None)
        for p in pods:
            if limit and p["first_pass_ms"]:
                p["vs_delivery_limit"] = round(p["first_pass_ms"] / limit, 2)
    json.dump(caches, open(out, "w"), indent=1)
    print(f"{'cache':14} {'runs: entries added (autotune) / seconds':60} {'converged':9}")
    for name, c in caches.items():
        rec = c.get("record")
        if rec:
            runs = ", ".join(f"{r['entriesAdded']}({r['autotuneEntries']})/{r['durationMs'] / 1000:.1f}s"
                             for r in rec["runs"])
            print(f"{name:14} {runs:60} {str(rec['converged']) + ' after ' + str(len(rec['runs']) - 1):9}")
        else:
            print(f"{name:14} {'one warmup process, no passes':60}")
    print(f"\n{'cache':14} {'pod':8} {'first pass ms':>13} {'x limit':>7} {'misses':>6}  steady ms / error")
    for name, c in caches.items():
        for p in c.get("pods", []):
            fp = p["first_pass_ms"]
            fp = "-" if fp is None else round(fp)
            print(f"{name:14} {p['kind']:8} {fp:>13} "
                  f"{p.get('vs_delivery_limit', '-'):>7} {p['misses'] if p['misses'] is not None else '-':>6}  "
                  f"{[round(s, 3) for s in p['steady_ms'] if s is not None]} {(p['error'] or '')[:60]}")
            for d in p["miss_details"]:
                print(f"{'':24}miss: {d}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
