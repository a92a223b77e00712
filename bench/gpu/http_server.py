"""A small model server for bench/gpu/server_probe.sh: the attention layer of
autotune_attn.py under torch.compile(dynamic=False) behind an HTTP API, the
way a serving container compiles a graph per request shape.

  GET  /health            200 once the model is on the GPU
  POST /v1/completions    {"prompt": "..."}: the prompt's word count, rounded
                          up to a multiple of 64, is the sequence length; one
                          forward pass; replies {"seq", "ms", "compiled"}:
                          the call's wall time (synchronised) and how many
                          FX graphs Inductor compiled for it (a cache miss).

Cache paths come from the environment (TRITON_CACHE_DIR,
TORCHINDUCTOR_CACHE_DIR), as the webhook and the warmup pod set them.
Usage: python3 http_server.py --port 18000
"""
import http.server
import json
import sys
import time

import torch
from torch._dynamo.utils import counters

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from autotune_attn import BATCH, D, Attn  # noqa: E402


def main(argv):
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 18000
    torch.manual_seed(0)
    model = torch.compile(Attn().cuda().half().eval(), dynamic=False)

    class Handler(http.server.BaseHTTPRequestHandler):
        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.reply(200 if self.path == "/health" else 404, {"status": "ok"})

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            try:
                words = len(str(json.loads(self.rfile.read(n) or b"{}").get("prompt", "")).split())
                seq = max(64, (words + 63) // 64 * 64)
                before = counters["inductor"]["fxgraph_cache_miss"]
                x = torch.randn(BATCH, seq, D, device="cuda", dtype=torch.half)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                with torch.no_grad():
                    model(x)
                torch.cuda.synchronize()
                ms = (time.perf_counter() - t0) * 1000.0
                compiled = counters["inductor"]["fxgraph_cache_miss"] - before
            except Exception as e:  # say why, as a server would
                self.reply(500, {"error": f"{type(e).__name__}: {e}"})
                return
            out = {"seq": seq, "ms": round(ms, 1), "compiled": compiled}
            print(json.dumps(out), flush=True)
            self.reply(200, out)

        def log_message(self, *a):
            pass

    print(json.dumps({"event": "listening", "port": port}), flush=True)
    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main(sys.argv)
