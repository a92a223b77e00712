#!/usr/bin/env python3
"""jit-workload: a CPU-only stand-in for a GPU model server's first call.

  workload.py warmup   compile every kernel in kernels.KERNELS into
                       TRITON_CACHE_DIR (the warmup Job, before the seal)
  workload.py serve    the same compiles as a server's first call; print one
                       JSON line, then sleep as a server would
  workload.py once     like serve without the sleep

Two switches stand in for what makes one warmup process not enough
(KernelCache's convergence passes, docs/user-guide.md):
  JIT_LATE_KERNEL=1     serve/once also compile kernels.LATE; warmup compiles
                        it only on its second run in this container (a run
                        counter in $JIT_STATE, default /tmp/jit-workload-runs)
  JIT_NOISY_AUTOTUNE=1  warmup also compiles add_kernel at another num_warps
                        on every run (an autotuner that never settles)

The JSON line: {"mode", "first_call_s", "kernels", "hits", "misses",
"new_files", "cache_dir", "target", "run"}. A kernel is a miss when compiling it
wrote new files into the cache dir (Triton writes only on a miss), a hit
otherwise; new_files counts every file the call added. Exit status 1 when
a compile fails (the error is printed).
"""

import json
import os
import sys
import time


def cache_files(root):
    out = set()
    for d, _, files in os.walk(root):
        out.update(os.path.join(d, f) for f in files)
    return out


def next_run():
    """This process's run number in this container (1 for the first)."""
    state = os.environ.get("JIT_STATE", "/tmp/jit-workload-runs")
    try:
        with open(state) as f:
            run = int(f.read().strip() or 0) + 1
    except (OSError, ValueError):
        run = 1
    with open(state, "w") as f:
        f.write(str(run))
    return run


def plan(mode, run):
    """(name, kernel, signature, constexprs, options) this process compiles."""
    import kernels

    out = [k + ({},) for k in kernels.KERNELS]
    if os.environ.get("JIT_LATE_KERNEL") == "1" and (mode != "warmup" or run >= 2):
        out.append(kernels.LATE + ({},))
    if os.environ.get("JIT_NOISY_AUTOTUNE") == "1" and mode == "warmup":
        warps = kernels.NOISY_WARPS[(run - 1) % len(kernels.NOISY_WARPS)]
        out.append(kernels.KERNELS[0] + ({"num_warps": warps},))
    return out


def compile_all(cache_dir, todo):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", 90, 32)
    hits = misses = 0
    start = cache_files(cache_dir)
    t0 = time.monotonic()
    for name, fn, sig, consts, options in todo:
        before = cache_files(cache_dir)
        triton.compile(ASTSource(fn, sig, consts), target=target, options=options or None)
        if cache_files(cache_dir) - before:
            misses += 1
        else:
            hits += 1
    elapsed = time.monotonic() - t0
    return {"first_call_s": round(elapsed, 3), "kernels": len(todo), "hits": hits,
            "misses": misses, "new_files": len(cache_files(cache_dir) - start),
            "cache_dir": cache_dir, "target": "cuda:90", "triton": triton.__version__}


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode not in ("warmup", "serve", "once"):
        print("usage: workload.py warmup|serve|once", file=sys.stderr)
        return 2
    cache_dir = os.environ.get("TRITON_CACHE_DIR", "")
    if not cache_dir:
        print("workload.py: TRITON_CACHE_DIR is not set", file=sys.stderr)
        return 2
    if mode == "warmup":
        os.makedirs(cache_dir, exist_ok=True)
    run = next_run()
    try:
        result = compile_all(cache_dir, plan(mode, run))
    except Exception as e:  # a compile error or an unwritable cache: say which
        print(json.dumps({"mode": mode, "error": f"{type(e).__name__}: {e}"}), flush=True)
        return 1
    result["mode"] = mode
    result["run"] = run
    print(json.dumps(result, sort_keys=True), flush=True)
    if mode == "serve":
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
