"""Shared helpers for the GPU cold-start workloads (bench/gpu/).

Every workload runs as a fresh process, measures its own time to first batch
and steady step, counts what it had to compile, and writes one JSON result.
Times are wall-clock with torch.cuda.synchronize() around each call, so a
first call includes JIT compilation and module loading.
"""
import json
import os
import statistics
import sys
import time

T_PROCESS_START = time.perf_counter()


def cache_dirs():
    """The cache directories this process writes through (the view)."""
    out = {}
    for var in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH"):
        v = os.environ.get(var)
        if v:
            out[var] = v
    return out


def snapshot(dirs):
    """Set of (path, size, mtime_ns) for every file under the given dirs."""
    files = {}
    for d in dirs.values():
        if not os.path.isdir(d):
            continue
        for root, _, names in os.walk(d, followlinks=True):
            for n in names:
                p = os.path.join(root, n)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                files[p] = (st.st_size, st.st_mtime_ns)
    return files


def diff(before, after):
    new = sorted(p for p in after if p not in before)
    changed = sorted(p for p in after if p in before and after[p] != before[p])
    return new, changed


def timed(fn, sync):
    sync()
    t = time.perf_counter()
    r = fn()
    sync()
    return (time.perf_counter() - t) * 1000.0, r


def steady_ms(fn, sync, n=20):
    xs = []
    for _ in range(n):
        ms, _ = timed(fn, sync)
        xs.append(ms)
    return statistics.median(xs)


def write_result(result, path=None):
    result["process_wall_ms"] = (time.perf_counter() - T_PROCESS_START) * 1000.0
    result["pid"] = os.getpid()
    result["env"] = {k: v for k, v in os.environ.items()
                     if k.startswith(("TRITON_", "TORCHINDUCTOR_", "CUDA_CACHE", "KC_"))}
    text = json.dumps(result, indent=1, sort_keys=True)
    if path:
        with open(path, "w") as f:
            f.write(text)
    print(text if os.environ.get("KC_BENCH_VERBOSE") else
          json.dumps({k: result[k] for k in sorted(result) if not isinstance(result[k], (list, dict))}))
    sys.stdout.flush()


def arg(name, default=None):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def finish_compiled(res, counters, created, t_ready, err, out_path):
    """Completes and writes a torch.compile workload's result: its error,
    first-pass time since `t_ready`, Inductor's counters and what it created
    in the view; exits 3 after an error."""
    res["error"] = err
    res["first_pass_ms"] = (time.perf_counter() - t_ready) * 1000.0
    ind = counters["inductor"]
    res["inductor"] = {k: v for k, v in dict(ind).items()}
    res["fxgraph_cache_hit"] = ind.get("fxgraph_cache_hit", 0)
    res["fxgraph_cache_miss"] = ind.get("fxgraph_cache_miss", 0)
    res["created"] = created
    res["created_count"] = len(created)
    write_result(res, out_path)
    if err:
        sys.exit(3)
