"""A GPU-free stand-in for the workloads, to test run_all.sh's plumbing
(KC_BENCH_FAKE=1): writes Triton-shaped entries (random "cubin", metadata
with target.arch 90, a __grp__ file with absolute view paths) into
$TRITON_CACHE_DIR when they are missing, and counts what it added.
Usage: fake_workload.py NAME --out result.json"""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    dirs = common.cache_dirs()
    before = common.snapshot(dirs)
    tc = os.environ["TRITON_CACHE_DIR"]
    for i in range(3):
        h = hashlib.sha256(b"k%d" % i).hexdigest()[:20].upper()
        d = os.path.join(tc, h)
        if os.path.exists(os.path.join(d, "__grp__k.json")):
            continue
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "k.cubin"), "wb").write(os.urandom(2048))
        json.dump({"name": "k", "target": {"backend": "cuda", "arch": 90, "warp_size": 32}},
                  open(os.path.join(d, "k.json"), "w"))
        json.dump({"child_paths": {n: os.path.join(tc, h, n) for n in ("k.cubin", "k.json")}},
                  open(os.path.join(d, "__grp__k.json"), "w"))
    ind = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    os.makedirs(os.path.join(ind, "fx"), exist_ok=True)
    p = os.path.join(ind, "fx", "graph.py")
    if not os.path.exists(p):
        open(p, "w").write("# compiled graph\n")
    new, changed = common.diff(before, common.snapshot(dirs))
    common.write_result({"workload": "fake-" + sys.argv[1], "compiled_files_new": len(new),
                         "compiled_files_changed": len(changed)}, common.arg("--out"))


if __name__ == "__main__":
    main()
