"""Workload (c), warmup side: export the 4-block stack at one shape and
build an AOTInductor package (.pt2) into the cache view.

Usage: python3 aoti_build.py --out <view>/inductor/aoti/model.pt2 [--seq 256]
The package's metadata carries "kc.inputs" (dtype:dims) so kc-aoti-check can
make inputs without being told.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import torch  # noqa: E402

import model as kcmodel  # noqa: E402

BATCH = 4


def main():
    out = common.arg("--out")
    seq = int(common.arg("--seq", "256"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    m = kcmodel.build()
    x = torch.randn(BATCH, seq, kcmodel.D_MODEL, device="cuda", dtype=torch.bfloat16)
    spec = f"bfloat16:{BATCH}x{seq}x{kcmodel.D_MODEL}"
    t = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(m, (x,))
    export_ms = (time.perf_counter() - t) * 1000.0
    t = time.perf_counter()
    try:
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=out,
            inductor_configs={"aot_inductor.metadata": {"kc.inputs": spec}})
        meta = True
    except Exception as e:  # older/newer config spelling: build without metadata
        print("metadata not embedded:", repr(e)[:200], file=sys.stderr)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=out)
        meta = False
    compile_ms = (time.perf_counter() - t) * 1000.0
    result = {"workload": "aoti_build", "package": path, "inputs": spec,
              "metadata_embedded": meta, "export_ms": export_ms,
              "compile_ms": compile_ms, "bytes": os.path.getsize(path)}
    # Written before anything else runs: in phase 1 this process crashed
    # (SIGSEGV) after the package was complete.
    common.write_result(result, common.arg("--result"))
    if "--py-check" in sys.argv:
        runner = torch._inductor.aoti_load_package(path)
        with torch.no_grad():
            got = runner(x)
            ref = m(x)
        got = got[0] if isinstance(got, (list, tuple)) else got
        result["rel_err_vs_eager"] = (
            (got.float() - ref.float()).norm() / ref.float().norm()).item()
        common.write_result(result, common.arg("--result"))
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown


if __name__ == "__main__":
    import faulthandler
    faulthandler.enable()
    main()
