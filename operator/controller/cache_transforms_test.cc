#include "operator/controller/cache_transforms.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/store.h"
#include "operator/controller/gate_reports.h"
#include "operator/controller/reconciler.h"
#include "operator/decide/pod_parts.h"
#include "operator/decide/views.h"

namespace kc::op {
namespace {

using kube::Json;

Json Load(const std::string& file) {
  std::ifstream in(std::string(KC_SOURCE_DIR) + "/operator/controller/testdata/" + file);
  std::stringstream s;
  s << in.rdbuf();
  return Json::parse(s.str());
}

// What the API server adds that nothing in the operator reads: managedFields,
// client annotations, the bulk of spec and status.
Json Noisy(Json o) {
  Json& meta = o["metadata"];
  meta["managedFields"] = {
      {{"apiVersion", "v1"},
       {"fieldsType", "FieldsV1"},
       {"manager", "kubectl-client-side-apply"},
       {"operation", "Update"},
       {"time", "2026-12-02T09:00:00Z"},
       {"fieldsV1", {{"f:metadata", {{"f:labels", {{".", Json::object()}}}}}}}}};
  if (!meta.contains("annotations")) meta["annotations"] = Json::object();
  meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = std::string(600, 'x');
  return o;
}

// The store's contract: key, resume point and indexes read the same.
void ExpectStoreReadsTheSame(const Json& whole, const Json& kept, const std::string& name) {
  EXPECT_EQ(kube::ObjectKey(kept), kube::ObjectKey(whole)) << name;
  EXPECT_EQ(kube::ObjectResourceVersion(kept), kube::ObjectResourceVersion(whole)) << name;
  EXPECT_EQ(kube::NamespaceIndexFunc(kept), kube::NamespaceIndexFunc(whole)) << name;
  EXPECT_EQ(kube::LabelIndexFunc(kept), kube::LabelIndexFunc(whole)) << name;
  EXPECT_EQ(kube::OwnerUidIndexFunc(kept), kube::OwnerUidIndexFunc(whole)) << name;
  EXPECT_FALSE(kept["metadata"].contains("managedFields")) << name;
  EXPECT_LT(kept.dump().size(), whole.dump().size()) << name;
}

struct Case {
  std::string name;
  Json object;
};

// ---- Nodes: NodeViewFromJson (reconciler, resolve, the node event filter).

TEST(CacheTransforms, NodeViewReadsTheSameFromTheKeptNode) {
  const Json gpu = Load("node-gpu.json");
  auto with = [&](const std::function<void(Json&)>& change) {
    Json n = gpu;
    change(n);
    return n;
  };
  const std::vector<Case> cases = {
      {"a kwok GPU node as the API serves it", gpu},
      {"NotReady", with([](Json& n) {
         n["status"]["conditions"] = {
             {{"type", "Ready"}, {"status", "False"}, {"reason", "KubeletNotReady"}}};
       })},
      {"Unknown", with([](Json& n) {
         for (Json& c : n["status"]["conditions"]) c["status"] = "Unknown";
       })},
      {"no conditions", with([](Json& n) { n["status"].erase("conditions"); })},
      {"hostile conditions", with([](Json& n) { n["status"]["conditions"] = "hostile"; })},
      {"cordoned", with([](Json& n) { n["spec"]["unschedulable"] = true; })},
      {"no allocatable", with([](Json& n) { n["status"].erase("allocatable"); })},
      {"a GPU count that is not one",
       with([](Json& n) { n["status"]["allocatable"]["nvidia.com/gpu"] = "1.5"; })},
      {"being deleted",
       with([](Json& n) { n["metadata"]["deletionTimestamp"] = "2026-12-02T09:00:00Z"; })},
      {"no labels", with([](Json& n) { n["metadata"].erase("labels"); })},
  };
  const kube::ObjectTransform keep = CacheTransformFor(kube::resources::kNodes);
  for (const Case& c : cases) {
    const Json kept = keep(c.object);
    EXPECT_EQ(NodeViewFromJson(kept), NodeViewFromJson(c.object)) << c.name;
    ExpectStoreReadsTheSame(c.object, kept, c.name);
    EXPECT_FALSE(kept["metadata"].contains("annotations")) << c.name;
    EXPECT_FALSE(kept["status"].contains("images")) << c.name;
  }
}

// The figure behind the transform: how much of a GPU node is kept.
TEST(CacheTransforms, KeepsUnderAThirdOfAGpuNode) {
  const Json gpu = Load("node-gpu.json");
  const size_t whole = gpu.dump().size();
  const size_t kept = CacheTransformFor(kube::resources::kNodes)(gpu).dump().size();
  const size_t no_managed = kube::WithoutManagedFields(gpu).dump().size();
  RecordProperty("whole_bytes", static_cast<int>(whole));
  RecordProperty("kept_bytes", static_cast<int>(kept));
  EXPECT_LT(kept * 3, whole) << whole << " -> " << kept << " (without managedFields only "
                             << no_managed << ")";
}

// The node store keeps only what a relist compares (the NodeIndex holds the
// view); no other store is reduced further.
TEST(CacheTransforms, TheNodeStoreKeepsOnlyNameAndResourceVersion) {
  const Json gpu = Load("node-gpu.json");
  const Json kept = CacheKeepFor(kube::resources::kNodes)(gpu);
  EXPECT_EQ(kept, (Json{{"metadata",
                         {{"name", gpu["metadata"]["name"]},
                          {"resourceVersion", gpu["metadata"]["resourceVersion"]}}}}));
  EXPECT_FALSE(kube::ObjectKey(kept).empty());
  for (const kube::Resource* r : {&kube::resources::kPods, &kube::resources::kJobs,
                                  &kube::resources::kPersistentVolumeClaims}) {
    EXPECT_FALSE(CacheKeepFor(*r)) << r->resource;
  }
  EXPECT_FALSE(CacheKeepFor(resources::KernelCaches()));
}

// ---- Pods: PodViewFromJson (warmup pods), GateReportsFromPod (gated pods).

Json WarmupPod() {
  return Noisy(Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "llama-warm-0123-abcde", "namespace": "ml", "uid": "pod-uid",
      "resourceVersion": "812", "creationTimestamp": "2026-12-02T09:00:00Z",
      "labels": {"kernelcache.io/name": "llama", "kernelcache.io/component": "warmup",
                 "kernelcache.io/fingerprint": "0123456789abcdef",
                 "batch.kubernetes.io/job-name": "llama-warm-0123", "job-name": "llama-warm-0123"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "llama-warm-0123",
                           "uid": "job-uid", "controller": true}],
      "finalizers": ["batch.kubernetes.io/job-tracking"]},
    "spec": {"nodeName": "gpu-00007", "restartPolicy": "Never",
      "initContainers": [{"name": "warmup", "image": "registry.example/llama:1",
                          "command": ["python3", "/app/warmup.py"],
                          "env": [{"name": "TRITON_CACHE_DIR", "value": "/kc/triton"}]}],
      "containers": [{"name": "seal", "image": "kc.local/initwarm:test",
                      "args": ["seal", "--root=/var/cache/kernelcache"]}],
      "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "llama-cache"}}],
      "tolerations": [{"operator": "Exists"}]},
    "status": {"phase": "Succeeded", "hostIP": "10.0.0.7", "podIP": "10.244.1.9",
      "qosClass": "Burstable", "startTime": "2026-12-02T09:00:02Z",
      "conditions": [{"type": "PodScheduled", "status": "True",
                      "lastTransitionTime": "2026-12-02T09:00:01Z"}],
      "initContainerStatuses": [{"name": "warmup", "image": "registry.example/llama:1",
        "imageID": "sha256:aa", "ready": true, "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                 "finishedAt": "2026-12-02T09:00:30Z"}}}],
      "containerStatuses": [{"name": "seal", "image": "kc.local/initwarm:test",
        "imageID": "sha256:bb", "ready": false, "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
          "finishedAt": "2026-12-02T09:00:33Z",
          "message": "{\"fingerprint\":\"0123456789abcdef\",\"outcome\":\"Published\"}"}}}]}})"));
}

Json GatedPod() {
  core::GateReport r;
  r.outcome = core::GateOutcome::kWarm;
  r.reason = "Ready";
  r.fingerprint = "0123456789abcdef";
  r.waited_ms = 72;
  core::GateQuarantine q;
  q.fingerprint = "0123456789abcdef";
  q.level = "Checksums";
  q.reason = "digest mismatch";
  Json pod = WarmupPod();
  pod["metadata"]["name"] = "llama-server-7f9c-x2x";
  pod["metadata"]["labels"] = {{"app", "llama"}, {"kernelcache.io/consumer", "llama"}};
  pod["status"]["phase"] = "Running";
  pod["status"]["initContainerStatuses"] = {{{"name", "kernelcache-wait"},
                                             {"lastState",
                                              {{"terminated",
                                                {{"exitCode", 0},
                                                 {"message", core::GateReportToJson([&] {
                                                    core::GateReport bad = r;
                                                    bad.quarantined = {q};
                                                    return bad;
                                                  }())},
                                                 {"finishedAt", "2026-12-02T09:01:00Z"}}}}},
                                             {"state",
                                              {{"terminated",
                                                {{"exitCode", 0},
                                                 {"message", core::GateReportToJson(r)},
                                                 {"finishedAt", "2026-12-02T09:02:00Z"}}}}}}};
  return pod;
}

TEST(CacheTransforms, PodViewAndGateReportsReadTheSameFromTheKeptPod) {
  auto with = [](Json p, const std::function<void(Json&)>& change) {
    change(p);
    return p;
  };
  const std::vector<Case> cases = {
      {"a sealed warmup pod", WarmupPod()},
      {"a failed warmup",
       with(WarmupPod(),
            [](Json& p) {
              p["status"]["phase"] = "Failed";
              p["status"]["initContainerStatuses"][0]["state"]["terminated"] = {
                  {"exitCode", 1}, {"reason", "Error"}, {"message", "CUDA out of memory"}};
            })},
      {"unschedulable", with(WarmupPod(),
                             [](Json& p) {
                               p["spec"].erase("nodeName");
                               p["status"] = {{"phase", "Pending"},
                                              {"conditions",
                                               {{{"type", "PodScheduled"},
                                                 {"status", "False"},
                                                 {"reason", "Unschedulable"},
                                                 {"lastTransitionTime", "2026-12-02T09:00:05Z"},
                                                 {"message", "0/3 nodes are available"}}}}};
                             })},
      {"being deleted",
       with(WarmupPod(),
            [](Json& p) { p["metadata"]["deletionTimestamp"] = "2026-12-02T09:05:00Z"; })},
      {"a gated model pod with two gate reports", GatedPod()},
      {"hostile statuses",
       with(WarmupPod(), [](Json& p) { p["status"]["containerStatuses"] = "hostile"; })},
  };
  const kube::ObjectTransform keep = CacheTransformFor(kube::resources::kPods);
  for (const Case& c : cases) {
    const Json kept = keep(c.object);
    EXPECT_EQ(PodViewFromJson(kept), PodViewFromJson(c.object)) << c.name;
    EXPECT_EQ(GateReportsFromPod(kept), GateReportsFromPod(c.object)) << c.name;
    ExpectStoreReadsTheSame(c.object, kept, c.name);
    EXPECT_FALSE(kept["spec"].contains("containers")) << c.name;
  }
  EXPECT_EQ(GateReportsFromPod(keep(GatedPod())).size(), 2u);
  Json shared = GatedPod();
  shared["spec"]["shareProcessNamespace"] = true;
  EXPECT_EQ(keep(shared)["spec"]["shareProcessNamespace"], true)
      << "the miss intake refuses to harvest from such a pod";
}

// ---- Jobs: JobViewFromJson (warmup and GC Jobs).

Json WarmupJob() {
  return Noisy(Json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "llama-warm-0123", "namespace": "ml", "uid": "job-uid",
      "resourceVersion": "900", "creationTimestamp": "2026-12-02T09:00:00Z",
      "labels": {"kernelcache.io/name": "llama", "kernelcache.io/component": "warmup",
                 "kernelcache.io/fingerprint": "0123456789abcdef"},
      "annotations": {"kernelcache.io/warm-generation": "0"},
      "ownerReferences": [{"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
                           "name": "llama", "uid": "kc-uid", "controller": true}]},
    "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1,
      "template": {"metadata": {"labels": {"kernelcache.io/name": "llama"}},
        "spec": {"restartPolicy": "Never",
          "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
          "initContainers": [{"name": "warmup", "image": "registry.example/llama:1"}],
          "containers": [{"name": "seal", "image": "kc.local/initwarm:test"}]}}},
    "status": {"startTime": "2026-12-02T09:00:01Z", "succeeded": 1,
      "completionTime": "2026-12-02T09:00:40Z", "uncountedTerminatedPods": {},
      "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                     {"type": "Complete", "status": "True",
                      "lastTransitionTime": "2026-12-02T09:00:40Z"}]}})"));
}

TEST(CacheTransforms, JobViewReadsTheSameFromTheKeptJob) {
  auto with = [](Json j, const std::function<void(Json&)>& change) {
    change(j);
    return j;
  };
  const std::vector<Case> cases = {
      {"a complete warmup Job", WarmupJob()},
      {"failed", with(WarmupJob(),
                      [](Json& j) {
                        j["status"] = {{"failed", 1},
                                       {"conditions",
                                        {{{"type", "Failed"},
                                          {"status", "True"},
                                          {"reason", "BackoffLimitExceeded"},
                                          {"message", "Job has reached the backoff limit"},
                                          {"lastTransitionTime", "2026-12-02T09:10:00Z"}}}}};
                      })},
      {"running", with(WarmupJob(),
                       [](Json& j) {
                         j["status"] = {{"active", 1}};
                       })},
      {"a GC Job (its ids are an annotation)",
       with(WarmupJob(),
            [](Json& j) {
              j["metadata"]["labels"]["kernelcache.io/component"] = "gc";
              j["metadata"]["annotations"]["kernelcache.io/gc-fingerprints"] = "0123,4567";
            })},
      {"being deleted",
       with(WarmupJob(),
            [](Json& j) { j["metadata"]["deletionTimestamp"] = "2026-12-02T09:11:00Z"; })},
  };
  const kube::ObjectTransform keep = CacheTransformFor(kube::resources::kJobs);
  for (const Case& c : cases) {
    const Json kept = keep(c.object);
    EXPECT_EQ(JobViewFromJson(kept), JobViewFromJson(c.object)) << c.name;
    ExpectStoreReadsTheSame(c.object, kept, c.name);
    // Of the spec only what the template runs (operator/decide/pod_parts.h).
    ASSERT_TRUE(kept.contains("spec")) << c.name;
    EXPECT_EQ(kept["spec"].size(), 1u) << c.name;
    EXPECT_FALSE(kept["spec"]["kernelcache.io/parts"].empty()) << c.name;
    EXPECT_EQ(KeptPodParts(kept["spec"], Json()), PodPartsOf(c.object["spec"]["template"]["spec"]))
        << c.name;
  }
}

// ---- PVCs: PvcViewFromJson and the controller's PVC handler (owner, name).

TEST(CacheTransforms, PvcViewReadsTheSameFromTheKeptClaim) {
  const Json bound = Noisy(Json::parse(R"({
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "llama-cache", "namespace": "ml", "uid": "pvc-uid",
      "resourceVersion": "77", "creationTimestamp": "2026-12-02T09:00:00Z",
      "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
      "ownerReferences": [{"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
                           "name": "llama", "uid": "kc-uid", "controller": true}],
      "finalizers": ["kubernetes.io/pvc-protection"]},
    "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs",
             "volumeName": "pv-1", "volumeMode": "Filesystem",
             "resources": {"requests": {"storage": "20Gi"}}},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"],
               "capacity": {"storage": "20Gi"}}})"));
  Json pending = bound;
  pending["status"] = {{"phase", "Pending"}};
  pending["metadata"].erase("ownerReferences");
  const kube::ObjectTransform keep = CacheTransformFor(kube::resources::kPersistentVolumeClaims);
  for (const Case& c : std::vector<Case>{{"bound, ours", bound}, {"pending, not ours", pending}}) {
    const Json kept = keep(c.object);
    EXPECT_EQ(PvcViewFromJson(kept, "kc-uid"), PvcViewFromJson(c.object, "kc-uid")) << c.name;
    EXPECT_EQ(api::MetaOf(kept).owner_references.size(),
              api::MetaOf(c.object).owner_references.size())
        << c.name;
    ExpectStoreReadsTheSame(c.object, kept, c.name);
  }
}

// ---- KernelCaches: only managedFields go.

TEST(CacheTransforms, KernelCacheKeepsAllButManagedFields) {
  const Json kc = Noisy(Json::parse(R"({
    "apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"name": "llama", "namespace": "ml", "uid": "kc-uid", "resourceVersion": "5",
                 "generation": 2, "finalizers": ["kernelcache.io/cleanup"]},
    "spec": {"podSelector": {"matchLabels": {"app": "llama"}},
             "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
             "image": "registry.example/llama@sha256:0000000000000000000000000000000000000000000000000000000000000000",
             "runtime": {"pytorch": "2.11.0", "triton": "3.6.0"},
             "warmup": {"command": ["python3", "/app/warmup.py"]},
             "storage": {"size": "20Gi"}},
    "status": {"phase": "Warming", "ready": "1/2",
               "fingerprints": [{"id": "0123456789abcdef", "state": "Ready"}]}})"));
  const Json kept = CacheTransformFor(resources::KernelCaches())(kc);
  Json want = kc;
  want["metadata"].erase("managedFields");
  EXPECT_EQ(kept, want);
  EXPECT_EQ(core::KernelCacheFromJson(kept).spec, core::KernelCacheFromJson(kc).spec);
  EXPECT_EQ(core::KernelCacheFromJson(kept).status, core::KernelCacheFromJson(kc).status);
  EXPECT_EQ(kube::ObjectReferenceToJson(kube::ReferenceTo(kept)),
            kube::ObjectReferenceToJson(kube::ReferenceTo(kc)));
  ExpectStoreReadsTheSame(kc, kept, "KernelCache");
}

// A relist transforms each item while its page is parsed (kube::ListEach),
// and a client that cannot leaves that to ListEach: either way the kept
// object must be what one application gives, so every transform is a
// projection.
TEST(CacheTransforms, EveryTransformIsAProjection) {
  const std::vector<std::pair<kube::Resource, Json>> cases = {
      {kube::resources::kNodes, Noisy(Load("node-gpu.json"))},
      {kube::resources::kPods, Noisy(WarmupPod())},
      {kube::resources::kPods, Noisy(GatedPod())},
      {kube::resources::kJobs, Noisy(WarmupJob())},
  };
  for (const auto& [resource, object] : cases) {
    const kube::ObjectTransform t = CacheTransformFor(resource);
    const Json once = t(object);
    EXPECT_EQ(t(once), once) << resource.resource;
    const kube::ObjectTransform keep = CacheKeepFor(resource);
    if (keep) {
      EXPECT_EQ(keep(keep(once)), keep(once)) << resource.resource;
    }
  }
}

}  // namespace
}  // namespace kc::op
