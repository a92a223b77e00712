#!/usr/bin/env python3
"""Asserts on `helm template` output of charts/kernelcache for one value set.

Usage: check_render.py <set name> <rendered.yaml> [<repo root>]
Set names (chart_test.sh renders each with its --set flags):
  default, watchns, nowebhook, certmanager, servicemonitor, registry,
  registry-as-written, replicas1
Prints nothing and exits 0 when every check holds; else the failed check.
"""
import os
import sys

import yaml

NAMESPACED = {"kernelcaches", "kernelcaches/status", "kernelcaches/finalizers", "pods", "jobs",
              "persistentvolumeclaims", "events", "deployments", "statefulsets"}
FULL = "kc-operator"
# The chart's appVersion, the images' default tag: the release's VERSION.
VERSION = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "VERSION")).read().strip()
NS = "kernelcache-system"

# The least-privilege rules (docs/helm.md): resource -> verbs.
EXPECTED_NAMESPACED = {
    "kernelcaches": {"get", "list", "watch", "patch"},
    "kernelcaches/status": {"patch"},
    "kernelcaches/finalizers": {"update"},
    "pods": {"list", "watch"},
    "jobs": {"list", "watch", "create", "delete"},
    "persistentvolumeclaims": {"list", "watch", "create", "delete"},
    "events": {"create", "patch"},
    "deployments": {"list", "watch"},
    "statefulsets": {"list", "watch"},
}


def fail(msg):
    print(f"FAIL [{SET}]: {msg}")
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def one(docs, kind, name=None, ns=None):
    found = [d for d in by_kind(docs, kind)
             if (name is None or d["metadata"]["name"] == name)
             and (ns is None or d["metadata"].get("namespace") == ns)]
    check(len(found) == 1, f"want one {kind} {ns or ''}/{name or ''}, got {len(found)}")
    return found[0]


def verbs_of(rules):
    """resource -> set of verbs (resourceNames kept apart as resource@name)."""
    out = {}
    for r in rules:
        for g in r["apiGroups"]:
            check(g != "events.k8s.io", "events.k8s.io is not used (core v1 events only)")
        for res in r["resources"]:
            key = res
            if r.get("resourceNames"):
                key = res + "@" + ",".join(r["resourceNames"])
            out.setdefault(key, set()).update(r["verbs"])
    return out


def containers(doc):
    spec = doc["spec"]["template"]["spec"] if doc["kind"] == "Deployment" else doc["spec"]
    return spec, spec["containers"]


def args_of(dep):
    return dep["spec"]["template"]["spec"]["containers"][0]["args"]


SET = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
root = sys.argv[3] if len(sys.argv) > 3 else None

dep = one(docs, "Deployment", FULL, NS)
args = args_of(dep)
pod, cs = containers(dep)
c = cs[0]

# --- Always: the Deployment's hardening, probes, requests, anti-affinity.
check(pod["securityContext"]["runAsNonRoot"] is True, "runAsNonRoot")
check(pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", "pod seccomp")
sc = c["securityContext"]
check(sc["readOnlyRootFilesystem"] is True, "readOnlyRootFilesystem")
check(sc["allowPrivilegeEscalation"] is False, "allowPrivilegeEscalation")
check(sc["capabilities"]["drop"] == ["ALL"], "capabilities drop ALL")
check(sc["seccompProfile"]["type"] == "RuntimeDefault", "container seccomp")
check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness /healthz")
check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness /readyz")
check("cpu" in c["resources"]["requests"] and "memory" in c["resources"]["requests"], "requests")
check("--leader-elect=true" in args, "leader election on")
pref = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
check(pref[0]["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname", "anti-affinity")
one(docs, "ServiceAccount", FULL, NS)
svc = one(docs, "Service", FULL, NS)
check(svc["spec"]["ports"][0]["targetPort"] == "http", "Service targets http")
# The miss channel: a listener of its own, served by the Service under the
# same port number (the operator derives the watchers' URL from it).
misses = [p for p in svc["spec"]["ports"] if p["name"] == "misses"]
check(len(misses) == 1 and misses[0]["targetPort"] == "misses", f"Service misses port {svc['spec']['ports']}")
mport = [p["containerPort"] for p in c["ports"] if p["name"] == "misses"]
check(len(mport) == 1 and misses[0]["port"] == mport[0], f"misses port {mport} {misses}")
check(f"--misses-port={mport[0] if mport else ''}" in args, [a for a in args if "misses" in a])
check(any(a.startswith("--miss-watcher-uid=") for a in args), "--miss-watcher-uid")
for d in docs:
    if d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "PriorityClass",
                         "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
                         "CustomResourceDefinition"):
        check(d["metadata"].get("namespace"), f"{d['kind']} {d['metadata']['name']} has no namespace")

# The helm test hook: a pod, hook annotation test, hardened.
tests = [d for d in docs if d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
tpods = [d for d in tests if d["kind"] == "Pod"]
check(len(tpods) == 1, f"one helm test pod, got {len(tpods)}")
tpod = tpods[0]
check(tpod["spec"]["restartPolicy"] == "Never", "test pod restartPolicy Never")
check(tpod["spec"]["securityContext"]["runAsNonRoot"] is True, "test pod non-root")
script = tpod["spec"]["containers"][0]["args"][0]
check("KC_OPERATOR_SERVICE_HOST" in script and "/healthz" in script and "/readyz" in script,
      "test pod asks /healthz and /readyz through the Service's env")

cr = one(docs, "ClusterRole", FULL)
crv = verbs_of(cr["rules"])
leader = one(docs, "Role", FULL + "-leader", NS)
lv = verbs_of(leader["rules"])
check(lv.get("leases") == {"get", "create", "update"}, f"leases verbs {lv.get('leases')}")
check(crv.get("nodes") == {"list", "watch"}, f"nodes verbs {crv.get('nodes')}")
whcfg = f"mutatingwebhookconfigurations@{FULL}"
secret = f"secrets@{FULL}-webhook-tls"
pdbs = by_kind(docs, "PodDisruptionBudget")
sms = by_kind(docs, "ServiceMonitor")
mwc = by_kind(docs, "MutatingWebhookConfiguration")
vwc = by_kind(docs, "ValidatingWebhookConfiguration")
cm_objs = [d for d in docs if d["apiVersion"].startswith("cert-manager.io/")]

if SET != "watchns":
    for res, verbs in EXPECTED_NAMESPACED.items():
        check(crv.get(res) == verbs, f"ClusterRole {res}: {crv.get(res)} != {verbs}")
    check(all(r["metadata"]["name"] in (FULL + "-leader", FULL + "-test")
              for r in by_kind(docs, "Role")),
          "no namespaced Roles besides the leader Role without watchNamespaces")
    check("--namespaces" not in " ".join(args), "no --namespaces flag")

if SET in ("default", "servicemonitor", "registry", "registry-as-written", "replicas1", "watchns"):
    # The operator's own CA: it writes caBundle and the Secret.
    check(crv.get(whcfg) == {"get", "patch"}, f"webhook configurations {crv.get(whcfg)}")
    check(crv.get(f"validatingwebhookconfigurations@{FULL}") == {"get", "patch"}, "validating cfg")
    check(crv.get("storageclasses") == {"get"}, "storageclasses get")
    check(crv.get("persistentvolumes") == {"list"}, "persistentvolumes list")
    check(crv.get("tokenreviews") == {"create"}, "tokenreviews create (miss reports)")
    check(lv.get(secret) == {"get", "patch"} and lv.get("secrets") == {"create"},
          f"secret verbs {lv.get(secret)} / {lv.get('secrets')}")
    check(len(mwc) == 1 and len(vwc) == 1, "both webhook configurations")
    check("--webhook-cert-secret-external=false" in args, "operator runs its own CA")
    check(not cm_objs, "no cert-manager objects")
    check("cert-manager.io/inject-ca-from" not in str(mwc[0]["metadata"]), "no cainjector annotation")

if SET in ("default", "watchns", "nowebhook", "certmanager", "servicemonitor", "registry",
           "registry-as-written"):
    check(dep["spec"]["replicas"] == 2, "two replicas by default")
    check(len(pdbs) == 1 and pdbs[0]["spec"]["minAvailable"] == 1, "PDB minAvailable 1")
    check(pdbs[0]["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"],
          "PDB selects the operator pods")

if SET != "servicemonitor":
    check(not sms, "ServiceMonitor rendered while disabled")

if SET == "default":
    check(c["image"] == f"ghcr.io/kernelcache/operator:{VERSION}", c["image"])
    check(f"--initwarm-image=ghcr.io/kernelcache/initwarm:{VERSION}" in args, "initwarm image")
    check(tpod["spec"]["containers"][0]["image"] == "docker.io/library/busybox:1.36", "test image")
    check("imagePullSecrets" not in pod, "no pull secrets by default")
    check("nodeSelector" not in pod and "tolerations" not in pod, "no scheduling constraints")
    ns_expr = mwc[0]["webhooks"][0]["namespaceSelector"]["matchExpressions"]
    check(len(ns_expr) == 1 and ns_expr[0]["operator"] == "NotIn"
          and set(ns_expr[0]["values"]) == {NS, "kube-system"}, f"pod webhook namespaces {ns_expr}")
    check(len(tests) == 4, f"test hook: SA, Role, RoleBinding, Pod; got {[t['kind'] for t in tests]}")
    trole = [t for t in tests if t["kind"] == "Role"][0]
    check(trole["rules"] == [{"apiGroups": ["kernelcache.io"], "resources": ["kernelcaches"],
                              "verbs": ["create"]}], f"test Role {trole['rules']}")
    check("kernelcache-helm-test-absent" in script and "dryRun=All" in script, "test pod checks the webhook")
    # deploy/rbac.yaml is the same least-privilege set (names differ).
    if root:
        plain = [d for d in yaml.safe_load_all(open(root + "/deploy/rbac.yaml")) if d]
        pcr = verbs_of(one(plain, "ClusterRole", "kernelcache-operator")["rules"])
        pl = verbs_of(one(plain, "Role", "kernelcache-operator-leader")["rules"])

        def rename(v):
            return {k.replace("@kernelcache-webhook-tls", f"@{FULL}-webhook-tls")
                     .replace("@kernelcache-webhook", f"@{FULL}"): s for k, s in v.items()}
        check(rename(pcr) == crv, f"deploy/rbac.yaml ClusterRole {pcr} != chart {crv}")
        check(rename(pl) == lv, f"deploy/rbac.yaml leader Role {pl} != chart {lv}")
        # deploy/priorityclass.yaml is the chart's class with default values.
        pc = one(docs, "PriorityClass", "kernelcache-warmup")
        ppc = one([d for d in yaml.safe_load_all(open(root + "/deploy/priorityclass.yaml")) if d],
                  "PriorityClass", "kernelcache-warmup")
        for k in ("value", "preemptionPolicy", "globalDefault", "description"):
            check(ppc.get(k) == pc.get(k),
                  f"deploy/priorityclass.yaml {k} {ppc.get(k)!r} != chart {pc.get(k)!r}")
        # kubectl apply -f deploy/ goes in name order: the Namespace first.
        files = sorted(f for f in os.listdir(root + "/deploy") if f.endswith(".yaml"))
        first = [d for d in yaml.safe_load_all(open(root + "/deploy/" + files[0])) if d]
        check([d["kind"] for d in first] == ["Namespace"],
              f"deploy/{files[0]} sorts first but is not only the Namespace")
        for f in files[1:]:
            for d in yaml.safe_load_all(open(root + "/deploy/" + f)):
                check(not d or d["kind"] != "Namespace", f"deploy/{f}: a Namespace after {files[0]}")

if SET == "watchns":
    check("--namespaces=team-a,team-b" in args, f"--namespaces in {args}")
    roles = {r["metadata"]["namespace"]: r for r in by_kind(docs, "Role")
             if r["metadata"]["name"] == FULL}
    check(set(roles) == {"team-a", "team-b"}, f"namespaced Roles in {set(roles)}")
    for ns, r in roles.items():
        rv = verbs_of(r["rules"])
        check(rv == EXPECTED_NAMESPACED, f"Role in {ns}: {rv}")
        rb = one(docs, "RoleBinding", FULL, ns)
        check(rb["roleRef"]["name"] == FULL and rb["subjects"][0]["namespace"] == NS,
              f"RoleBinding in {ns}")
    leaked = NAMESPACED & set(crv)
    check(not leaked, f"ClusterRole has namespaced resources {leaked}")
    check(set(crv) == {"nodes", "tokenreviews", "storageclasses", "persistentvolumes", whcfg,
                       f"validatingwebhookconfigurations@{FULL}"},
          f"ClusterRole is cluster-wide only: {set(crv)}")
    # Events on the webhook Secret in the release namespace (not watched).
    check(lv.get("events") == {"create", "patch"}, f"leader Role events {lv.get('events')}")
    ns_expr = mwc[0]["webhooks"][0]["namespaceSelector"]["matchExpressions"]
    ins = [e for e in ns_expr if e["operator"] == "In"]
    check(len(ins) == 1 and ins[0]["values"] == ["team-a", "team-b"],
          f"pod webhook sent the watched namespaces only: {ns_expr}")

if SET == "nowebhook":
    check(not mwc and not vwc, "webhook configurations rendered while disabled")
    check(not any(a.startswith("--webhook") for a in args), f"webhook flags {args}")
    check(not [s for s in by_kind(docs, "Service") if s["metadata"]["name"].endswith("-webhook")],
          "webhook Service rendered")
    check(not any(k.startswith("secrets") for k in lv), f"secret verbs without webhook: {lv}")
    check(not any("webhookconfigurations" in k for k in crv) and "storageclasses" not in crv
          and "persistentvolumes" not in crv,
          f"webhook permissions without webhook: {crv}")
    check(len(tests) == 1, "test hook is the pod only (no dry-run SA) without the webhook")
    check(tpod["spec"].get("automountServiceAccountToken") is False, "test pod has no token")

if SET == "certmanager":
    check("--webhook-cert-secret-external=true" in args, "operator told the Secret is external")
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in cm_objs)
    check(kinds == [("Certificate", f"{FULL}-ca"), ("Certificate", f"{FULL}-webhook"),
                    ("Issuer", f"{FULL}-ca"), ("Issuer", f"{FULL}-selfsigned")],
          f"cert-manager objects {kinds}")
    serving = one(docs, "Certificate", f"{FULL}-webhook", NS)
    check(serving["spec"]["secretName"] == f"{FULL}-webhook-tls", "Certificate secretName")
    check(serving["spec"]["issuerRef"]["name"] == f"{FULL}-ca", "serving cert signed by the CA Issuer")
    check(f"{FULL}-webhook.{NS}.svc" in serving["spec"]["dnsNames"], "DNS name of the Service")
    check(one(docs, "Certificate", f"{FULL}-ca", NS)["spec"]["isCA"] is True, "CA Certificate")
    check(one(docs, "Issuer", f"{FULL}-ca", NS)["spec"]["ca"]["secretName"] == f"{FULL}-webhook-ca",
          "CA Issuer")
    for cfg in mwc + vwc:
        check(cfg["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == f"{NS}/{FULL}-webhook",
              f"cainjector annotation on {cfg['kind']}")
    check(lv.get(secret) == {"get"} and "secrets" not in lv, f"Secret read-only: {lv}")
    # Read only (each replica checks its certificate against caBundle for
    # /readyz); cainjector writes it.
    check({k: v for k, v in crv.items() if "webhookconfigurations" in k} ==
          {whcfg: {"get"}, f"validatingwebhookconfigurations@{FULL}": {"get"}},
          f"caBundle read-only: {crv}")

if SET == "servicemonitor":
    check(len(sms) == 1, "ServiceMonitor rendered when enabled")
    sm = sms[0]
    check(sm["apiVersion"] == "monitoring.coreos.com/v1", sm["apiVersion"])
    ep = sm["spec"]["endpoints"][0]
    check(ep["port"] == "http" and ep["path"] == "/metrics" and ep["interval"] == "15s", f"endpoint {ep}")
    check(sm["metadata"]["labels"].get("release") == "prom", "extra labels")
    sel = sm["spec"]["selector"]["matchLabels"]
    check(all(svc["metadata"]["labels"].get(k) == v for k, v in sel.items()),
          f"ServiceMonitor selects the operator Service: {sel}")
    whs = [s for s in by_kind(docs, "Service") if s["metadata"]["name"].endswith("-webhook")]
    check(not all(whs[0]["metadata"]["labels"].get(k) == v for k, v in sel.items()),
          "ServiceMonitor does not select the webhook Service")

if SET == "registry":
    check(c["image"] == f"mirror.example:5000/kernelcache/operator:{VERSION}", c["image"])
    check(f"--initwarm-image=mirror.example:5000/kernelcache/initwarm:{VERSION}" in args, "initwarm mirror")
    check(tpod["spec"]["containers"][0]["image"] == "mirror.example:5000/library/busybox:1.36",
          "test image mirror")
    check(pod["imagePullSecrets"] == [{"name": "regcred"}], "imagePullSecrets")
    check(tpod["spec"]["imagePullSecrets"] == [{"name": "regcred"}], "test pod imagePullSecrets")
    check(pod["nodeSelector"] == {"pool": "system"}, "nodeSelector")
    check(pod["tolerations"][0]["key"] == "dedicated", "tolerations")

if SET == "registry-as-written":
    check(c["image"] == "kernelcache.local/operator:dev", c["image"])
    check("--initwarm-image=my.registry/kc/initwarm:7" in args, [a for a in args if "initwarm" in a])
    check(c["imagePullPolicy"] == "Never", "pullPolicy")
    check("--resolve-url=http://10.96.0.50" in args, [a for a in args if "resolve" in a])
    svc = one(docs, "Service", FULL)
    check(svc["spec"].get("clusterIP") == "10.96.0.50", f"Service clusterIP {svc['spec']}")
else:
    check(not any(a.startswith("--resolve-url") for a in args), "no --resolve-url by default")
    check("clusterIP" not in one(docs, "Service", FULL)["spec"], "no pinned clusterIP by default")

if SET == "replicas1":
    check(dep["spec"]["replicas"] == 1, "replicas 1")
    check(not pdbs, "no PodDisruptionBudget with one replica")
