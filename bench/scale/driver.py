#!/usr/bin/env python3
"""bench/scale driver: a kwok GPU fleet and an event script against one operator.

Python 3 standard library only (no client library to install, no build step:
it runs wherever the control plane runs). It talks HTTPS to the private
control plane of tests/cluster/cluster.sh with the admin certificate of its
DIR/pki.

  driver.py --cluster DIR fleet --nodes N --pods P --namespaces S
      N kwok GPU nodes (6 GPU products x 3 driver versions, GPU Feature
      Discovery labels as core/fingerprint.h reads them; 2% cordoned, 2%
      NotReady: not managed by kwok), S namespaces kc-scale-<i>, P pods with
      spec.nodeName set (10% labelled app=model-<j>, matched by a KernelCache
      podSelector; the rest app=other). Rate-limited (--qps).
  driver.py --cluster DIR bench --name ours --kcs K --out FILE -- CMD...
      K KernelCaches <name>-kc-<i> (namespace kc-scale-<i % S>, nodeSelector
      one GPU product pool), then starts CMD (the operator) and measures:
      sync (every KernelCache Ready), single-node driver-label changes
      (change -> every selecting KernelCache has a new warmup Job, from a
      Job watch; then the node is set back; back to back, or one every
      --change-interval seconds), a rolling relabel of one pool, requests
      at rest, a restart (relist cost); RSS/HWM and CPU from /proc/<pid>; API requests
      from the kube-apiserver audit log (--audit-log, the operator's user).
      Deletes its KernelCaches at the end.
  driver.py --cluster DIR settle [--quiet-writes 3] [--window 20] [--timeout 900]
      Waits until the control plane is at rest: every fleet pod Running (kwok
      has caught up) and the cluster's write rate (etcd's resourceVersion)
      under --quiet-writes per second over --window seconds. bench runs it
      before it starts the operator, so no run inherits the fleet's creation
      or the previous operator's cleanup.
  driver.py table A.json B.json   side-by-side table with ratios
  driver.py spread FILE...        per operator (the files' "name"), each figure's
      median (min-max) over its runs, and the ratio of the medians
  driver.py check FILE            exit 1 unless the invariants hold
"""
import argparse
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time

PRODUCTS = [  # (GFD product, compute major, minor)
    ("NVIDIA-H200", "9", "0"), ("NVIDIA-H100-80GB-HBM3", "9", "0"), ("NVIDIA-A100-SXM4-80GB", "8", "0"),
    ("NVIDIA-L40S", "8", "9"), ("NVIDIA-L4", "8", "9"), ("NVIDIA-B200", "10", "0")]
DRIVERS = ["550.127.08", "560.35.03", "570.124.06"]
DRIVER_LABEL = "nvidia.com/cuda.driver-version.full"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print("[driver %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


class Api:
    def __init__(self, cluster_dir):
        env = {}
        with open(os.path.join(cluster_dir, "cluster.env")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.strip().split("=", 1)
                    env[k] = v
        self.port = int(env["APISERVER_PORT"])
        self.env = env
        pki = os.path.join(cluster_dir, "pki")
        self.admin = (os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.local = threading.local()

    def conn(self, timeout=30):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def call(self, method, path, body=None, ctype="application/json", ok=(200, 201, 202, 404, 409)):
        c = getattr(self.local, "c", None)
        for attempt in range(3):
            if c is None:
                c = self.local.c = self.conn()
            try:
                data = json.dumps(body).encode() if body is not None else None
                c.request(method, path, body=data, headers={"Content-Type": ctype} if data else {})
                r = c.getresponse()
                raw = r.read()
                if r.status == 429 and attempt < 2:
                    time.sleep(1)
                    continue
                if r.status not in ok:
                    raise RuntimeError("%s %s: HTTP %d %s" % (method, path, r.status, raw[:300]))
                return r.status, (json.loads(raw) if raw else {})
            except (http.client.HTTPException, OSError):
                c = self.local.c = None
                if attempt == 2:
                    raise
        raise RuntimeError("unreachable")

    def get(self, path):
        return self.call("GET", path)[1]

    def node_monitor_grace_s(self):
        """kube-controller-manager's --node-monitor-grace-period in seconds (its /configz), or None."""
        try:
            ctx = ssl.create_default_context()
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # its self-signed serving cert
            ctx.load_cert_chain(*self.admin)
            c = http.client.HTTPSConnection("127.0.0.1", int(self.env["KCM_PORT"]), timeout=10, context=ctx)
            c.request("GET", "/configz")
            cfg = json.loads(c.getresponse().read())
            d = next(iter(cfg.values()))["NodeLifecycleController"]["NodeMonitorGracePeriod"]
        except (OSError, ValueError, KeyError, StopIteration, http.client.HTTPException):
            return None
        secs = 0.0
        for num, unit in re.findall(r"([0-9.]+)(h|ms|m|s)", d):  # Go duration: 2h0m0s
            secs += float(num) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
        return secs

    def merge(self, path, body):
        return self.call("PATCH", path, body, "application/merge-patch+json")

    def counters(self, names):
        """The API server's /metrics counters named, each summed over its label sets ({} on error)."""
        try:
            c = self.conn()
            c.request("GET", "/metrics")
            r = c.getresponse()
            text = r.read().decode()
            if r.status != 200:
                return {}
        except (OSError, http.client.HTTPException, UnicodeDecodeError):
            return {}
        out = {}
        for line in text.splitlines():
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if name in names:
                try:
                    out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
                except (ValueError, IndexError):
                    pass
        return out


WATCH_COUNTERS = ("apiserver_init_events_total", "apiserver_terminated_watchers_total")


class Limiter:
    def __init__(self, qps):
        self.gap, self.next = 1.0 / qps, time.monotonic()

    def wait(self):
        now = time.monotonic()
        if self.next > now:
            time.sleep(self.next - now)
        self.next = max(self.next, now) + self.gap


def node_labels(i, driver):
    product, major, minor = PRODUCTS[i % len(PRODUCTS)]
    return {"kubernetes.io/hostname": "gpu-%05d" % i, "type": "kwok", "kc-scale": "1",
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.compute.major": major, "nvidia.com/gpu.compute.minor": minor,
            "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559",
            DRIVER_LABEL: driver, "nvidia.com/cuda.driver-version.major": driver.split(".")[0],
            "nvidia.com/cuda.runtime-version.full": "12.8", "nvidia.com/cuda.runtime-version.major": "12",
            "nvidia.com/cuda.runtime-version.minor": "8", "nvidia.com/gfd.timestamp": "1764700000",
            "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
            # As a kubelet registers a node; without them the node controller adds them
            # to every node of a new fleet, minutes of node updates during the sync.
            "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "gpu-8x", "topology.kubernetes.io/zone": "zone-%d" % (i % 3)}


def pool_driver(i):
    return DRIVERS[(i // len(PRODUCTS)) % len(DRIVERS)]


def cmd_fleet(api, a):
    lim = Limiter(a.qps)
    t0 = time.monotonic()
    for s in range(a.namespaces):
        api.call("POST", "/api/v1/namespaces", {"metadata": {"name": "kc-scale-%d" % s}})
    res = {"cpu": "96", "memory": "1Ti", "pods": "250", "nvidia.com/gpu": "8"}
    for i in range(a.nodes):
        lim.wait()
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "gpu-%05d" % i, "labels": node_labels(i, pool_driver(i)),
                             "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "spec": {"unschedulable": i % 50 == 3},
                "status": {"capacity": res, "allocatable": res,
                           "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux"}}}
        if i % 50 == 7:
            # NotReady: kwok does not manage it. It looks like a node whose kubelet
            # stopped: Ready=False and the not-ready:NoSchedule taint. Without them it
            # looks like a node still registering, and the scheduler may bind a
            # warmup pod to it that nothing ever runs (a KernelCache stuck Warming).
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            node["metadata"]["annotations"] = {}
            node["spec"]["taints"] = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
            node["status"]["conditions"] = [{
                "type": "Ready", "status": "False", "reason": "KubeletNotReady",
                "message": "container runtime is down (kc-scale fleet)", "lastHeartbeatTime": now,
                "lastTransitionTime": now}]
        api.call("POST", "/api/v1/nodes", node)
        if (i + 1) % 500 == 0:
            log("nodes: %d/%d" % (i + 1, a.nodes))
    for p in range(a.pods):
        lim.wait()
        s = p % a.namespaces
        app = "model-%d" % (p % 7) if p % 10 == 0 else "other"
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "app-%06d" % p, "labels": {"app": app}},
               "spec": {"nodeName": "gpu-%05d" % ((p * 7) % a.nodes),
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [{"name": "server", "image": "registry.example/llama:1"}]}}
        api.call("POST", "/api/v1/namespaces/kc-scale-%d/pods" % s, pod)
        if (p + 1) % 1000 == 0:
            log("pods: %d/%d" % (p + 1, a.pods))
    # Wait for kwok to mark the managed nodes Ready.
    want = a.nodes - len([i for i in range(a.nodes) if i % 50 == 7])
    deadline = time.monotonic() + 300
    while True:
        ready = count_ready_nodes(api)
        if ready >= want or time.monotonic() > deadline:
            break
        time.sleep(1)
    log("fleet: %d nodes (%d Ready), %d pods in %d namespaces, %.1f s" %
        (a.nodes, ready, a.pods, a.namespaces, time.monotonic() - t0))
    if ready < want:
        sys.exit("fleet: only %d of %d nodes became Ready (is kwok running?)" % (ready, want))


def count_ready_nodes(api):
    n, cont = 0, ""
    while True:
        l = api.get("/api/v1/nodes?labelSelector=kc-scale%3D1&limit=500" + cont)
        for it in l["items"]:
            for c in it.get("status", {}).get("conditions", []):
                if c["type"] == "Ready" and c["status"] == "True":
                    n += 1
        tok = l["metadata"].get("continue")
        if not tok:
            return n
        cont = "&continue=" + tok


def current_rv(api):
    """The cluster's current resourceVersion (a quorum list read): it counts etcd writes."""
    return int(api.get("/api/v1/namespaces/default/configmaps?limit=1")["metadata"]["resourceVersion"])


def fleet_pods_running(api):
    n, total, cont = 0, 0, ""
    while True:
        l = api.get("/api/v1/pods?labelSelector=app&limit=2000" + cont)
        for it in l["items"]:
            node = it.get("spec", {}).get("nodeName", "")
            if node.startswith("gpu-") and int(node[4:]) % 50 == 7:
                continue  # a NotReady node kwok does not manage: never Running
            total += 1
            n += it.get("status", {}).get("phase") == "Running"
        tok = l["metadata"].get("continue")
        if not tok:
            return n, total
        cont = "&continue=" + tok


def settle(api, quiet_writes, window, timeout):
    """Until every fleet pod is Running and etcd takes under quiet_writes writes/s
    over `window` s; returns (settled, seconds, last write rate)."""
    t0 = time.monotonic()
    rate = None
    while time.monotonic() - t0 < timeout:
        running, total = fleet_pods_running(api)
        if running < total:
            time.sleep(2)
            continue
        r0, w0 = current_rv(api), time.monotonic()
        time.sleep(window)
        rate = (current_rv(api) - r0) / (time.monotonic() - w0)
        if rate < quiet_writes:
            return True, time.monotonic() - t0, rate
    return False, time.monotonic() - t0, rate


def cmd_settle(api, a):
    ok, secs, rate = settle(api, a.quiet_writes, a.window, a.timeout)
    log("settle: %s after %.0f s (%.1f writes/s)" % ("at rest" if ok else "NOT at rest", secs, rate or -1))


# ------------------------------------------------------------------ bench --

class JobWatch(threading.Thread):
    """Watches warmup Jobs of the bench's KernelCaches; records first sight."""

    def __init__(self, api, prefix):
        super().__init__(daemon=True)
        self.api, self.prefix = api, prefix
        self.lock = threading.Condition()
        self.seen = {}  # (ns, name) -> (kc, time)
        self.dups = {}  # (kc, fingerprint) -> set of job names
        self.succeeded = {}  # (ns, name) -> time first seen with status.succeeded > 0
        self.stop = False

    def run(self):
        rv = self.api.get("/apis/batch/v1/jobs?limit=1")["metadata"]["resourceVersion"]
        while not self.stop:
            c = self.api.conn(timeout=3600)
            c.request("GET", "/apis/batch/v1/jobs?watch=1&allowWatchBookmarks=true&resourceVersion=%s&"
                      "labelSelector=kernelcache.io%%2Fcomponent%%3Dwarmup" % rv)
            r = c.getresponse()
            while not self.stop:
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                obj = ev["object"]
                rv = obj["metadata"].get("resourceVersion", rv)
                if ev["type"] not in ("ADDED", "MODIFIED"):
                    continue
                lb = obj["metadata"].get("labels", {})
                kc = lb.get("kernelcache.io/name", "")
                if not kc.startswith(self.prefix):
                    continue
                with self.lock:
                    key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
                    if obj.get("status", {}).get("succeeded", 0) > 0 and key not in self.succeeded:
                        self.succeeded[key] = time.monotonic()
                    if key not in self.seen:
                        self.seen[key] = (kc, time.monotonic())
                        self.dups.setdefault((kc, lb.get("kernelcache.io/fingerprint", "")), set()).add(key[1])
                    self.lock.notify_all()

    def all_succeeded_since(self, kcs, t0):
        with self.lock:
            keys = [k for k, (kc, t) in self.seen.items() if kc in kcs and t >= t0]
            return bool(keys) and all(k in self.succeeded for k in keys)

    def count_since(self, kc, t0):
        return sum(1 for k, t in self.seen.values() if k == kc and t >= t0)

    def wait_new(self, kcs, t0, timeout):
        """Until every kc in kcs has a Job first seen at/after t0; returns the time or None."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                if all(self.count_since(k, t0) > 0 for k in kcs):
                    return max(min(t for kk, t in self.seen.values() if kk == k and t >= t0) for k in kcs)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)


def node_ready(node):
    for c in node.get("status", {}).get("conditions", []):
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


class NodeWatch(threading.Thread):
    """Counts Ready flips of the fleet's nodes (the event script never makes one).

    kwok posts no heartbeats (no Leases), so unless kube-controller-manager's
    --node-monitor-grace-period outlasts the run, the node lifecycle controller
    marks every kwok node Unknown after 50 s and kwok sets it Ready again: a
    storm of node events the operator rightly reacts to, which is not what the
    rig measures (run.sh sets the grace period; this proves it held)."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api, self.lock, self.stop = api, threading.Lock(), False
        self.ready, self.flips, self.flipped = {}, 0, set()

    def run(self):
        l = self.api.get("/api/v1/nodes?labelSelector=kc-scale%3D1")
        self.ready = {n["metadata"]["name"]: node_ready(n) for n in l["items"]}
        rv = l["metadata"]["resourceVersion"]
        while not self.stop:
            c = self.api.conn(timeout=3600)
            c.request("GET", "/api/v1/nodes?watch=1&allowWatchBookmarks=true&labelSelector=kc-scale%%3D1&"
                      "resourceVersion=%s" % rv)
            r = c.getresponse()
            while not self.stop:
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                obj = ev["object"]
                rv = obj["metadata"].get("resourceVersion", rv)
                if ev["type"] != "MODIFIED":
                    continue
                name, now = obj["metadata"]["name"], node_ready(obj)
                with self.lock:
                    if name in self.ready and self.ready[name] != now:
                        self.flips += 1
                        self.flipped.add(name)
                    self.ready[name] = now

    def not_ready(self):
        with self.lock:
            return {n for n, r in self.ready.items() if not r}


class Proc:
    """The operator under test, and its /proc figures."""

    def __init__(self, cmd, logpath):
        self.cmd, self.logpath, self.p, self.peak = cmd, logpath, None, 0

    def start(self):
        self.logf = open(self.logpath, "ab")
        self.p = subprocess.Popen(self.cmd, stdout=self.logf, stderr=subprocess.STDOUT, start_new_session=True)
        self.peak = 0

    def status(self):
        out = {}
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
        return out

    def cpu(self):
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def metrics_port(self):
        """The port of the operator's /metrics (its log's "listening" line); None if unknown."""
        try:
            with open(self.logpath, "rb") as f:
                for line in f:
                    if b'"msg":"listening"' in line:
                        port = json.loads(line).get("port")  # the last start's line wins
        except (OSError, ValueError):
            return None
        return locals().get("port")

    def metrics(self):
        """Reconciles by result, their total seconds, and queue adds, from /metrics ({} if none)."""
        port = self.metrics_port()
        if not port:
            return {}
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
        except (OSError, http.client.HTTPException):
            return {}
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or " " not in line:
                continue
            name, value = line.rsplit(" ", 1)
            if name.startswith("controller_runtime_reconcile_total"):
                out["reconciles_" + name.split('result="')[1].split('"')[0]] = float(value)
            elif name.startswith(("controller_runtime_reconcile_time_seconds_sum",
                                  "controller_runtime_reconcile_time_seconds_count",
                                  "workqueue_adds_total", "workqueue_retries_total")):
                out[name.split("{")[0]] = float(value)
            elif name.startswith("kernelcache_enqueues_total"):
                out["enqueues_" + name.split('source="')[1].split('"')[0]] = float(value)
            elif name.startswith("rest_client_rate_limiter_duration_seconds_sum"):
                # Seconds its requests waited for the client's rate limiter, by client.
                key = "limiter_wait_%s_s" % name.split('client="')[1].split('"')[0]
                out[key] = out.get(key, 0.0) + float(value)
        out["reconciles"] = sum(v for k, v in out.items() if k.startswith("reconciles_"))
        return out

    def stop(self):
        if self.p and self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        if self.p and self.p.returncode not in (0, -signal.SIGTERM, -signal.SIGKILL, 143):
            log("operator exited with %s (log %s)" % (self.p.returncode, self.logpath))


class Audit:
    """Requests by the operator's user, counted from the kube-apiserver audit log."""

    def __init__(self, path, user):
        self.path, self.user = path, user

    def mark(self):
        return os.path.getsize(self.path)

    def count(self, start, end=None):
        n, kinds = 0, {}
        with open(self.path, "rb") as f:
            f.seek(start)
            data = f.read() if end is None else f.read(end - start)
        for line in data.splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("user", {}).get("username") != self.user or e.get("stage") != "ResponseComplete":
                continue
            n += 1
            k = "%s %s" % (e.get("verb"), e.get("objectRef", {}).get("resource", "?"))
            kinds[k] = kinds.get(k, 0) + 1
        return n, kinds


def kc_object(name, ns, product, i):
    return {"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"podSelector": {"matchLabels": {"app": "model-%d" % (i % 7)}},
                     "nodeSelector": {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product},
                     "image": "registry.example/llama@sha256:" + "%064x" % (i + 1),
                     "runtime": {"pytorch": "2.11.0", "triton": "3.6.0"},
                     "warmup": {"command": ["python3", "/app/warmup.py"], "backoffLimit": 0},
                     "storage": {"storageClassName": "kc-scale", "size": "10Gi"}}}


def create_kc(api, name, ns, product, i):
    """KernelCache kc_object(...) and its static RWX volume (class kc-scale,
    pre-bound to the claim the operator creates)."""
    api.call("POST", "/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "%s-pv" % name},
        "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteMany"],
                 "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "kc-scale",
                 "claimRef": {"namespace": ns, "name": name + "-cache"},
                 "hostPath": {"path": "/tmp/%s" % name}}})
    api.call("POST", "/apis/kernelcache.io/v1alpha1/namespaces/%s/kernelcaches" % ns, kc_object(name, ns, product, i))


def kc_ready(obj):
    for c in obj.get("status", {}).get("conditions", []):
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def list_kcs(api, prefix):
    l = api.get("/apis/kernelcache.io/v1alpha1/kernelcaches")
    return [it for it in l["items"] if it["metadata"]["name"].startswith(prefix)]


def wait_quiet(proc, timeout, still=3, poll=0.5):
    """Seconds until the operator's reconcile count (its /metrics) stayed the same over `still`
    polls `poll` s apart, or `timeout`. An operator whose metrics are not read (the reference's)
    counts as quiet after those polls. A periodic loop cannot hide behind this: if it never pauses for `still` polls the
    wait ends at `timeout`, and a longer period lands in the window that follows."""
    t0 = time.monotonic()
    last, same = None, 0
    while time.monotonic() - t0 < timeout:
        n = proc.metrics().get("reconciles")
        same = same + 1 if n == last else 0
        last = n
        if same >= still:
            break
        time.sleep(poll)
    return time.monotonic() - t0


def wait_all_ready(api, prefix, k, timeout, proc):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.p.poll() is not None:
            sys.exit("the operator exited with %s; its log: %s" % (proc.p.returncode, proc.logpath))
        items = list_kcs(api, prefix)
        if len(items) == k and all(kc_ready(i) for i in items):
            return True
        time.sleep(0.25)
    return False


def dump_unready(api, prefix, path):
    """Writes the KernelCaches that are not Ready, with their warmup Jobs and pods, to path."""
    out = []
    for kc in list_kcs(api, prefix):
        if kc_ready(kc):
            continue
        ns, name = kc["metadata"]["namespace"], kc["metadata"]["name"]
        sel = "labelSelector=kernelcache.io%%2Fname%%3D%s" % name
        out.append({"kernelcache": kc,
                    "jobs": api.get("/apis/batch/v1/namespaces/%s/jobs?%s" % (ns, sel))["items"],
                    "pods": api.get("/api/v1/namespaces/%s/pods?%s" % (ns, sel))["items"]})
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    if out:
        log("%d KernelCaches not Ready: %s" % (len(out), path))


def pctl(xs, q):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def clear_warmups(api, namespaces, timeout=180):
    """Deletes every operator Job and pod (label kernelcache.io/component) of
    these namespaces and waits until none is listed (at most `timeout` s);
    returns the seconds it took."""
    t0 = time.monotonic()
    sel = "labelSelector=kernelcache.io%2Fcomponent"
    for ns in namespaces:
        api.call("DELETE", "/apis/batch/v1/namespaces/%s/jobs?%s" % (ns, sel), {"propagationPolicy": "Background"})
        api.call("DELETE", "/api/v1/namespaces/%s/pods?%s&gracePeriodSeconds=0" % (ns, sel))
    while time.monotonic() - t0 < timeout:
        jobs = len(api.get("/apis/batch/v1/jobs?%s&limit=1" % sel)["items"])
        pods = [p for p in api.get("/api/v1/pods?" + sel)["items"]]
        if not jobs and not pods:
            break
        # Pods the Job controller has not released yet: drop the tracking finalizer.
        for p in pods:
            if p["metadata"].get("finalizers"):
                api.call("PATCH", "/api/v1/namespaces/%s/pods/%s" % (p["metadata"]["namespace"], p["metadata"]["name"]),
                         {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")
        time.sleep(1)
    return time.monotonic() - t0


def cmd_bench(api, a):
    # The run number keeps a repeat's KernelCaches apart from the last run's
    # (which may still be going, finalizers and all).
    prefix = "%s-%d-kc-" % (a.name, a.run)
    out = {"name": a.name, "nodes": a.nodes, "kcs": a.kcs, "namespaces": a.namespaces,
           "node_monitor_grace_s": api.node_monitor_grace_s()}
    audit = Audit(a.audit_log, a.audit_user)
    ok, secs, rate = settle(api, a.quiet_writes, a.settle_window, a.settle_timeout)
    out["settled"], out["settle_s"], out["settle_writes_per_s"] = ok, secs, rate
    log("%s: control plane %s after %.0f s (%.1f writes/s)" %
        (a.name, "at rest" if ok else "NOT at rest", secs, rate or -1))
    watch = JobWatch(api, prefix)
    watch.start()
    nodes_watch = NodeWatch(api)
    nodes_watch.start()
    # Storage: one static RWX volume per KernelCache of class kc-scale.
    kcs = []
    for i in range(a.kcs):
        name, ns = prefix + str(i), "kc-scale-%d" % (i % a.namespaces)
        product = PRODUCTS[i % len(PRODUCTS)][0]
        kcs.append((ns, name, product))
        create_kc(api, name, ns, product, i)
    by_product = {}
    for ns, name, product in kcs:
        by_product.setdefault(product, []).append(name)
    proc = Proc(a.operator, a.log)
    m0 = audit.mark()
    t0 = time.monotonic()
    proc.start()
    stop_sampler = threading.Event()

    timeline = open(a.out + ".timeline", "w")  # one JSON line a second: CPU, RSS, reconciles

    def sampler():
        last = 0
        while not stop_sampler.is_set():
            try:
                proc.peak = max(proc.peak, proc.status().get("VmRSS", 0))
                if time.monotonic() - last >= 1:
                    last = time.monotonic()
                    row = {"t": round(last - t0, 1), "cpu_s": proc.cpu(), "rss_mb": proc.status().get("VmRSS")}
                    row.update(proc.metrics())
                    timeline.write(json.dumps(row, sort_keys=True) + "\n")
                    timeline.flush()
            except (OSError, ValueError):
                pass
            stop_sampler.wait(0.2)
    threading.Thread(target=sampler, daemon=True).start()
    try:
        ok = wait_all_ready(api, prefix, a.kcs, a.sync_timeout, proc)
        out["sync_s"] = time.monotonic() - t0
        out["sync_ok"] = ok
        if not ok:
            dump_unready(api, prefix, a.out + ".unready-sync.json")
        out["sync_cpu_s"] = proc.cpu()
        out["rss_sync_mb"] = proc.status()["VmRSS"]
        out["sync_requests"] = audit.count(m0)[0]
        out["sync_reconciles"] = proc.metrics().get("reconciles")
        log("%s: sync %s in %.1f s, RSS %.0f MB, %.1f CPU s, %d requests" %
            (a.name, "ok" if ok else "TIMED OUT", out["sync_s"], out["rss_sync_mb"], out["sync_cpu_s"],
             out["sync_requests"]))
        # Single-node driver-label changes: a fresh driver version on one node,
        # until every KernelCache selecting its pool has a new warmup Job; then back.
        lat, missed, cpu0, m1 = [], 0, proc.cpu(), audit.mark()
        r1 = proc.metrics()
        w1 = api.counters(WATCH_COUNTERS)
        managed = [i for i in range(a.nodes) if i % 50 not in (3, 7)]
        watched = [i for i in managed if PRODUCTS[i % len(PRODUCTS)][0] in by_product]
        # --change-interval S > 0: change c is due at t0 + c * S (an arrival
        # schedule, not a wait for anything); a change that is due while the one
        # before is still open starts as soon as that one is done (counted late).
        # 0: each change right after the one before (the operator saturated).
        t0, late = time.monotonic(), 0
        for c in range(a.changes):
            i = watched[(c * 37) % len(watched)]
            node = "gpu-%05d" % i
            product = PRODUCTS[i % len(PRODUCTS)][0]
            if a.change_interval > 0:
                due = t0 + c * a.change_interval
                now = time.monotonic()
                if now < due:
                    time.sleep(due - now)
                elif c > 0 and now > due + 0.001:
                    late += 1
            ts = time.monotonic()
            api.merge("/api/v1/nodes/" + node, {"metadata": {"labels": {DRIVER_LABEL: "999.%d.%d" % (sum(map(ord, a.name + str(a.run))) % 1000, c)}}})
            done = watch.wait_new(by_product.get(product, []), ts, a.change_timeout)
            if done is None:
                missed += 1
            else:
                lat.append(done - ts)
            api.merge("/api/v1/nodes/" + node, {"metadata": {"labels": {DRIVER_LABEL: pool_driver(i)}}})
            if (c + 1) % 50 == 0:
                log("%s: %d/%d changes, p50 %.3f s" % (a.name, c + 1, a.changes, pctl(lat, 0.5) or -1))
        out["changes"] = a.changes
        out["change_interval_s"] = a.change_interval
        out["changes_late"] = late
        out["change_missed"] = missed
        out["change_p50_s"] = pctl(lat, 0.5)
        out["change_p99_s"] = pctl(lat, 0.99)
        out["change_max_s"] = max(lat) if lat else None
        out["changes_over_1s"] = sum(1 for x in lat if x > 1.0)
        out["change_latencies_s"] = [round(x, 4) for x in lat]
        out["cpu_per_1k_node_events_s"] = (proc.cpu() - cpu0) * 1000.0 / max(1, 2 * a.changes)
        out["change_requests"] = audit.count(m1)[0]
        # The rig's own health: a watcher of the control plane (kwok's pod watch
        # above all) that falls behind is closed by the API server, and one that
        # comes back at resource version 0 is sent every object again.
        w2 = api.counters(WATCH_COUNTERS)
        for key, name in (("change_watch_init_events", "apiserver_init_events_total"),
                          ("change_watchers_closed", "apiserver_terminated_watchers_total")):
            if w1 and w2:
                out[key] = w2.get(name, 0.0) - w1.get(name, 0.0)
        r2 = proc.metrics()
        out["change_reconciles"] = r2.get("reconciles", 0) - r1.get("reconciles", 0)
        t_sum = "controller_runtime_reconcile_time_seconds_sum"
        if out["change_reconciles"]:
            out["change_reconcile_mean_s"] = (r2.get(t_sum, 0) - r1.get(t_sum, 0)) / out["change_reconciles"]
        for client in ("api", "events"):
            key = "limiter_wait_%s_s" % client
            if key in r2:
                # What the change window's requests waited for the client's token, per change.
                out["change_" + key] = (r2[key] - r1.get(key, 0.0)) / max(1, a.changes)
        # Rolling relabel of one pool (PRODUCTS[0]) over --roll-seconds.
        pool = [i for i in managed if i % len(PRODUCTS) == 0]
        new = "999.%d.1" % (sum(map(ord, a.name + str(a.run))) % 900 + 100)
        m2, tr = audit.mark(), time.monotonic()
        lim = Limiter(max(1.0, len(pool) / a.roll_seconds))
        for i in pool:
            lim.wait()
            api.merge("/api/v1/nodes/gpu-%05d" % i, {"metadata": {"labels": {DRIVER_LABEL: new}}})
        last = time.monotonic()
        affected = by_product.get(PRODUCTS[0][0], [])
        done = watch.wait_new(affected, tr, 120)
        conv = None
        if done is not None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                items = [x for x in list_kcs(api, prefix) if x["metadata"]["name"] in affected]
                if watch.all_succeeded_since(affected, tr) and items and all(kc_ready(x) for x in items):
                    conv = time.monotonic() - last
                    break
                time.sleep(0.25)
        out["roll_nodes"] = len(pool)
        out["roll_converge_after_last_s"] = conv
        out["roll_requests"] = audit.count(m2)[0]
        # At rest: nothing changes; requests over --idle-seconds once the operator's passes
        # have stopped (the tail of the roll's work is not "at rest") and --settle-seconds more.
        out["idle_wait_s"] = wait_quiet(proc, a.quiet_timeout)
        time.sleep(a.settle_seconds)
        m3 = audit.mark()
        time.sleep(a.idle_seconds)
        n, kinds = audit.count(m3)
        out["idle_requests_per_s"] = n / a.idle_seconds
        out["idle_request_kinds"] = kinds
        out["rss_after_events_mb"] = proc.status()["VmRSS"]
        out["rss_peak_mb"] = max(proc.peak, proc.status()["VmHWM"])
        out["cpu_total_s"] = proc.cpu()
        # Restart: relist cost (requests and time until all Ready again).
        proc.stop()
        m4, tr = audit.mark(), time.monotonic()
        proc.start()
        out["restart_sync_ok"] = wait_all_ready(api, prefix, a.kcs, a.sync_timeout, proc)
        out["restart_sync_s"] = time.monotonic() - tr
        if not out["restart_sync_ok"]:
            dump_unready(api, prefix, a.out + ".unready-restart.json")
        time.sleep(a.settle_seconds)
        out["restart_reconciles"] = proc.metrics().get("reconciles")
        n, kinds = audit.count(m4)
        out["restart_requests"] = n
        out["restart_request_kinds"] = kinds
        out["restart_rss_mb"] = proc.status()["VmRSS"]
        out["restart_peak_mb"] = max(proc.peak, proc.status()["VmHWM"])
        out["restart_cpu_s"] = proc.cpu()
        # Invariants.
        with watch.lock:
            out["duplicate_jobs"] = sum(len(v) - 1 for v in watch.dups.values())
            out["jobs_seen"] = len(watch.seen)
        items = list_kcs(api, prefix)
        out["kcs_ready_at_end"] = sum(1 for x in items if kc_ready(x))
        with nodes_watch.lock:
            out["node_ready_flips"] = nodes_watch.flips
            out["node_ready_flipped"] = sorted(nodes_watch.flipped)[:10]
        pods = api.get("/api/v1/pods?labelSelector=kernelcache.io%2Fcomponent%3Dwarmup")["items"]
        bad = nodes_watch.not_ready()
        out["warmup_pods_on_not_ready_nodes"] = sorted(
            p["metadata"]["name"] + "@" + p["spec"]["nodeName"] for p in pods
            if p["metadata"].get("labels", {}).get("kernelcache.io/name", "").startswith(prefix)
            and p["spec"].get("nodeName") in bad)
        out["status_writes"] = audit.count(m0)[1].get("update kernelcaches", 0) + \
            audit.count(m0)[1].get("patch kernelcaches", 0)
        out["requests_total"] = audit.count(m0)[0]
    finally:
        stop_sampler.set()
        proc.stop()
        watch.stop = nodes_watch.stop = True
        for ns, name, _ in kcs:
            api.call("DELETE", "/apis/kernelcache.io/v1alpha1/namespaces/%s/kernelcaches/%s" % (ns, name),
                     {"propagationPolicy": "Background"})
            # The operator is stopped: its cleanup finalizer would hold the object for ever.
            api.call("PATCH", "/apis/kernelcache.io/v1alpha1/namespaces/%s/kernelcaches/%s" % (ns, name),
                     {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")
            api.call("DELETE", "/api/v1/persistentvolumes/%s-pv" % name)
        # The next operator starts on a clean slate: this run's warmup Jobs and
        # pods go now, not over minutes of the garbage collector's client rate
        # while the next operator syncs.
        try:
            out["cleanup_s"] = clear_warmups(api, sorted({ns for ns, _, _ in kcs}))
        except Exception as e:  # the figures above are kept either way
            log("%s: clearing the warmup Jobs failed: %s" % (a.name, e))
        # Put the rolled pool back.
        for i in range(a.nodes):
            if i % len(PRODUCTS) == 0:
                api.merge("/api/v1/nodes/gpu-%05d" % i, {"metadata": {"labels": {DRIVER_LABEL: pool_driver(i)}}})
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    log("%s: %s" % (a.name, json.dumps({k: v for k, v in out.items() if not isinstance(v, (dict, list))}, sort_keys=True)))


ROWS = [("rss_sync_mb", "RSS after sync (MB)"), ("rss_peak_mb", "RSS peak (MB)"),
        ("rss_after_events_mb", "RSS after events (MB)"), ("sync_s", "sync wall (s)"),
        ("sync_cpu_s", "CPU to sync (s)"), ("sync_requests", "requests to sync"),
        ("cpu_per_1k_node_events_s", "CPU per 1k node events (s)"),
        ("change_interval_s", "changes paced every (s)"), ("changes_late", "changes started late"),
        ("change_p50_s", "label change -> Job p50 (s)"), ("change_p99_s", "label change -> Job p99 (s)"),
        ("change_max_s", "label change -> Job, slowest (s)"),
        ("change_missed", "changes without Job in time"), ("change_requests", "requests during changes"),
        ("change_reconciles", "reconciles during changes"),
        ("change_reconcile_mean_s", "reconcile wall time, mean, changes (s)"),
        ("change_limiter_wait_api_s", "rate-limiter wait per change, API (s)"),
        ("roll_converge_after_last_s", "pool roll: Ready after last relabel (s)"),
        ("roll_requests", "pool roll: requests"), ("idle_requests_per_s", "requests/s at rest"),
        ("restart_requests", "restart: requests (relist)"), ("restart_rss_mb", "restart: RSS (MB)"),
        ("restart_peak_mb", "restart: RSS peak (MB)"),
        ("restart_cpu_s", "restart: CPU to resync + 5 s (s)"),
        ("status_writes", "status writes (all)"), ("jobs_seen", "warmup Jobs created"),
        ("duplicate_jobs", "duplicate Jobs"), ("cpu_total_s", "CPU total (s)")]


def cmd_table(a):
    res = [json.load(open(p)) for p in a.files]
    pairs = [(res[i], res[i + 1]) for i in range(0, len(res) - 1, 2)]
    for ours, ref in pairs:
        print("\n%d nodes, %d KernelCaches, %d changes (%s vs %s)" %
              (ours["nodes"], ours["kcs"], ours.get("changes", 0), ours["name"], ref["name"]))
        print("| %-40s | %10s | %10s | %7s |" % ("figure", ours["name"], ref["name"], "ratio"))
        print("|%s|%s|%s|%s|" % ("-" * 42, "-" * 12, "-" * 12, "-" * 9))
        for key, label in ROWS:
            x, y = ours.get(key), ref.get(key)
            fx = "-" if x is None else ("%.3f" % x if isinstance(x, float) and x < 10 else "%.0f" % x if isinstance(x, float) else str(x))
            fy = "-" if y is None else ("%.3f" % y if isinstance(y, float) and y < 10 else "%.0f" % y if isinstance(y, float) else str(y))
            ratio = "%.2f" % (x / y) if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y else "-"
            print("| %-40s | %10s | %10s | %7s |" % (label, fx, fy, ratio))


SPREAD_ROWS = [("rss_sync_mb", "RSS after sync (MB)"), ("rss_peak_mb", "RSS peak (MB)"),
               ("restart_rss_mb", "RSS after a restart and resync (MB)"),
               ("restart_peak_ratio", "restart peak / RSS after sync"),
               ("sync_s", "sync wall (s)"), ("sync_cpu_s", "CPU to sync (s)"),
               ("change_interval_s", "changes paced every (s; 0: back to back)"),
               ("changes_late", "changes started late (the one before still open)"),
               ("change_p50_s", "label change -> Jobs p50 (s)"),
               ("change_p99_s", "label change -> Jobs p99 (s)"),
               ("change_max_s", "label change -> Jobs, slowest (s)"),
               ("changes_over_1s", "changes over 1 s"),
               ("change_missed", "changes without a Job in time"),
               ("change_reconciles_per_change", "reconciles per change"),
               ("change_requests_per_change", "requests per change"),
               ("change_reconcile_mean_s", "reconcile wall time, mean (s)"),
               ("change_limiter_wait_api_s", "rate-limiter wait per change, API client (s)"),
               ("change_limiter_wait_events_s", "rate-limiter wait per change, Events client (s)"),
               ("cpu_per_1k_node_events_s", "CPU per 1,000 node events (s)"),
               ("change_watch_init_events", "rig: objects the API server replayed to new watches, during the changes"),
               ("change_watchers_closed", "rig: watchers the API server closed as too slow, during the changes"),
               ("roll_converge_after_last_s", "pool roll: Ready after last relabel (s)"),
               ("idle_requests_per_s", "requests/s at rest"),
               ("restart_requests", "restart: requests (relist)"),
               ("duplicate_jobs", "duplicate Jobs"), ("cpu_total_s", "CPU total (s)")]


def derived(r):
    r = dict(r)
    if r.get("changes"):
        for k in ("change_reconciles", "change_requests"):
            if r.get(k) is not None:
                r[k + "_per_change"] = r[k] / r["changes"]
    if r.get("restart_peak_mb") and r.get("rss_sync_mb"):
        r["restart_peak_ratio"] = r["restart_peak_mb"] / r["rss_sync_mb"]
    return r


def fmt(x):
    if x is None:
        return "-"
    return "%.2f" % x if abs(x) < 10 else "%.0f" % x


def cmd_spread(a):
    runs = {}
    for p in a.files:
        r = derived(json.load(open(p)))
        runs.setdefault(r["name"], []).append(r)
    names = list(runs)
    nodes = sorted({r["nodes"] for rs in runs.values() for r in rs})
    print("\n%s nodes; runs: %s" % ("/".join(map(str, nodes)),
                                     ", ".join("%s %d" % (n, len(runs[n])) for n in names)))
    print("| figure | " + " | ".join("%s: median (min-max)" % n for n in names) +
          (" | %s / %s (medians) |" % (names[0], names[1]) if len(names) > 1 else " |"))
    print("|---|" + "---|" * (len(names) + (1 if len(names) > 1 else 0)))
    for key, label in SPREAD_ROWS:
        cells, medians = [], []
        for n in names:
            xs = sorted(r[key] for r in runs[n] if isinstance(r.get(key), (int, float)))
            if not xs:
                cells.append("-")
                medians.append(None)
                continue
            med = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
            medians.append(med)
            cells.append(fmt(med) if len(xs) == 1 else "%s (%s-%s)" % (fmt(med), fmt(xs[0]), fmt(xs[-1])))
        ratio = ""
        if len(names) > 1:
            ratio = " | %.2f" % (medians[0] / medians[1]) if medians[0] is not None and medians[1] else " | -"
        print("| %s | %s%s |" % (label, " | ".join(cells), ratio))


def cmd_check(a):
    r = json.load(open(a.file))
    bad = []
    if not r.get("sync_ok"):
        bad.append("not every KernelCache reached Ready at sync")
    if r.get("kcs_ready_at_end") != r.get("kcs"):
        bad.append("%s of %s KernelCaches Ready at the end" % (r.get("kcs_ready_at_end"), r.get("kcs")))
    if r.get("duplicate_jobs"):
        bad.append("%d duplicate warmup Jobs (same KernelCache and fingerprint)" % r["duplicate_jobs"])
    if r.get("change_missed"):
        bad.append("%d driver-label changes got no new warmup Job" % r["change_missed"])
    if (r.get("node_monitor_grace_s") or 0) < 3600:
        bad.append("kube-controller-manager --node-monitor-grace-period is %s s: kwok posts no heartbeats, "
                   "so every node flaps Unknown/Ready (run.sh sets 2h)" % r.get("node_monitor_grace_s"))
    if r.get("node_ready_flips"):
        bad.append("%d node Ready flips the script did not make (kwok heartbeats? see NodeWatch): %s" %
                   (r["node_ready_flips"], r.get("node_ready_flipped")))
    if r.get("warmup_pods_on_not_ready_nodes"):
        bad.append("warmup pods bound to NotReady nodes: %s" % r["warmup_pods_on_not_ready_nodes"])
    if r.get("idle_requests_per_s", 1) > a.max_idle_rps:
        bad.append("%.2f requests/s at rest (max %.2f): %s" % (r["idle_requests_per_s"], a.max_idle_rps,
                                                             r.get("idle_request_kinds")))
    for b in bad:
        print("check %s: FAIL: %s" % (r.get("name"), b))
    if bad:
        sys.exit(1)
    print("check %s: ok (%d Jobs, 0 duplicates, %.2f requests/s at rest)" %
          (r.get("name"), r.get("jobs_seen", 0), r.get("idle_requests_per_s", 0)))


def main():
    # SIGTERM (run.sh's trap, a timeout) unwinds like an exception, so the operator is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("driver: terminated"))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cluster", help="tests/cluster/cluster.sh DIR")
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fleet")
    f.add_argument("--nodes", type=int, default=300)
    f.add_argument("--pods", type=int, default=1000)
    f.add_argument("--namespaces", type=int, default=5)
    f.add_argument("--qps", type=float, default=100)
    b = sub.add_parser("bench")
    b.add_argument("--name", required=True)
    b.add_argument("--run", type=int, default=1)
    b.add_argument("--nodes", type=int, default=300)
    b.add_argument("--namespaces", type=int, default=5)
    b.add_argument("--kcs", type=int, default=6)
    b.add_argument("--changes", type=int, default=500)
    b.add_argument("--change-timeout", type=float, default=30)
    b.add_argument("--change-interval", type=float, default=0,
                   help="seconds between changes' starts (0: back to back)")
    b.add_argument("--roll-seconds", type=float, default=60)
    b.add_argument("--settle-seconds", type=float, default=5)
    b.add_argument("--quiet-timeout", type=float, default=60)
    b.add_argument("--idle-seconds", type=float, default=20)
    b.add_argument("--sync-timeout", type=float, default=300)
    b.add_argument("--audit-log", required=True)
    b.add_argument("--audit-user", default="kc-bench-operator")
    b.add_argument("--log", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("operator", nargs=argparse.REMAINDER, help="-- the operator command")
    b.add_argument("--quiet-writes", type=float, default=5.0)
    b.add_argument("--settle-window", type=float, default=20)
    b.add_argument("--settle-timeout", type=float, default=900)
    st = sub.add_parser("settle")
    st.add_argument("--quiet-writes", type=float, default=5.0)
    st.add_argument("--window", type=float, default=20)
    st.add_argument("--timeout", type=float, default=900)
    sp = sub.add_parser("spread")
    sp.add_argument("files", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    c = sub.add_parser("check")
    c.add_argument("file")
    c.add_argument("--max-idle-rps", type=float, default=0.0)
    a = p.parse_args()
    if a.cmd == "table":
        return cmd_table(a)
    if a.cmd == "check":
        return cmd_check(a)
    if a.cmd == "spread":
        return cmd_spread(a)
    api = Api(a.cluster)
    if a.cmd == "fleet":
        return cmd_fleet(api, a)
    if a.cmd == "settle":
        return cmd_settle(api, a)
    if a.cmd == "bench":
        a.operator = a.operator[1:] if a.operator[:1] == ["--"] else a.operator
        if not a.operator:
            sys.exit("bench: give the operator command after --")
        return cmd_bench(api, a)


if __name__ == "__main__":
    main()
