#!/usr/bin/env python3
"""jit-workload: a CPU-only stand-in for a GPU model server's first call.

  workload.py warmup   compile every kernel in kernels.KERNELS into
                       TRITON_CACHE_DIR (the warmup Job, before the seal)
  workload.py serve    the same compiles as a server's first call; print one
                       JSON line, then sleep as a server would
  workload.py once     like serve without the sleep

The JSON line: {"mode", "first_call_s", "kernels", "hits", "misses",
"new_files", "cache_dir", "target"}. A kernel is a miss when compiling it
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


def compile_all(cache_dir):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    import kernels

    target = GPUTarget("cuda", 90, 32)
    hits = misses = 0
    start = cache_files(cache_dir)
    t0 = time.monotonic()
    for name, fn, sig, consts in kernels.KERNELS:
        before = cache_files(cache_dir)
        triton.compile(ASTSource(fn, sig, consts), target=target)
        if cache_files(cache_dir) - before:
            misses += 1
        else:
            hits += 1
    elapsed = time.monotonic() - t0
    return {"first_call_s": round(elapsed, 3), "kernels": len(kernels.KERNELS), "hits": hits,
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
    try:
        result = compile_all(cache_dir)
    except Exception as e:  # a compile error or an unwritable cache: say which
        print(json.dumps({"mode": mode, "error": f"{type(e).__name__}: {e}"}), flush=True)
        return 1
    result["mode"] = mode
    print(json.dumps(result, sort_keys=True), flush=True)
    if mode == "serve":
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
