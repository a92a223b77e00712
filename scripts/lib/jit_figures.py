#!/usr/bin/env python3
"""First-call figures of the JIT workload, cold vs warm (scripts/demo.sh,
tests/node/jit_cold_start_test.sh).

  jit_figures.py COLD WARM GATES JOB_S WARMUP_LINE [--json OUT]

COLD, WARM: lines "<pod> <workload JSON line>" (scripts/lib/jit_node.sh
jit_first_calls); GATES: `kubectl get pods -o json` of the warm pods;
JOB_S: the warmup Job's seconds; WARMUP_LINE: the warmup container's JSON
line. Prints the table; exits 1, naming each, when a cold pod did not miss
every kernel, a warm pod missed one or was not gated Warm, or warm is not
faster than cold. --json writes the figures for a summary.
"""
import datetime
import json
import sys


def rows(text):
    return [(l.split(" ", 1)[0], json.loads(l.split(" ", 1)[1])) for l in text.strip().splitlines()]


def ts(t):
    return datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")


def gate_of(pod):
    """(init container, outcome, waitedMs, run seconds) of a pod's gate."""
    st = pod["status"].get("initContainerStatuses", [])
    if not st:
        return None
    t = st[0]["state"].get("terminated", {})
    rep = json.loads(t.get("message") or "{}")
    run_s = (ts(t["finishedAt"]) - ts(t["startedAt"])).total_seconds() if t.get("finishedAt") else -1
    return (st[0]["name"], rep.get("outcome", "?"), rep.get("waitedMs", -1), run_s)


def main(argv):
    if len(argv) not in (6, 8):
        print(__doc__, file=sys.stderr)
        return 2
    cold, warm = rows(argv[1]), rows(argv[2])
    gates = {p["metadata"]["name"]: gate_of(p) for p in json.loads(argv[3])["items"]}
    job_s, w = argv[4], json.loads(argv[5]) if argv[5] else {}
    bad = []
    print(f"warmup Job: {job_s} s (its compile: {w.get('first_call_s', '?')} s, "
          f"{w.get('misses', '?')} misses)")
    print(f"{'pod':<34} {'mode':<5} {'first call s':>12} {'hits':>5} {'misses':>6} {'gate':>22}")
    for name, r in cold:
        print(f"{name:<34} {'cold':<5} {r['first_call_s']:>12.3f} {r['hits']:>5} {r['misses']:>6} {'-':>22}")
        if r["misses"] != r["kernels"]:
            bad.append(f"cold pod {name}: {r['misses']} misses of {r['kernels']}")
    for name, r in warm:
        g = gates.get(name)
        if g is None:
            bad.append(f"pod {name} has no init container: the webhook did not gate it")
            g = ("-", "-", -1, -1)
        gs = f"{g[1]} {g[2]} ms ({g[3]:.0f} s)"
        print(f"{name:<34} {'warm':<5} {r['first_call_s']:>12.3f} {r['hits']:>5} {r['misses']:>6} {gs:>22}")
        if r["misses"] != 0:
            bad.append(f"warm pod {name}: {r['misses']} misses, want 0")
        if g[1] != "Warm":
            bad.append(f"warm pod {name}: gate outcome {g[1]}, want Warm")
    cmin = min(r["first_call_s"] for _, r in cold)
    wmax = max(r["first_call_s"] for _, r in warm)
    print(f"slowest warm {wmax:.3f} s vs fastest cold {cmin:.3f} s: {cmin / max(wmax, 1e-3):.1f}x")
    if not wmax < cmin:
        bad.append(f"warm {wmax} s is not below cold {cmin} s")
    if len(argv) == 8 and argv[6] == "--json":
        with open(argv[7], "w") as f:
            json.dump({"job_s": job_s, "warmup": w, "cold": dict(cold), "warm": dict(warm),
                       "gates": {n: gates.get(n) for n, _ in warm}}, f)
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
