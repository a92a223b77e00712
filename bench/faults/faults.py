#!/usr/bin/env python3
"""bench/faults: break the control plane under load and count what was lost.

Python 3 standard library only; the fleet, the KernelCaches and the API
client are bench/scale/driver.py's (one fleet generator). Run through
bench/faults/run.sh, which starts the private control plane with kwok and
creates the fleet.

  faults.py --cluster DIR --up-args "..." --kubeconfig FILE --operator BIN
            [--kcs 10] [--namespaces 5] [--nodes 200] [--apiserver 3] [--etcd 2]
            [--compactions 1] [--leader 3] [--converge-timeout 120] [--seed 1]
            --out FILE

Two operator replicas run with leader election. A load thread changes
node driver labels (0.5/s) and creates pods (2/s) the whole time. Faults,
each at a random moment of the load (seeded):
  apiserver   kube-apiserver stopped and started (cluster.sh restart-apiserver)
  etcd        etcd SIGKILLed and started again, data kept (cluster.sh up)
  compaction  etcd compacted at its revision, then the API server restarted:
              every watch resumes from a compacted revision (410 Gone)
  leader      a node relabelled to a new driver (new fingerprints: Jobs to
              create) and the leader replica SIGKILLed 0.2 s later; it comes
              back 1 s after
After each fault the load pauses and the script waits until the operator
converged to the true state (after every fault but the leader kill, which
makes its own, one node is relabelled to a new driver as soon as the API
answers: the operator must see it through re-established watches and warm
the new fingerprint): every KernelCache Ready, observedGeneration
current, and for each driver its eligible selected nodes carry (kwok-managed,
schedulable) a fingerprint of that product and driver in state Ready. It
counts duplicate warmup Jobs (two unfinished Jobs of one KernelCache and
fingerprint at once, sampled every 0.5 s; must be 0), KernelCaches not
converged at the deadline (lost status updates), and the time to converge.
Prints a table and writes it to --out as JSON.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scale"))
import driver  # noqa: E402  (bench/scale/driver.py: Api, fleet labels, kc_object)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CLUSTER_SH = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
log = driver.log


class Replica:
    def __init__(self, a, ident):
        self.a, self.ident, self.p = a, ident, None
        self.logpath = "%s.%s.log" % (a.out, ident)

    def start(self):
        self.p = subprocess.Popen(
            [self.a.operator, "--kubeconfig=" + self.a.kubeconfig, "--leader-elect=true",
             "--leader-election-namespace=default", "--identity=" + self.ident,
             "--bind-address=127.0.0.1", "--http-port=0", "--initwarm-image=kc.local/initwarm:test",
             "--warmup-priority-class=", "--log-level=info"],
            stdout=open(self.logpath, "a"), stderr=subprocess.STDOUT)

    def kill(self):
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
            self.p.wait()


def leader(api):
    _, lease = api.call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/kernelcache-operator")
    return lease.get("spec", {}).get("holderIdentity", "")


def cluster(a, *args):
    subprocess.run([CLUSTER_SH, "--dir", a.cluster] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def eligible_index(rng, nodes):
    """A random node the fleet made eligible (driver.py cmd_fleet: i % 50 == 3
    is cordoned, 7 NotReady). Relabelling those would make a fingerprint no
    eligible node carries: Pending by design, its KernelCache not Ready."""
    while True:
        i = rng.randrange(nodes)
        if i % 50 not in (3, 7):
            return i


def eligible(node):
    ann = node["metadata"].get("annotations", {})
    return ann.get("kwok.x-k8s.io/node") == "fake" and not node["spec"].get("unschedulable")


def truth(api, kcs):
    """KernelCaches whose status does not match the fleet now (names)."""
    nodes = api.get("/api/v1/nodes")["items"]
    wrong = []
    for kc in kcs:
        ns, name = kc["metadata"]["namespace"], kc["metadata"]["name"]
        obj = api.get("/apis/kernelcache.io/v1alpha1/namespaces/%s/kernelcaches/%s" % (ns, name))
        product = obj["spec"]["nodeSelector"]["nvidia.com/gpu.product"]
        want = {n["metadata"]["labels"][driver.DRIVER_LABEL] for n in nodes
                if n["metadata"]["labels"].get("nvidia.com/gpu.product") == product and eligible(n)}
        st = obj.get("status", {})
        have = {f.get("driver") for f in st.get("fingerprints", []) if f.get("state") == "Ready"}
        if (not driver.kc_ready(obj) or st.get("observedGeneration") != obj["metadata"]["generation"]
                or not want <= have):
            wrong.append(name)
    return wrong


class Watcher(threading.Thread):
    """Samples warmup Jobs every 0.5 s: duplicates and Jobs created."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api, self.stop, self.dups, self.seen = api, threading.Event(), set(), set()

    def run(self):
        while not self.stop.is_set():
            try:
                jobs = self.api.get("/apis/batch/v1/jobs?labelSelector=kernelcache.io%2Fcomponent%3Dwarmup")
            except Exception:  # the API server is down: a fault, not a finding
                time.sleep(0.5)
                continue
            live = {}
            for j in jobs["items"]:
                self.seen.add(j["metadata"]["uid"])
                done = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                           for c in j.get("status", {}).get("conditions", []))
                if done or j["metadata"].get("deletionTimestamp"):
                    continue
                lab = j["metadata"]["labels"]
                key = (j["metadata"]["namespace"], lab.get("kernelcache.io/name"),
                       lab.get("kernelcache.io/fingerprint"))
                live.setdefault(key, []).append(j["metadata"]["name"])
            for key, names in live.items():
                if len(names) > 1:
                    self.dups.add((key, tuple(sorted(names))))
            time.sleep(0.5)


class Load(threading.Thread):
    """Driver-label changes and pod creations while faults happen."""

    def __init__(self, api, a, rng):
        super().__init__(daemon=True)
        self.api, self.a, self.rng = api, a, rng
        self.pause, self.stop = threading.Event(), threading.Event()
        self.changes = self.pods = self.errors = 0

    def run(self):
        tick = 0
        while not self.stop.is_set():
            time.sleep(0.5)
            if self.pause.is_set():
                continue
            tick += 1
            try:
                i = eligible_index(self.rng, self.a.nodes)
                self.api.merge("/api/v1/nodes/gpu-%05d" % i,
                               {"metadata": {"labels": {driver.DRIVER_LABEL: self.rng.choice(driver.DRIVERS)}}})
                self.changes += 1
                name = "load-%d-%d" % (os.getpid(), tick)
                self.api.call("POST", "/api/v1/namespaces/kc-scale-%d/pods" % (tick % self.a.namespaces), {
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "labels": {"app": "model-%d" % (tick % 7)}},
                    "spec": {"nodeName": "gpu-%05d" % i, "tolerations": [{"operator": "Exists"}],
                             "containers": [{"name": "server", "image": "registry.example/llama:1"}]}})
                self.pods += 1
            except Exception:  # the API server is down during a fault
                self.errors += 1


def probe_api(api, call, timeout=60):
    """call() once the API server answers again (it may be restarting)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def converge(api, kcs, a, t_fault):
    deadline = time.monotonic() + a.converge_timeout
    wrong = []
    while time.monotonic() < deadline:
        try:
            wrong = truth(api, kcs)
        except Exception as e:  # still coming back
            wrong = ["(API: %s)" % str(e)[:80]]
        if not wrong:
            return time.monotonic() - t_fault, []
        time.sleep(0.5)
    return None, wrong


def main():
    p = argparse.ArgumentParser()
    for f, d in (("--cluster", None), ("--up-args", ""), ("--kubeconfig", None), ("--operator", None),
                 ("--out", None)):
        p.add_argument(f, default=d, required=d is None)
    for f, d in (("--kcs", 10), ("--namespaces", 5), ("--nodes", 200), ("--apiserver", 3), ("--etcd", 2),
                 ("--compactions", 1), ("--leader", 3), ("--converge-timeout", 120), ("--seed", 1)):
        p.add_argument(f, type=int, default=d)
    a = p.parse_args()
    rng = random.Random(a.seed)
    api = driver.Api(a.cluster)
    kcs = []
    for i in range(a.kcs):
        name, ns, product = "faults-kc-%d" % i, "kc-scale-%d" % (i % a.namespaces), \
            driver.PRODUCTS[i % len(driver.PRODUCTS)][0]
        driver.create_kc(api, name, ns, product, i)
        kcs.append(driver.kc_object(name, ns, product, i))
    replicas = [Replica(a, "replica-a"), Replica(a, "replica-b")]
    for r in replicas:
        r.start()
    watcher = Watcher(api)
    watcher.start()
    t0 = time.monotonic()
    took, wrong = converge(api, kcs, a, t0)
    if took is None:
        sys.exit("faults: the %d KernelCaches never converged before any fault: %s" % (a.kcs, wrong[:5]))
    log("baseline: %d KernelCaches converged in %.1f s, leader %s" % (a.kcs, took, leader(api)))
    load = Load(api, a, rng)
    load.start()

    plan = (["apiserver"] * a.apiserver + ["etcd"] * a.etcd + ["compaction"] * a.compactions +
            ["leader"] * a.leader)
    rng.shuffle(plan)
    rows = []
    restarts = 0
    for n, fault in enumerate(plan):
        for r in replicas:  # as a kubelet would: a replica that exited (lost its lease) restarts
            if r.p.poll() is not None:
                restarts += 1
                r.start()
        load.pause.clear()
        time.sleep(rng.uniform(1.0, 4.0))  # a random moment of the load
        dups_before = len(watcher.dups)
        detail = ""
        if fault == "apiserver":
            cluster(a, "restart-apiserver")
        elif fault == "etcd":
            with open(os.path.join(a.cluster, "pids", "etcd.pid")) as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
            time.sleep(1)
            cluster(a, "up", *a.up_args.split())
        elif fault == "compaction":
            cluster(a, "compact")
            cluster(a, "restart-apiserver")
        elif fault == "leader":
            who = leader(api)
            victim = next((r for r in replicas if r.ident == who), None)
            i = eligible_index(rng, a.nodes)
            api.merge("/api/v1/nodes/gpu-%05d" % i,
                      {"metadata": {"labels": {driver.DRIVER_LABEL: "580.%d.%02d" % (100 + n, n)}}})
            time.sleep(0.2)
            if victim:
                victim.kill()
                time.sleep(1)
                victim.start()
            detail = "killed %s" % (who or "?")
        load.pause.set()
        if fault != "leader":
            # A change right after the fault: the operator must see it through
            # its re-established watches (a new driver: a new fingerprint).
            probe_api(api, lambda: api.merge("/api/v1/nodes/gpu-%05d" % eligible_index(rng, a.nodes), {
                "metadata": {"labels": {driver.DRIVER_LABEL: "580.%d.%02d" % (100 + n, n)}}}))
        t_fault = time.monotonic()
        took, wrong = converge(api, kcs, a, t_fault)
        rows.append({"fault": fault, "detail": detail, "converge_s": took, "not_converged": wrong,
                     "duplicate_jobs": len(watcher.dups) - dups_before})
        log("%2d %-10s %-18s converged %s, duplicates %d%s" % (
            n + 1, fault, detail, "in %.1f s" % took if took is not None else "NOT",
            rows[-1]["duplicate_jobs"], ", not converged: %s" % wrong[:5] if wrong else ""))
    load.stop.set()
    watcher.stop.set()
    for r in replicas:
        r.kill()
    result = {"nodes": a.nodes, "kcs": a.kcs, "seed": a.seed, "rows": rows, "label_changes": load.changes,
              "pods_created": load.pods, "load_errors": load.errors, "replica_restarts": restarts, "warmup_jobs_seen": len(watcher.seen),
              "duplicates": sorted(str(d) for d in watcher.dups)}
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print("%-11s %6s %12s %12s %16s" % ("fault", "count", "converge s", "duplicates", "not converged"))
    for fault in ("apiserver", "etcd", "compaction", "leader"):
        rs = [r for r in rows if r["fault"] == fault]
        if not rs:
            continue
        ts = [r["converge_s"] for r in rs if r["converge_s"] is not None]
        span = "%.1f-%.1f" % (min(ts), max(ts)) if ts else "-"
        print("%-11s %6d %12s %12d %16d" % (fault, len(rs), span, sum(r["duplicate_jobs"] for r in rs),
                                            sum(1 for r in rs if r["converge_s"] is None)))
    print("load: %d driver-label changes, %d pods created (%d calls failed during faults); "
          "%d warmup Jobs seen; duplicate Jobs in all: %d; replicas restarted after exiting: %d" %
          (load.changes, load.pods, load.errors, len(watcher.seen), len(watcher.dups), restarts))
    bad = [r for r in rows if r["converge_s"] is None or r["duplicate_jobs"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
