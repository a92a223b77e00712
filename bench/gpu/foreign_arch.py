"""Makes a Triton cache entry compiled for another GPU architecture (sm_100,
Blackwell) on this sm_90 machine, as a cache copied from another node kind
would hold. Compiles one kernel of the family with Triton's own compiler
and its bundled ptxas for target cuda:100, into $TRITON_CACHE_DIR, and
prints {"dir": <kernel dir>, "cubin": <path>, "arch": 100} as JSON.
Usage: TRITON_CACHE_DIR=/tmp/x python3 foreign_arch.py [--arch 100]
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import triton_family as fam  # noqa: E402


def main():
    arch = int(common.arg("--arch", "100"))
    drv = triton.runtime.driver.active
    drv.get_current_target = lambda: GPUTarget("cuda", arch, 32)  # compile as if on sm_<arch>
    x = torch.randn(4, 96, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    fam.l2norm_fwd_kernel.warmup(x, y, 1e-6, D=96, BD=128, grid=(4,))
    cache = os.environ["TRITON_CACHE_DIR"]
    found = []
    for js in glob.glob(os.path.join(cache, "*", "l2norm_fwd_kernel.json")):
        meta = json.load(open(js))
        if meta.get("target", {}).get("arch") == arch:
            found.append({"dir": os.path.dirname(js), "arch": arch,
                          "cubin": js[:-5] + ".cubin"})
    if not found:
        print(json.dumps({"error": "no sm_%d entry made" % arch}))
        sys.exit(1)
    print(json.dumps(found[0]))


if __name__ == "__main__":
    main()
