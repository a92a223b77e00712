"""Workload: a Hugging Face Llama (transformers' LlamaForCausalLM, random
weights from a small LlamaConfig: 4 layers, d_model 1024, 16 heads, bf16;
nothing is downloaded) under default torch.compile, static shapes, batch 1
at several prompt lengths: the forward pass of a prefill.

A fresh process; writes one JSON result like autotune_attn.py: per-length
first-call and steady times, Inductor's counters, and every file and
directory it created in the cache view.
Usage: python3 hf_llama.py --out result.json [--shapes 128,256]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

t0 = time.perf_counter()
import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

from autotune_attn import tree  # noqa: E402

import_ms = (time.perf_counter() - t0) * 1000.0


def main():
    out_path = common.arg("--out")
    shapes = [int(x) for x in common.arg("--shapes", "128,256").split(",")]
    dirs = common.cache_dirs()
    before = tree(dirs)
    sync = torch.cuda.synchronize
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                      num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16,
                      max_position_embeddings=2048)
    m = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
    compiled = torch.compile(m, dynamic=False)
    ids = {t: torch.randint(0, cfg.vocab_size, (1, t), device="cuda") for t in shapes}
    sync()
    res = {"workload": "hf_llama", "import_ms": import_ms, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(0), "shapes": []}
    t_ready = time.perf_counter()
    err = None
    try:
        with torch.no_grad():
            for t in shapes:
                fwd = lambda: compiled(input_ids=ids[t], use_cache=False).logits  # noqa: E731
                ms, out = common.timed(fwd, sync)
                steady = common.steady_ms(fwd, sync, n=10)
                ref = m(input_ids=ids[t], use_cache=False).logits
                rel = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
                res["shapes"].append({"seq": t, "first_ms": ms, "steady_ms": steady,
                                      "rel_err_vs_eager": rel})
    except Exception as e:  # record, do not hide
        err = f"{type(e).__name__}: {e}"[:2000]
    common.finish_compiled(res, counters, sorted(tree(dirs) - before), t_ready, err, out_path)


if __name__ == "__main__":
    main()
