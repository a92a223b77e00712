#!/usr/bin/env python3
"""bench/faults: break the control plane under load and count what was lost.

Python 3 standard library only; the fleet, the KernelCaches and the API
client are bench/scale/driver.py's (one fleet generator). Run through
bench/faults/run.sh, which starts the private control plane with kwok and
creates the fleet.

  faults.py --cluster DIR --up-args "..." --operator BIN --out FILE
            [--kcs 10] [--namespaces 5] [--nodes 200] [--seed 1]
            [--apiserver 3] [--etcd 2] [--compactions 1] [--leader 3]
            [--slow 1] [--throttle 1] [--restart 1]
            [--fault-seconds 10] [--converge-timeout 120]

Two operator replicas run with leader election, each through its own
fault proxy (proxy.py: plain HTTP on 127.0.0.1, TLS with the admin
certificate to kube-apiserver). A load thread changes node driver labels
(2/s, among the fleet's drivers) and creates pods (2/s) the whole time.
Faults, in a seeded random order, each at a seeded random moment of the load:
  apiserver   kube-apiserver SIGKILLed, started again (cluster.sh start-apiserver)
  etcd        etcd SIGKILLed, started again with its data (cluster.sh up)
  compaction  etcd compacted at its current revision, then kube-apiserver
              restarted: every watch resumes from a compacted revision and
              gets 410 Gone (counted at the proxies)
  leader      the next Job POST through a proxy SIGKILLs the replica that sent
              it, before the request reaches the API server or after it was
              created and before the answer reaches the replica (seeded); a
              node is relabelled to a new driver (new fingerprints: Jobs to
              create) to make that POST happen; the replica starts again 1 s
              later (a restarted container: same identity) or, seeded, only
              after convergence (a lost pod: the other replica must take the
              Lease when it expires, 15 s)
  slow        every request of both replicas delayed 0.2-1.5 s for
              --fault-seconds, and while converging
  throttle    half the requests of both replicas answered 429 with
              Retry-After: 1 for --fault-seconds, and while converging
  restart     both replicas SIGTERMed and started again
After each fault the load pauses, one node is relabelled to a new driver
(a new fingerprint the operator must see through its re-established watches
and warm), and the script waits until the operator converged to the true
state: every KernelCache Ready with observedGeneration current, and for each
of its GPU products every driver carried by an eligible node (kwok-managed,
schedulable) has a fingerprint in state Ready. Per fault it records the
outage (injection to the API answering again), the time to converge (from
then), duplicate warmup Jobs (two unfinished Jobs of one KernelCache and
fingerprint at once, sampled every 0.5 s: must be 0), lost status updates
(a KernelCache not converged at the deadline, or a fingerprint whose status
went back from Ready to Pending/Warming/Failed within one warm generation,
sampled every second: must be 0), 410s seen and requests made through the
proxies. Prints a table and writes everything to --out as JSON.
"""
import argparse
import calendar
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scale"))
sys.path.insert(0, HERE)
import driver  # noqa: E402  (bench/scale/driver.py: Api, fleet labels, create_kc)
import proxy  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CLUSTER_SH = os.path.join(ROOT, "tests", "cluster", "cluster.sh")
KC_PATH = "/apis/kernelcache.io/v1alpha1"
JOBS = "/apis/batch/v1/jobs?labelSelector=kernelcache.io%2Fcomponent%3Dwarmup"
FAULTS = ("apiserver", "etcd", "compaction", "leader", "slow", "throttle", "restart")
OUTAGES = ("apiserver", "etcd", "compaction")  # the API server does not answer for a while
log = driver.log


class Replica:
    """One operator process; talks to the API server through its own proxy.
    A Supervisor starts it again 1 s after it exited, as a kubelet restarts a
    container, unless it is held down."""

    def __init__(self, a, ident, faults):
        self.a, self.ident, self.p, self.starts = a, ident, None, 0
        self.logpath = "%s.%s.log" % (a.out, ident)
        self.proxy = proxy.Proxy(a.cluster, driver.Api(a.cluster).port, faults, ident)
        self.kubeconfig = self.proxy.kubeconfig("%s.%s.kubeconfig" % (a.out, ident))
        self.lock = threading.RLock()
        self.held = False  # no restart while set
        self.intended = False  # the last exit was the campaign's doing
        self.exits = 0  # exits nobody asked for (a leader that lost its Lease exits by design)
        self.died_at = None

    def running(self):
        return self.p is not None and self.p.poll() is None

    def start(self):
        with self.lock:
            if self.running():
                return
            self.starts += 1
            self.intended, self.died_at = False, None
            self.p = subprocess.Popen(
                [self.a.operator, "--kubeconfig=" + self.kubeconfig, "--leader-elect=true",
                 "--leader-election-namespace=default", "--identity=" + self.ident,
                 "--bind-address=127.0.0.1", "--http-port=0", "--initwarm-image=kc.local/initwarm:test",
                 "--warmup-priority-class=", "--log-level=" + self.a.log_level],
                stdout=open(self.logpath, "a"), stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self, hold=False):
        with self.lock:
            self.intended, self.held = True, hold
            if self.running():
                self.p.kill()
                self.p.wait()

    def stop(self, hold=False):
        """SIGTERM; SIGKILL if it has not exited 20 s later."""
        with self.lock:
            self.intended, self.held = True, hold
            if self.running():
                self.p.terminate()
                try:
                    self.p.wait(20)
                except subprocess.TimeoutExpired:
                    self.p.kill()
                    self.p.wait()

    def release(self):
        with self.lock:
            self.held = False


class Supervisor(threading.Thread):
    def __init__(self, replicas):
        super().__init__(daemon=True)
        self.replicas, self.stop = replicas, threading.Event()

    def run(self):
        while not self.stop.wait(0.2):
            for r in self.replicas:
                with r.lock:
                    if r.p is None or r.running() or r.held:
                        continue
                    if r.died_at is None:
                        r.died_at = time.monotonic()
                        if not r.intended:
                            r.exits += 1
                            log("%s exited by itself (%s); restarting it, as a kubelet would" %
                                (r.ident, r.p.returncode))
                    if time.monotonic() - r.died_at >= 1.0:
                        r.start()


def leader(api):
    _, lease = api.call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/kernelcache-operator")
    return lease.get("spec", {}).get("holderIdentity", "")


def cluster(a, *args):
    subprocess.run([CLUSTER_SH, "--dir", a.cluster] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kill_component(a, name):
    """SIGKILL a control-plane component's process group (cluster.sh starts each with setsid)."""
    with open(os.path.join(a.cluster, "pids", name + ".pid")) as f:
        pid = int(f.read().strip())
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


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
    """Names of the KernelCaches whose status does not match the fleet now."""
    nodes = api.get("/api/v1/nodes?labelSelector=kc-scale%3D1")["items"]
    by_name = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
               for o in api.get(KC_PATH + "/kernelcaches")["items"]}
    drivers = {}
    for n in nodes:
        if eligible(n):
            lb = n["metadata"]["labels"]
            drivers.setdefault(lb.get("nvidia.com/gpu.product"), set()).add(lb[driver.DRIVER_LABEL])
    wrong = []
    for ns, name, product in kcs:
        obj = by_name.get((ns, name))
        if obj is None:
            wrong.append(name + " (missing)")
            continue
        st = obj.get("status", {})
        have = {f.get("driver") for f in st.get("fingerprints", []) if f.get("state") == "Ready"}
        if (not driver.kc_ready(obj) or st.get("observedGeneration") != obj["metadata"]["generation"]
                or not drivers.get(product, set()) <= have):
            wrong.append(name)
    return wrong


class Sampler(threading.Thread):
    """Warmup Jobs every 0.5 s (duplicates, Jobs seen) and KernelCache
    statuses every 1 s (fingerprints going back from Ready)."""

    BACK = ("Pending", "Warming", "Failed")

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api, self.stop = api, threading.Event()
        self.lock = threading.Lock()
        self.dups, self.seen, self.regressions = set(), set(), []
        self.ready = {}  # (ns, kc, fp id) -> warmGeneration last seen Ready

    def jobs(self):
        live = {}
        for j in self.api.get(JOBS)["items"]:
            self.seen.add(j["metadata"]["uid"])
            done = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                       for c in j.get("status", {}).get("conditions", []))
            if done or j["metadata"].get("deletionTimestamp"):
                continue
            lab = j["metadata"]["labels"]
            key = (j["metadata"]["namespace"], lab.get("kernelcache.io/name"), lab.get("kernelcache.io/fingerprint"))
            live.setdefault(key, []).append(j["metadata"]["name"])
        with self.lock:
            for key, names in live.items():
                if len(names) > 1:
                    self.dups.add((key, tuple(sorted(names))))

    def statuses(self):
        present = set()
        for kc in self.api.get(KC_PATH + "/kernelcaches")["items"]:
            ns, name = kc["metadata"]["namespace"], kc["metadata"]["name"]
            for f in kc.get("status", {}).get("fingerprints", []):
                key = (ns, name, f.get("id"))
                present.add(key)
                gen = f.get("warmGeneration", 0)
                with self.lock:
                    if f.get("state") == "Ready":
                        self.ready[key] = gen
                    elif f.get("state") in self.BACK and self.ready.get(key) == gen:
                        self.regressions.append({"kernelcache": "%s/%s" % (ns, name), "fingerprint": key[2],
                                                 "state": f.get("state"), "warmGeneration": gen,
                                                 "t": time.strftime("%H:%M:%S")})
                        del self.ready[key]
        with self.lock:  # an entry that went away (GC) may come back as new
            for key in [k for k in self.ready if k not in present]:
                del self.ready[key]

    def run(self):
        tick = 0
        while not self.stop.is_set():
            tick += 1
            try:
                self.jobs()
                if tick % 2 == 0:
                    self.statuses()
            except Exception:  # the API server is down: a fault, not a finding
                pass
            self.stop.wait(0.5)

    def counts(self):
        with self.lock:
            return len(self.dups), len(self.regressions)


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


def until_api(api, timeout=120):
    """Seconds until the API server answers a GET again."""
    t0 = time.monotonic()
    while True:
        try:
            api.get("/api/v1/namespaces/default")
            return time.monotonic() - t0
        except Exception:
            if time.monotonic() - t0 > timeout:
                raise
            time.sleep(0.1)


def converge(api, kcs, a):
    t0 = time.monotonic()
    deadline = t0 + a.converge_timeout
    wrong = []
    while time.monotonic() < deadline:
        try:
            wrong = truth(api, kcs)
        except Exception as e:  # still coming back
            wrong = ["(API: %s)" % str(e)[:80]]
        if not wrong:
            return time.monotonic() - t0, []
        time.sleep(0.5)
    return None, wrong


class Campaign:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.api = driver.Api(a.cluster)
        self.faults = proxy.Faults(a.seed)
        self.faults.logf = open(a.out + ".requests.log", "w")
        self.replicas = [Replica(a, "replica-a", self.faults), Replica(a, "replica-b", self.faults)]
        self.kcs = []
        self.fresh = 0
        self.killed = threading.Event()
        self.killed_detail = ""
        self.hold_victim = False
        self.supervisor = Supervisor(self.replicas)

    def relabel_fresh(self):
        """One kwok-managed node of a product some KernelCache selects to a
        driver never seen before: a new fingerprint to warm. Returns
        (product, driver, wall time of the change)."""
        self.fresh += 1
        products = min(self.a.kcs, len(driver.PRODUCTS))
        while True:
            i = eligible_index(self.rng, self.a.nodes)
            if i % len(driver.PRODUCTS) < products:
                break
        version = "580.%d.%02d" % (100 + self.fresh, self.fresh % 100)
        t = time.time()
        self.api.merge("/api/v1/nodes/gpu-%05d" % i, {"metadata": {"labels": {driver.DRIVER_LABEL: version}}})
        return driver.PRODUCTS[i % len(driver.PRODUCTS)][0], version, t

    def operator_share(self, change):
        """For the fingerprint of a relabel_fresh() change, the operator's own
        share of the time to converge (1 s resolution, API timestamps): from
        the change to its warmup Job's creation, and from the Job's completion
        (status.completionTime, set by kube-controller-manager) to the status
        write that made it Ready; the latest over the KernelCaches selecting
        the product. The rest is the control plane's (the Job controller,
        the scheduler, kwok)."""
        product, version, t_change = change
        created, lag = [], []
        for ns, name, prod in self.kcs:
            if prod != product:
                continue
            kc = self.api.get("%s/namespaces/%s/kernelcaches/%s" % (KC_PATH, ns, name))
            for f in kc.get("status", {}).get("fingerprints", []):
                if f.get("driver") != version or not f.get("job"):
                    continue
                _, job = self.api.call("GET", "/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, f["job"]))
                if job.get("metadata", {}).get("creationTimestamp"):  # whole seconds, as the API has them
                    created.append(rfc3339(job["metadata"]["creationTimestamp"]) - int(t_change))
                done = job.get("status", {}).get("completionTime")
                # status.readyAt is the Job's finish time; when the operator
                # wrote it is its last status write (the load is paused).
                wrote = [m.get("time") for m in kc["metadata"].get("managedFields", [])
                         if m.get("subresource") == "status" and m.get("time")]
                if done and wrote:
                    lag.append(max(rfc3339(w) for w in wrote) - rfc3339(done))
        return (max(created) if created else None), (max(lag) if lag else None)

    def on_job_post(self, replica, phase):
        r = next(r for r in self.replicas if r.ident == replica)
        r.kill(hold=self.hold_victim)
        self.killed_detail = "%s, %s its Job POST reached the API server" % (
            replica, "before" if phase == "before" else "after")
        self.killed.set()

    def inject(self, fault):
        """Injects one fault; returns (detail, t when the API answers again)."""
        a = self.a
        if fault == "apiserver":
            kill_component(a, "kube-apiserver")
            time.sleep(self.rng.uniform(0.5, 3.0))
            cluster(a, "start-apiserver")
            return "SIGKILL", None
        if fault == "etcd":
            kill_component(a, "etcd")
            time.sleep(self.rng.uniform(0.5, 3.0))
            cluster(a, "up", *a.up_args.split())
            return "SIGKILL", None
        if fault == "compaction":
            rev = subprocess.run([CLUSTER_SH, "--dir", a.cluster, "compact"], check=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout.decode().strip()
            kill_component(a, "kube-apiserver")
            cluster(a, "start-apiserver")
            return "at revision %s" % rev, None
        if fault == "leader":
            self.killed.clear()
            phase = self.rng.choice(("before", "after"))
            # Half the time a lost pod: the victim stays down until convergence,
            # so the other replica must take the Lease when it expires (15 s);
            # else a container restart: back 1 s later with the same identity.
            self.hold_victim = self.rng.random() < 0.5
            self.faults.arm_job_hook(self.on_job_post, phase)
            self.relabel_fresh()
            if not self.killed.wait(60):
                self.faults.disarm()
                return "no Job POST within 60 s: nothing killed", None
            if self.hold_victim:
                return self.killed_detail + "; failover, back after convergence", None
            return self.killed_detail + "; back 1 s later", None
        if fault == "restart":
            for r in self.replicas:
                with r.lock:
                    r.held = r.intended = True
                    if r.running():
                        r.p.terminate()
            for r in self.replicas:
                r.stop(hold=True)
            for r in self.replicas:
                r.release()
            return "both replicas SIGTERMed, back 1 s later", None
        if fault in ("slow", "throttle"):
            with self.faults.lock:
                if fault == "slow":
                    self.faults.delay = (0.2, 1.5)
                else:
                    self.faults.throttle, self.faults.retry_after = 0.5, 1
            time.sleep(a.fault_seconds)
            return ("0.2-1.5 s per request" if fault == "slow" else "50% of requests 429, Retry-After: 1"), None
        raise ValueError(fault)

    def clear(self):
        with self.faults.lock:
            self.faults.delay, self.faults.throttle = (0.0, 0.0), 0.0

    def run(self):
        a, api = self.a, self.api
        for i in range(a.kcs):
            name, ns = "faults-kc-%d" % i, "kc-scale-%d" % (i % a.namespaces)
            product = driver.PRODUCTS[i % len(driver.PRODUCTS)][0]
            driver.create_kc(api, name, ns, product, i)
            self.kcs.append((ns, name, product))
        for r in self.replicas:
            r.start()
        self.supervisor.start()
        sampler = Sampler(api)
        sampler.start()
        took, wrong = converge(api, self.kcs, a)
        if took is None:
            sys.exit("faults: the %d KernelCaches never converged before any fault: %s" % (a.kcs, wrong[:5]))
        log("baseline: %d KernelCaches converged in %.1f s, leader %s" % (a.kcs, took, leader(api)))
        baseline = took
        load = Load(api, a, self.rng)
        load.start()
        plan = []
        for f in FAULTS:
            plan += [f] * getattr(a, f if f != "compaction" else "compactions")
        self.rng.shuffle(plan)
        rows = []
        for n, fault in enumerate(plan):
            load.pause.clear()
            time.sleep(self.rng.uniform(1.0, 4.0))  # a random moment of the load
            dups0, regr0 = sampler.counts()
            exits0 = sum(r.exits for r in self.replicas)
            px0 = self.faults.snapshot()
            t_inject = time.monotonic()
            detail, _ = self.inject(fault)
            until_api(api)
            outage = time.monotonic() - t_inject if fault in OUTAGES else None
            load.pause.set()
            # A change right after the fault, through re-established watches.
            change = self.relabel_fresh()
            took, wrong = converge(api, self.kcs, a)
            self.clear()
            job_after, ready_lag = self.operator_share(change)
            for r in self.replicas:
                r.release()
            dups1, regr1 = sampler.counts()
            px1 = self.faults.snapshot()
            row = {"fault": fault, "detail": detail, "outage_s": outage, "converge_s": took, "not_converged": wrong,
                   "job_created_after_s": job_after, "ready_after_job_s": ready_lag,
                   "duplicate_jobs": dups1 - dups0, "status_regressions": regr1 - regr0,
                   "replica_exits": sum(r.exits for r in self.replicas) - exits0,
                   "proxy": {k: px1[k] - px0[k] for k in px1}}
            rows.append(row)
            log("%2d %-10s %-50s converged %s, duplicates %d, lost %d, 410s %d%s" % (
                n + 1, fault, detail[:50], "in %.1f s" % took if took is not None else "NOT",
                row["duplicate_jobs"], row["status_regressions"] + len(wrong), row["proxy"]["gone_410"],
                ", not converged: %s" % wrong[:5] if wrong else ""))
        load.stop.set()
        sampler.stop.set()
        self.supervisor.stop.set()
        for r in self.replicas:
            r.stop(hold=True)
            r.proxy.close()
        with sampler.lock:
            dups, regressions = sorted(str(d) for d in sampler.dups), list(sampler.regressions)
        return {"nodes": a.nodes, "kcs": a.kcs, "seed": a.seed, "baseline_converge_s": baseline, "rows": rows,
                "label_changes": load.changes, "pods_created": load.pods, "load_errors": load.errors,
                "warmup_jobs_seen": len(sampler.seen), "duplicates": dups, "status_regressions": regressions,
                "proxy": self.faults.snapshot(), "operator_starts": {r.ident: r.starts for r in self.replicas},
                "replica_exits": {r.ident: r.exits for r in self.replicas}}


def rfc3339(ts):
    return calendar.timegm(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ"))


def fmt_span(xs, f="%.1f"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f % xs[0] if len(xs) == 1 else (f + "-" + f) % (min(xs), max(xs))


def table(res, out=sys.stdout):
    p = lambda s="": print(s, file=out)  # noqa: E731
    p("\nfaults under load: %d kwok GPU nodes, %d KernelCaches, 2 operator replicas; seed %d" %
      (res["nodes"], res["kcs"], res["seed"]))
    p("| fault | count | outage s | converge s | operator's share: change to Job s, Job done to Ready s | "
      "duplicate Jobs | lost status updates | replica exits | 410s seen | 429s sent | requests |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    for fault in FAULTS:
        rs = [r for r in res["rows"] if r["fault"] == fault]
        if not rs:
            continue
        outage = fmt_span([r["outage_s"] for r in rs])
        lost = sum(r["status_regressions"] + len(r["not_converged"]) for r in rs)
        nc = sum(1 for r in rs if r["converge_s"] is None)
        conv = fmt_span([r["converge_s"] for r in rs]) + (" (%d NOT)" % nc if nc else "")
        share = "%s, %s" % (fmt_span([r.get("job_created_after_s") for r in rs], "%d"),
                            fmt_span([r.get("ready_after_job_s") for r in rs], "%d"))
        p("| %s | %d | %s | %s | %s | %d | %d | %d | %d | %d | %d |" % (
            fault, len(rs), outage, conv, share, sum(r["duplicate_jobs"] for r in rs), lost,
            sum(r.get("replica_exits", 0) for r in rs),
            sum(r["proxy"]["gone_410"] for r in rs), sum(r["proxy"]["throttled"] for r in rs),
            sum(r["proxy"]["requests"] for r in rs)))
    p("load: %d driver-label changes, %d pods created (%d calls failed during faults); %d warmup Jobs seen; "
      "duplicate Jobs in all: %d; status regressions in all: %d; baseline sync %.1f s" % (
          res["label_changes"], res["pods_created"], res["load_errors"], res["warmup_jobs_seen"],
          len(res["duplicates"]), len(res["status_regressions"]), res["baseline_converge_s"]))
    for r in res["rows"]:
        if r["fault"] == "leader":
            p("  leader kill: %s" % r["detail"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f, d in (("--cluster", None), ("--up-args", ""), ("--operator", None), ("--out", None)):
        p.add_argument(f, default=d, required=d is None)
    for f, d in (("--kcs", 10), ("--namespaces", 5), ("--nodes", 200), ("--apiserver", 3), ("--etcd", 2),
                 ("--compactions", 1), ("--leader", 3), ("--slow", 1), ("--throttle", 1), ("--restart", 1),
                 ("--converge-timeout", 120), ("--seed", 1)):
        p.add_argument(f, type=int, default=d)
    p.add_argument("--fault-seconds", type=float, default=10)
    p.add_argument("--log-level", default="info", help="the operator's --log-level")
    p.add_argument("--table", metavar="JSON", help="only print the table of an earlier run's --out")
    a = p.parse_args()
    if a.table:
        table(json.load(open(a.table)))
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("faults: terminated"))
    c = Campaign(a)
    try:
        res = c.run()
    finally:
        c.supervisor.stop.set()
        for r in c.replicas:
            r.kill(hold=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    table(res)
    bad = [r for r in res["rows"] if r["converge_s"] is None or r["duplicate_jobs"] or r["status_regressions"]]
    sys.exit(1 if bad or res["duplicates"] or res["status_regressions"] else 0)


if __name__ == "__main__":
    main()
