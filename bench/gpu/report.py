"""Renders the markdown tables of docs/benchmarks.md from run_all.sh's
results.json: python3 bench/gpu/report.py results.json"""
import json
import sys


def f(x, nd=0):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return str(x)


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def main():
    S = json.load(open(sys.argv[1]))["summary"]
    t, i = S.get("triton", {}), S.get("inductor", {})
    print("### Triton kernel family (24 launches: 4 kernels x 3 shapes x 2 dtypes; one autotuned, 8 configs)\n")
    print("| run | first launch in process (ms) | new shape, first call, median (ms) | "
          "new shape overhead, median (ms) | autotuned kernel, first pass (ms) | "
          "all 24 launches, first pass (ms) | process wall (ms) | new cache files | process start to first launch done (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in ("warmup", "cold", "shared", "copy"):
        r = t.get(m)
        if r:
            print(f"| {m} | {f(r['first_launch_ms'])} | {f(r['new_shape_first_ms_median'], 2)} | "
                  f"{f(r['new_shape_overhead_ms_median'], 2)} | {f(r['autotuned_first_pass_ms'])} | "
                  f"{f(r['first_pass_ms'])} | {f(r['process_wall_ms'])} | {r['compiled_files_new']} | {f(r.get('ttfb_ms'))} |")
    r = t.get("shared")
    if r:
        print(f"| steady | | {f(r['steady_ms_median'], 3)} (steady call) | | | | | |")
    for m in ("cold4", "warm4"):
        r = t.get(m)
        if r:
            print(f"| {m} (4 processes at once) | | | | | total overhead, max of 4: "
                  f"{f(r['new_shape_overhead_ms_total_max'])} | {f(r['process_wall_ms_max'])} (max) | "
                  f"{r['compiled_files_new_total']} |")
    print("\n### torch.compile, 4 transformer blocks, buckets seq 128/256/512 (batch 4, bf16)\n")
    print("| run | first batch (ms) | first batch overhead (ms) | other buckets, first call (ms) | "
          "steady step (ms) | all buckets first pass (ms) | process wall (ms) | "
          "fxgraph hit/miss | new cache files | process start to first batch done (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in ("warmup", "cold", "shared", "copy", "copy-ct1"):
        r = i.get(m)
        if r:
            print(f"| {m} | {f(r['first_batch_ms'])} | {f(r['first_batch_overhead_ms'])} | "
                  f"{' / '.join(f(x) for x in r['bucket_first_ms'][1:])} | "
                  f"{' / '.join(f(x, 2) for x in r['bucket_steady_ms'])} | "
                  f"{f(r['all_buckets_first_pass_ms'])} | {f(r['process_wall_ms'])} | "
                  f"{r['fxgraph_cache_hit']}/{r['fxgraph_cache_miss']} | {r['compiled_files_new']} | {f(r.get('ttfb_ms'))} |")
    for m in ("cold4", "warm4"):
        r = i.get(m)
        if r:
            print(f"| {m} (4 at once) | | max {f(r['first_batch_overhead_ms_max'])}, median "
                  f"{f(r['first_batch_overhead_ms_median'])} | | | | {f(r['process_wall_ms_max'])} (max) | | "
                  f"{r['compiled_files_new_total']} |")
    a = S.get("aoti_runs", {})
    if a:
        print("\n### AOTInductor package through kc-aoti-check (libtorch AOTIModelPackageLoader)\n")
        print("| run | load (ms) | prime call (ms) | first call (ms) | second call (ms) | steady (ms) | first / steady |")
        print("|---|---|---|---|---|---|---|")
        for k, r in a.items():
            print(f"| {k} | {f(r['load_ms'])} | {f(r.get('prime_ms'), 1)} | {f(r['first_run_ms'], 1)} | "
                  f"{f(r.get('second_run_ms'), 2)} | {f(r['steady_run_ms'], 3)} | "
                  f"{f(r['first_run_ms'] / r['steady_run_ms'], 1)}x |")
        b = S.get("aoti", {}).get("build")
        if b:
            print(f"\nBuilding the package (the cold path): export {f(b.get('export_ms'))} ms, "
                  f"AOTInductor compile {f(b.get('compile_ms'))} ms, {f(b.get('bytes'))} bytes.")
    iw = S.get("initwarm", {})
    if iw:
        print("\n### initwarm steps\n")
        print("| step | rc | wall (ms) | result |")
        print("|---|---|---|---|")
        for k, r in iw.items():
            if k.startswith("ladder-"):
                continue
            what = r.get("reason") or r.get("finding") or r.get("stderr") or ""
            extra = ", ".join(f"{x}={r[x]}" for x in ("files", "bytes", "cubins_loaded", "passed")
                              if x in r)
            print(f"| {k} | {r['rc']} | {f(r['wall_ms'], 1)} | {extra} {json.dumps(what)[:200] if what else ''} |")
        print("\n### Validation ladder on real bad caches\n")
        print("| case | exit | levels passed | quarantined | first finding |")
        print("|---|---|---|---|---|")
        for k, r in iw.items():
            if not k.startswith("ladder-"):
                continue
            why = r.get("reason") or r.get("finding") or r.get("stderr") or r.get("error") or ""
            if isinstance(why, list):
                why = why[0] if why else ""
            if isinstance(why, dict):
                why = json.dumps(why)
            print(f"| {k[7:]} | {r['rc']} | {r.get('passed', '-')} | "
                  f"{'yes' if r.get('quarantined_to') else 'no'} | {str(why)[:300]} |")
    g = S.get("goals", {})
    if g:
        print("\n### Goals\n")
        for k, v in g.items():
            print(f"- {k}: {f(v, 4) if isinstance(v, float) else v}")
    p = S.get("probe_vs_nvidia_smi")
    if p:
        print(f"\n### Probe vs nvidia-smi\n\nnvidia-smi: {p['nvidia_smi']}  \n"
              f"initwarm probe: {p['probe']}  \nagree: {p['agree']}")


if __name__ == "__main__":
    main()
