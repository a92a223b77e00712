"""Collects bench/gpu results (one JSON per process) into one object and the
ratios docs/benchmarks.md reports. Usage: summarize.py RESULTS_DIR [--table]"""
import glob
import json
import os
import statistics
import sys


def load(d):
    out = {}
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        try:
            out[os.path.basename(p)[:-5]] = json.load(open(p))
        except Exception as e:  # a partial file from a killed process
            out[os.path.basename(p)[:-5]] = {"error": repr(e)}
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def triton_metrics(r):
    if "new_shape_first_ms" not in r:
        return None
    over = [f - s for f, s in zip(r["new_shape_first_ms"], r["new_shape_steady_ms"])]
    return {"first_launch_ms": r["first_launch_ms"],
            "new_shape_first_ms_median": r["new_shape_first_ms_median"],
            "new_shape_overhead_ms_median": med(over),
            "new_shape_overhead_ms_total": sum(over),
            "steady_ms_median": r["new_shape_steady_ms_median"],
            "autotuned_first_pass_ms": r["autotuned_first_pass_ms"],
            "first_pass_ms": r["first_pass_ms"],
            "process_wall_ms": r["process_wall_ms"],
            "ttfb_ms": r.get("ttfb_ms"),
            "compiled_files_new": r["compiled_files_new"]}


def inductor_metrics(r):
    if "buckets" not in r:
        return None
    b = r["buckets"]
    return {"first_batch_ms": b[0]["first_ms"],
            "first_batch_overhead_ms": b[0]["first_ms"] - b[0]["steady_ms"],
            "bucket_first_ms": [x["first_ms"] for x in b],
            "bucket_steady_ms": [x["steady_ms"] for x in b],
            "all_buckets_first_pass_ms": r["all_buckets_first_pass_ms"],
            "process_wall_ms": r["process_wall_ms"],
            "ttfb_ms": r.get("ttfb_ms"),
            "setup_before_first_call_ms": r.get("setup_before_first_call_ms"),
            "compile_times": r.get("compile_times"),
            "fxgraph_cache_hit": r["fxgraph_cache_hit"],
            "fxgraph_cache_miss": r["fxgraph_cache_miss"],
            "compiled_files_new": r["compiled_files_new"]}


def four(res, prefix, fn, key):
    xs = [fn(res[k]) for k in res if k.startswith(prefix + "-") and fn(res[k])]
    if not xs:
        return None
    return {"n": len(xs), key + "_max": max(x[key] for x in xs),
            key + "_median": med([x[key] for x in xs]),
            "process_wall_ms_max": max(x["process_wall_ms"] for x in xs),
            "compiled_files_new_total": sum(x["compiled_files_new"] for x in xs)}


def main():
    d = sys.argv[1]
    res = load(d)
    s = {"raw": res, "summary": {}}
    S = s["summary"]
    for w, fn, key in (("triton", triton_metrics, "new_shape_overhead_ms_total"),
                       ("inductor", inductor_metrics, "first_batch_overhead_ms")):
        S[w] = {}
        for mode in ("warmup", "cold", "shared", "copy", "copy-ct1"):
            r = res.get(f"{w}-{mode}")
            if r and fn(r):
                S[w][mode] = fn(r)
        for mode in ("cold4", "warm4"):
            f = four(res, f"{w}-{mode}", fn, key)
            if f:
                S[w][mode] = f
    t = S.get("triton", {})
    if "cold" in t:
        c = t["cold"]["new_shape_overhead_ms_median"]
        for m in ("shared", "copy"):
            if m in t:
                t[m]["new_shape_overhead_cut"] = 1 - t[m]["new_shape_overhead_ms_median"] / c
                t[m]["first_pass_cut"] = 1 - t[m]["first_pass_ms"] / t["cold"]["first_pass_ms"]
    i = S.get("inductor", {})
    if "cold" in i:
        c = i["cold"]["first_batch_overhead_ms"]
        for m in ("shared", "copy", "copy-ct1"):
            if m in i:
                i[m]["first_batch_overhead_cut"] = 1 - i[m]["first_batch_overhead_ms"] / c
    runs = [res[k] for k in sorted(res) if k.startswith("aoti-run-") and res[k].get("ok")]
    if runs:
        S["aoti"] = {"load_ms": [r["load_ms"] for r in runs],
                     "first_run_ms": [r["first_run_ms"] for r in runs],
                     "steady_run_ms": [r["steady_run_ms"] for r in runs],
                     "first_over_steady": [r["first_run_ms"] / r["steady_run_ms"] for r in runs]}
        if "aoti-build" in res:
            S["aoti"]["build"] = {k: res["aoti-build"].get(k) for k in
                                  ("export_ms", "compile_ms", "bytes", "rel_err_vs_eager")}
    iw = {}
    for k in sorted(res):
        if not k.startswith("initwarm-"):
            continue
        r = res[k]
        j = r.get("json") or {}
        e = {"rc": r.get("rc"), "wall_ms": round(r.get("wall_ms", 0), 1)}
        if isinstance(j, dict):
            for key in ("ok", "passed", "finding", "bytes", "files", "cubins_loaded", "kernels",
                        "level", "error", "load_ms", "first_run_ms", "steady_run_ms",
                        "fingerprint", "durations", "notes"):
                if key in j:
                    e[key] = j[key]
        if r.get("rc") and not j:
            e["stderr"] = (r.get("stderr_tail") or "").strip().splitlines()[-1:] or ""
        if "quarantined_to" in r:
            e["quarantined_to"] = r["quarantined_to"]
            e["reason"] = (r.get("reason_file") or "").splitlines()[:1]
        iw[k[len("initwarm-"):]] = e
    S["initwarm"] = iw
    if "probe-compare" in res:
        S["probe_vs_nvidia_smi"] = res["probe-compare"]
    # Goal: wait's validation time <= 5% of the compile time it saves.
    g = S.setdefault("goals", {})
    for w, key in (("triton", "first_pass_ms"), ("inductor", "all_buckets_first_pass_ms")):
        ws = S.get(w, {})
        if "cold" in ws and "shared" in ws:
            saved = ws["cold"]["process_wall_ms"] - ws["shared"]["process_wall_ms"]
            for mode in ("shared", "copy"):
                wt = iw.get(f"wait-{mode}-{w}", {}).get("wall_ms")
                if wt is not None and saved > 0:
                    g[f"{w}_wait_{mode}_over_saved"] = wt / saved
            g[f"{w}_saved_per_process_ms"] = saved
    t = S.get("triton", {})
    for m in ("shared", "copy"):
        if "new_shape_overhead_cut" in t.get(m, {}):
            g[f"triton_new_shape_overhead_cut_{m}"] = t[m]["new_shape_overhead_cut"]
    i = S.get("inductor", {})
    for m in ("shared", "copy", "copy-ct1"):
        if "first_batch_overhead_cut" in i.get(m, {}):
            g[f"inductor_first_batch_overhead_cut_{m}"] = i[m]["first_batch_overhead_cut"]
    for name in ("aoti-run-1", "aoti-run-2", "aoti-prime", "aoti-eager"):
        r = res.get(name)
        if r and r.get("ok"):
            g[f"{name}_first_over_steady"] = r["first_run_ms"] / r["steady_run_ms"]
            S.setdefault("aoti_runs", {})[name] = {
                k: r.get(k) for k in ("load_ms", "prime_ms", "first_run_ms", "second_run_ms",
                                      "steady_run_ms")}
    if "--table" in sys.argv:
        print(json.dumps(S, indent=1, sort_keys=True, default=str)[:12000])
    else:
        print(json.dumps(s, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
