#!/usr/bin/env python3
"""Writes the real Triton entry core/runtime_miss_test.cc reads.

Compiles one kernel ahead of time for sm_90 on the CPU (Triton's front end
and the ptxas in its wheel; no GPU) into a scratch TRITON_CACHE_DIR, then
copies the kernel's metadata JSON, its TTIR source (add_kernel.source) and
the hash directory's name here.
Usage: PYTHONPATH=<site-packages with triton 3.6> make_triton_entry.py
(scripts/build-images.sh leaves one in build/images/jit-workload/site-packages).
"""

import os
import shutil
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
cache = tempfile.mkdtemp()
os.environ["TRITON_CACHE_DIR"] = cache

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


sig = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
triton.compile(ASTSource(add_kernel, sig, {"BLOCK": 1024}), target=GPUTarget("cuda", 90, 32))
(hash_dir,) = os.listdir(cache)
entry = os.path.join(cache, hash_dir)
# Both name files by absolute paths of this machine: keep them relative.
site = os.path.dirname(os.path.dirname(os.path.abspath(triton.__file__)))
with open(os.path.join(entry, "add_kernel.json")) as f:
    meta = f.read().replace(site, "site-packages")
with open(os.path.join(here, "triton_metadata.json"), "w") as f:
    f.write(meta)
with open(os.path.join(entry, "add_kernel.source")) as f:
    source = f.read().replace(os.path.abspath(__file__), os.path.basename(__file__))
with open(os.path.join(here, "triton_source.mlir"), "w") as f:
    f.write(source)
with open(os.path.join(here, "triton_hash.txt"), "w") as f:
    f.write(hash_dir + "\n")
print("triton", triton.__version__, "entry", hash_dir, sorted(os.listdir(os.path.join(cache, hash_dir))), file=sys.stderr)
shutil.rmtree(cache)
