#!/usr/bin/env python3
"""bench/faults/proxy.py: a fault-injecting HTTP proxy in front of kube-apiserver.

Python 3 standard library only. The operator under test talks plain HTTP to
the proxy on 127.0.0.1 (a kubeconfig whose server is http://127.0.0.1:PORT and
that carries no credentials); the proxy sends each request on over TLS with the
cluster's admin certificate (DIR/pki), one upstream connection per client
connection, so a watch stays one stream end to end. Responses are relayed as
they arrive (watch streams chunk by chunk).

What it injects, from a Faults object shared by every proxy (changed by the
campaign at run time):
  delay       every request waits uniform(lo, hi) seconds before it is sent on
  throttle    this fraction of requests is answered at once with
              429 Too Many Requests, Retry-After: N and a Status body; the API
              server never sees them
  job hook    armed once: the first POST of a Job through any proxy calls
              hook(replica, phase) either before the request is sent on
              ("before": the Job is not created) or after the API server
              answered and before the answer is relayed ("after": created,
              the client never learns it); the campaign SIGKILLs the replica
              there. The client's connection is then closed.
When the API server is down the client's connection is closed without an
answer (what a client sees of a server that went away), never a made-up 5xx.

It counts requests, delayed and throttled ones, Jobs created through it, and
410 Gone answers (HTTP 410, or an ERROR watch event with code 410).
"""
import http.client
import json
import os
import random
import socket
import socketserver
import ssl
import threading
import time

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length", "te",
       "trailer", "upgrade"}


class Faults:
    def __init__(self, seed=1):
        self.lock = threading.Lock()
        self.rng = random.Random(seed)
        self.delay = (0.0, 0.0)
        self.throttle = 0.0
        self.retry_after = 1
        self.hook = None  # (callable(replica, phase), phase)
        self.trace = os.environ.get("KC_PROXY_TRACE") == "1"  # log every watch event too
        self.logf = None  # a file: one line per request (time, replica, method, path, status, ms, bytes)
        self.counts = {"requests": 0, "delayed": 0, "throttled": 0, "job_posts": 0, "gone_410": 0,
                       "upstream_down": 0}

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def snapshot(self):
        with self.lock:
            return dict(self.counts)

    def log(self, replica, method, target, status, t0, nbytes):
        if self.logf is None:
            return
        line = "%s.%03d %s %s %s %s %.0f %d\n" % (time.strftime("%H:%M:%S", time.localtime(t0)), int(t0 * 1000) % 1000,
                                              replica, method, target, status, (time.time() - t0) * 1000, nbytes)
        with self.lock:
            self.logf.write(line)
            self.logf.flush()

    def arm_job_hook(self, hook, phase):
        with self.lock:
            self.hook = (hook, phase)

    def disarm(self):
        with self.lock:
            h, self.hook = self.hook, None
            return h

    def decide(self, method, path):
        """(throttled, delay seconds, job hook or None) for one request."""
        with self.lock:
            self.counts["requests"] += 1
            hook = None
            if method == "POST" and path.split("?")[0].endswith("/jobs") and "/apis/batch/v1/" in path:
                self.counts["job_posts"] += 1
                hook, self.hook = self.hook, None
            if hook is None and self.throttle > 0 and self.rng.random() < self.throttle:
                self.counts["throttled"] += 1
                return True, 0.0, None
            lo, hi = self.delay
            d = self.rng.uniform(lo, hi) if hi > 0 else 0.0
            if d > 0:
                self.counts["delayed"] += 1
            return False, d, hook


def _events(data):
    """'TYPE kind/name@rv ...' of the watch events in one chunk (tracing)."""
    out = []
    for line in data.splitlines():
        try:
            e = json.loads(line)
            o = e.get("object", {})
            m = o.get("metadata", {})
            out.append("%s:%s/%s@%s" % (e.get("type"), o.get("kind"), m.get("name"), m.get("resourceVersion")))
        except ValueError:
            out.append("partial")
    return ",".join(out)


def _read_head(rf):
    line = rf.readline(65537)
    while line in (b"\r\n", b"\n"):
        line = rf.readline(65537)
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers = []
    while True:
        h = rf.readline(65537)
        if h in (b"\r\n", b"\n", b""):
            break
        k, v = h.decode("latin-1").split(":", 1)
        headers.append((k.strip(), v.strip()))
    return method, target, headers


def _read_body(rf, headers):
    hd = {k.lower(): v for k, v in headers}
    if "chunked" in hd.get("transfer-encoding", "").lower():
        out = b""
        while True:
            size = int(rf.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while rf.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return out
            out += rf.read(size)
            rf.readline()
    n = int(hd.get("content-length", "0") or 0)
    return rf.read(n) if n else b""


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        srv = self.server
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rf = sock.makefile("rb")
        up = None
        try:
            while True:
                head = _read_head(rf)
                if head is None:
                    return
                method, target, headers = head
                body = _read_body(rf, headers)
                t0 = time.time()
                throttled, delay, hook = srv.faults.decide(method, target)
                if throttled:
                    msg = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                           '"message":"too many requests (kc fault proxy)","reason":"TooManyRequests",'
                           '"details":{"retryAfterSeconds":%d},"code":429}' % srv.faults.retry_after).encode()
                    sock.sendall(b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                                 b"Retry-After: %d\r\nContent-Length: %d\r\n\r\n" % (srv.faults.retry_after,
                                                                                      len(msg)) + msg)
                    srv.faults.log(srv.replica, method, target, "429*", t0, 0)
                    continue
                if delay > 0:
                    time.sleep(delay)
                if hook and hook[1] == "before":
                    hook[0](srv.replica, "before")
                    return
                if up is None:
                    up = http.client.HTTPSConnection("127.0.0.1", srv.upstream_port, context=srv.ctx)
                try:
                    up.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
                    for k, v in headers:
                        if k.lower() not in HOP:
                            up.putheader(k, v)
                    if body or method in ("POST", "PUT", "PATCH"):
                        up.putheader("Content-Length", str(len(body)))
                    up.endheaders(body or None)
                    resp = up.getresponse()
                except (OSError, http.client.HTTPException) as e:
                    srv.faults.count("upstream_down")
                    srv.faults.log(srv.replica, method, target, "down(%s)" % type(e).__name__, t0, 0)
                    return  # the API server is gone: so is this connection
                if hook:
                    resp.read()
                    hook[0](srv.replica, "after")
                    srv.faults.log(srv.replica, method, target, "%d,killed" % resp.status, t0, 0)
                    return
                if resp.status == 410:
                    srv.faults.count("gone_410")
                out = ["HTTP/1.1 %d %s" % (resp.status, resp.reason)]
                for k, v in resp.getheaders():
                    if k.lower() not in HOP:
                        out.append("%s: %s" % (k, v))
                if method == "HEAD" or resp.status in (204, 304):
                    sock.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
                    resp.read()
                elif resp.chunked or resp.length is None:
                    out.append("Transfer-Encoding: chunked")
                    sock.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
                    if srv.faults.trace and "watch=1" in target:
                        srv.faults.log(srv.replica, method, target, "%d,open" % resp.status, t0, 0)
                    n = 0
                    try:
                        while True:
                            data = resp.read1(65536)
                            if not data:
                                break
                            n += len(data)
                            if srv.faults.trace and "watch=1" in target:
                                srv.faults.log(srv.replica, "EVENT", target.split("?")[0],
                                               _events(data), t0, len(data))
                            if b'"code":410' in data:
                                srv.faults.count("gone_410")
                            sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))
                        sock.sendall(b"0\r\n\r\n")
                    finally:
                        srv.faults.log(srv.replica, method, target, "%d,stream" % resp.status, t0, n)
                else:
                    data = resp.read()
                    out.append("Content-Length: %d" % len(data))
                    sock.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + data)
                    srv.faults.log(srv.replica, method, target, resp.status, t0, len(data))
                if resp.will_close:
                    up.close()
                    up = None
        except (OSError, ValueError, http.client.HTTPException):
            return
        finally:
            if up is not None:
                up.close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Proxy:
    """One listener on 127.0.0.1 (port 0: any) for one replica."""

    def __init__(self, cluster_dir, upstream_port, faults, replica):
        pki = cluster_dir + "/pki"
        ctx = ssl.create_default_context(cafile=pki + "/ca.crt")
        ctx.load_cert_chain(pki + "/admin.crt", pki + "/admin.key")
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.ctx, self.server.upstream_port = ctx, upstream_port
        self.server.faults, self.server.replica = faults, replica
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def kubeconfig(self, path):
        """A kubeconfig for this proxy: plain HTTP, no credentials (the proxy adds them)."""
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: faults-proxy\n  cluster:\n"
                    "    server: http://127.0.0.1:%d\ncontexts:\n- name: faults-proxy\n  context:\n"
                    "    cluster: faults-proxy\n    namespace: default\ncurrent-context: faults-proxy\n"
                    % self.port)
        return path

    def close(self):
        self.server.shutdown()
        self.server.server_close()
