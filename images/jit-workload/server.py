#!/usr/bin/env python3
"""server.py: a CPU-only stand-in for a sharded model server (HTTP).

  server.py --port 8000 --ranks 2

Compiles at startup (BLOCK 1024 on every rank) before it listens, like a
server that compiles its graph before it accepts requests; then serves

  GET  /health           200 once listening
  POST /v1/completions   {"prompt": "...", "max_tokens": n}: the prompt's
                         length picks a shape (BLOCK = 16 x the next power
                         of two of its word count); every rank compiles its
                         own kernel for it (Triton, cuda:90, into
                         TRITON_CACHE_DIR) and records it in its own
                         directory VLLM_CACHE_ROOT/torch_compile_cache/
                         <config hash>/rank_<r>_0/block_<BLOCK>.json, as
                         vLLM's compile cache does. The config hash covers
                         the server's arguments and its TRITON_/VLLM_
                         environment (not the cache paths): another flag is
                         another directory, as in vLLM.

Each reply and each log line is JSON: {"block", "ranks", "compiled", "hits",
"ms"}; compiled counts kernels this request compiled (0 = all from the
cache).
"""

import hashlib
import http.server
import json
import os
import sys
import time

CACHE_PATH_VARS = {"TRITON_CACHE_DIR", "VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR",
                   "CUDA_CACHE_PATH", "TRITON_CACHE_AUTOTUNING", "CUDA_CACHE_MAXSIZE"}


def config_hash(argv):
    env = {k: v for k, v in os.environ.items()
           if (k.startswith("VLLM_") or k.startswith("TRITON_")) and k not in CACHE_PATH_VARS}
    blob = json.dumps({"argv": argv, "env": env}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def cache_files(root):
    out = set()
    for d, _, files in os.walk(root):
        out.update(os.path.join(d, f) for f in files)
    return out


class Model:
    def __init__(self, ranks, argv):
        self.ranks = ranks
        self.triton_dir = os.environ["TRITON_CACHE_DIR"]
        root = os.environ.get("VLLM_CACHE_ROOT", "/tmp/vllm")
        self.compile_dir = os.path.join(root, "torch_compile_cache", config_hash(argv))

    def run(self, block):
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        import kernels

        t0 = time.monotonic()
        compiled = hits = 0
        for rank in range(self.ranks):
            before = cache_files(self.triton_dir)
            k = triton.compile(ASTSource(kernels.rank_add_kernel, kernels.RANK_ADD_SIG,
                                         {"BLOCK": block, "RANK": rank}),
                               target=GPUTarget("cuda", 90, 32))
            rank_dir = os.path.join(self.compile_dir, f"rank_{rank}_0")
            record = os.path.join(rank_dir, f"block_{block}.json")
            fresh = bool(cache_files(self.triton_dir) - before) or not os.path.exists(record)
            if fresh:
                compiled += 1
                os.makedirs(rank_dir, exist_ok=True)
                tmp = record + ".tmp"
                with open(tmp, "w") as f:
                    json.dump({"block": block, "rank": rank, "triton_hash": k.hash}, f)
                os.rename(tmp, record)
            else:
                hits += 1
        return {"block": block, "ranks": self.ranks, "compiled": compiled, "hits": hits,
                "ms": round((time.monotonic() - t0) * 1000)}


def block_for(prompt):
    words = max(1, len(prompt.split()))
    return 16 * (1 << (words - 1).bit_length())


def main(argv):
    port, ranks = 8000, 1
    args = argv[1:]
    for i, a in enumerate(args):
        if a == "--port":
            port = int(args[i + 1])
        if a == "--ranks":
            ranks = int(args[i + 1])
    if not os.environ.get("TRITON_CACHE_DIR"):
        print("server.py: TRITON_CACHE_DIR is not set", file=sys.stderr)
        return 2
    model = Model(ranks, args)
    startup = model.run(1024)
    print(json.dumps({"event": "startup", **startup}), flush=True)

    class Handler(http.server.BaseHTTPRequestHandler):
        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                self.reply(200, {"status": "ok"})
            else:
                self.reply(404, {"error": "not found"})

        def do_POST(self):
            if self.path != "/v1/completions":
                self.reply(404, {"error": "not found"})
                return
            n = int(self.headers.get("Content-Length", "0"))
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
                result = model.run(block_for(str(req.get("prompt", ""))))
            except Exception as e:  # a bad body or a failed compile: say which
                self.reply(500, {"error": f"{type(e).__name__}: {e}"})
                return
            print(json.dumps({"event": "request", **result}), flush=True)
            self.reply(200, result)

        def log_message(self, *a):
            pass

    http.server.HTTPServer(("0.0.0.0", port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
