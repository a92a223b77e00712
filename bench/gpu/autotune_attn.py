"""Workload: one attention layer (QKV projection, SDPA, output projection)
under torch.compile(mode="max-autotune", dynamic=False): static shapes, CUDA
graphs on (max-autotune's default), Inductor's GEMM autotuning with Triton
template candidates. Several sequence lengths, each its own graph.

A fresh process; writes one JSON result: per-shape first-call and steady
times, Inductor's counters (fxgraph cache, select_algorithm precompiles and
benchmarks), and every file and directory it created in the cache view.
Usage: python3 autotune_attn.py --out result.json [--shapes 128,256,512]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

t0 = time.perf_counter()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

import_ms = (time.perf_counter() - t0) * 1000.0
D, H, BATCH = 1024, 16, 4


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, H, D // H).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        return x + self.proj(a.transpose(1, 2).reshape(B, T, D))


def call(fn, x):
    torch.compiler.cudagraph_mark_step_begin()
    return fn(x).clone()


def tree(dirs):
    """Every file and directory under the view's cache dirs (relative)."""
    out = set()
    for d in dirs.values():
        if not os.path.isdir(d):
            continue
        for root, dnames, fnames in os.walk(d):
            for n in dnames:
                out.add(os.path.relpath(os.path.join(root, n), os.path.dirname(d)) + "/")
            for n in fnames:
                out.add(os.path.relpath(os.path.join(root, n), os.path.dirname(d)))
    return out


def main():
    out_path = common.arg("--out")
    shapes = [int(x) for x in common.arg("--shapes", "128,256,512").split(",")]
    dirs = common.cache_dirs()
    before = tree(dirs)
    sync = torch.cuda.synchronize
    torch.manual_seed(0)
    m = Attn().to(device="cuda", dtype=torch.bfloat16).eval()
    compiled = torch.compile(m, mode="max-autotune", dynamic=False)
    xs = {t: torch.randn(BATCH, t, D, device="cuda", dtype=torch.bfloat16) for t in shapes}
    sync()
    res = {"workload": "autotune_attn", "import_ms": import_ms, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0), "shapes": []}
    t_ready = time.perf_counter()
    err = None
    try:
        with torch.no_grad():
            for t in shapes:
                # CUDA graphs reuse their output buffers: each call is a new
                # step, and the output is cloned before the next one.
                ms, out = common.timed(lambda: call(compiled, xs[t]), sync)
                steady = common.steady_ms(lambda: call(compiled, xs[t]), sync, n=20)
                ref = m(xs[t])
                rel = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
                res["shapes"].append({"seq": t, "first_ms": ms, "steady_ms": steady,
                                      "rel_err_vs_eager": rel})
    except Exception as e:  # a read-only view: record, do not hide
        err = f"{type(e).__name__}: {e}"[:2000]
    common.finish_compiled(res, counters, sorted(tree(dirs) - before), t_ready, err, out_path)


if __name__ == "__main__":
    main()
