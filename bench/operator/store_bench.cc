// store_bench: see CMakeLists.txt. The objects are what the operator's
// informers keep (CacheTransformFor) of warmup Jobs, their pods and
// KernelCaches as a 5,000-node bench/scale run makes them.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kube/resource.h"
#include "kube/store.h"
#include "operator/controller/cache_transforms.h"
#include "operator/controller/caches.h"
#include "operator/controller/reconciler.h"

namespace {

using kc::kube::Json;

std::string Hex(unsigned i, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%0*x", width, i);
  return buf;
}

std::string Uid(unsigned i) { return Hex(i, 8) + "-1f0b-4c53-9a2e-" + Hex(i * 7919U, 12); }

Json Job(unsigned i) {
  const std::string kc = "kc-scale-1-kc-" + std::to_string(i / 3);
  const std::string fp = Hex(i * 2654435761U, 16);
  return Json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": ")" +
                     kc + "-warm-" + fp.substr(0, 10) + R"(", "namespace": "kc-scale-)" +
                     std::to_string(i % 20) + R"(",
      "uid": ")" + Uid(i) +
                     R"(", "resourceVersion": ")" + std::to_string(100000 + i) + R"(",
      "generation": 1, "creationTimestamp": "2026-12-02T09:00:00Z",
      "labels": {"kernelcache.io/name": ")" +
                     kc +
                     R"(", "kernelcache.io/component": "warmup",
                 "kernelcache.io/fingerprint": ")" +
                     fp + R"("},
      "annotations": {"kernelcache.io/warm-generation": "1",
                      "batch.kubernetes.io/job-tracking": ""},
      "ownerReferences": [{"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
        "name": ")" + kc +
                     R"(", "uid": ")" + Uid(i / 3) +
                     R"(", "controller": true, "blockOwnerDeletion": true}]},
    "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1,
      "template": {"spec": {"restartPolicy": "Never"}}},
    "status": {"startTime": "2026-12-02T09:00:01Z", "succeeded": 1, "ready": 0,
      "completionTime": "2026-12-02T09:00:40Z", "uncountedTerminatedPods": {},
      "conditions": [{"type": "SuccessCriteriaMet", "status": "True",
                      "lastProbeTime": "2026-12-02T09:00:40Z",
                      "lastTransitionTime": "2026-12-02T09:00:40Z"},
                     {"type": "Complete", "status": "True",
                      "lastProbeTime": "2026-12-02T09:00:40Z",
                      "lastTransitionTime": "2026-12-02T09:00:40Z"}]}})");
}

Json Pod(unsigned i) {
  Json job = Job(i);
  const std::string name = job["metadata"]["name"];
  Json labels = job["metadata"]["labels"];
  labels["batch.kubernetes.io/job-name"] = name;
  labels["job-name"] = name;
  labels["batch.kubernetes.io/controller-uid"] = job["metadata"]["uid"];
  labels["controller-uid"] = job["metadata"]["uid"];
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"uid": "", "resourceVersion": ")" +
                         std::to_string(200000 + i) + R"(",
      "creationTimestamp": "2026-12-02T09:00:00Z",
      "finalizers": ["batch.kubernetes.io/job-tracking"]},
    "spec": {"nodeName": "gpu-)" +
                         Hex(i, 5) + R"(", "restartPolicy": "Never"},
    "status": {"phase": "Succeeded", "hostIP": "10.0.0.7", "podIP": "10.244.1.9",
      "qosClass": "BestEffort", "startTime": "2026-12-02T09:00:02Z",
      "conditions": [{"type": "PodReadyToStartContainers", "status": "False",
                      "lastTransitionTime": "2026-12-02T09:00:35Z"},
                     {"type": "Initialized", "status": "True", "reason": "PodCompleted",
                      "lastTransitionTime": "2026-12-02T09:00:30Z"},
                     {"type": "Ready", "status": "False", "reason": "PodCompleted",
                      "lastTransitionTime": "2026-12-02T09:00:35Z"},
                     {"type": "ContainersReady", "status": "False", "reason": "PodCompleted",
                      "lastTransitionTime": "2026-12-02T09:00:35Z"},
                     {"type": "PodScheduled", "status": "True",
                      "lastTransitionTime": "2026-12-02T09:00:01Z"}],
      "initContainerStatuses": [{"name": "warmup", "image": "kc.local/model:test",
        "imageID": "", "ready": true, "restartCount": 0, "started": false,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
          "startedAt": "2026-12-02T09:00:02Z", "finishedAt": "2026-12-02T09:00:30Z"}}}],
      "containerStatuses": [{"name": "seal", "image": "kc.local/initwarm:test",
        "imageID": "", "ready": false, "restartCount": 0, "started": false,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
          "startedAt": "2026-12-02T09:00:31Z", "finishedAt": "2026-12-02T09:00:33Z"}}}]}})");
  pod["metadata"]["name"] = name + "-" + Hex(i * 31U, 5);
  pod["metadata"]["namespace"] = job["metadata"]["namespace"];
  pod["metadata"]["uid"] = Uid(i + 1000000);
  pod["metadata"]["labels"] = labels;
  pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", "Job"},
                                         {"name", name},
                                         {"uid", job["metadata"]["uid"]},
                                         {"controller", true},
                                         {"blockOwnerDeletion", true}}};
  return pod;
}

Json KernelCache(unsigned i) {
  Json fps = Json::array();
  for (unsigned f = 0; f < 3; ++f) {
    const std::string fp = Hex((i * 3 + f) * 2654435761U, 16);
    fps.push_back({{"id", fp},
                   {"phase", "Ready"},
                   {"nodes", 278},
                   {"driverVersion", "570.124.06"},
                   {"gpuProduct", "NVIDIA-H100-80GB-HBM3"},
                   {"computeCapability", "9.0"},
                   {"cudaVersion", "12.8"},
                   {"job", "kc-scale-1-kc-" + std::to_string(i) + "-warm-" + fp.substr(0, 10)},
                   {"digest", "sha256:" + Hex(i, 32) + Hex(f, 32)},
                   {"entries", 412},
                   {"bytes", 183500800},
                   {"warmedAt", "2026-12-02T09:00:40Z"}});
  }
  Json kc = Json::parse(R"({"apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"uid": ")" +
                        Uid(i) + R"(", "resourceVersion": ")" + std::to_string(300000 + i) +
                        R"(", "generation": 1, "creationTimestamp": "2026-12-02T08:59:00Z",
      "finalizers": ["kernelcache.io/cleanup"]},
    "spec": {"image": "kc.local/model:test",
      "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
      "podSelector": {"matchLabels": {"app": "model-1"}},
      "warmup": {"command": ["python3", "/app/warmup.py"], "timeoutSeconds": 1800},
      "storage": {"size": "20Gi", "storageClassName": "", "volumeName": "kc-pv-1"}},
    "status": {"observedGeneration": 1, "phase": "Ready", "readyFingerprints": 3,
      "conditions": [{"type": "Ready", "status": "True", "reason": "AllWarm",
        "message": "3 of 3 fingerprints warm", "lastTransitionTime": "2026-12-02T09:00:41Z",
        "observedGeneration": 1}]}})");
  kc.merge_patch({{"metadata",
                   {{"name", "kc-scale-1-kc-" + std::to_string(i)},
                    {"namespace", "kc-scale-" + std::to_string(i % 20)}}},
                  {"status", {{"fingerprints", fps}}}});
  return kc;
}

size_t HeapInUse() {
  malloc_trim(0);
  return mallinfo2().uordblks;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Row {
  const char* what;
  double tree_bytes, packed_bytes, copy_us, unpack_us;
  double store_all_bytes, store_keys_bytes;  // kube::Store: every label indexed, two keys
};

// Heap per object of a kube::Store (packed objects and their indexes) holding
// `kept`, with `options`.
double StoreBytes(const std::vector<Json>& kept, kc::kube::StoreOptions options) {
  const size_t h0 = HeapInUse();
  auto* store = new kc::kube::Store(std::move(options));
  for (const Json& o : kept) store->Upsert(o);
  const size_t h1 = HeapInUse();
  delete store;
  return static_cast<double>(h1 - h0) / static_cast<double>(kept.size());
}

// `make(i)` for i in [0, n): the kept objects, then their heap as trees in a
// map and packed in a map, and the CPU of reading each back (a tree copy
// against an unpack), `reads` times over.
template <typename Make>
Row Measure(const char* what, const kc::kube::Resource& resource, unsigned n, int reads,
            Make make) {
  const kc::kube::ObjectTransform keep = kc::op::CacheTransformFor(resource);
  std::vector<Json> kept;
  kept.reserve(n);
  for (unsigned i = 0; i < n; ++i) kept.push_back(keep(make(i)));

  const size_t h0 = HeapInUse();
  auto* trees = new std::map<std::string, Json>();
  for (const Json& o : kept) trees->emplace(kc::kube::ObjectKey(o), o);
  const size_t h1 = HeapInUse();
  auto* packed = new std::map<std::string, std::string>();
  for (const Json& o : kept) packed->emplace(kc::kube::ObjectKey(o), kc::kube::PackObject(o));
  const size_t h2 = HeapInUse();

  size_t sink = 0;
  auto t = std::chrono::steady_clock::now();
  for (int r = 0; r < reads; ++r) {
    for (const auto& [key, o] : *trees) sink += Json(o).size();
  }
  const double copy_s = Seconds(t);
  t = std::chrono::steady_clock::now();
  for (int r = 0; r < reads; ++r) {
    for (const auto& [key, p] : *packed) sink += kc::kube::UnpackObject(p).size();
  }
  const double unpack_s = Seconds(t);
  if (sink == 0) std::abort();
  delete trees;
  delete packed;
  const double reads_total = static_cast<double>(n) * reads;
  return {what,
          static_cast<double>(h1 - h0) / n,
          static_cast<double>(h2 - h1) / n,
          copy_s / reads_total * 1e6,
          unpack_s / reads_total * 1e6,
          StoreBytes(kept, {}),
          StoreBytes(kept, {kc::op::Caches::IndexedLabels()})};
}

}  // namespace

int main(int argc, char** argv) {
  unsigned kcs = 200;
  int reads = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v <= 0 || v > 100000) {
      std::fprintf(stderr, "store_bench: %s wants a positive count, got \"%s\"\n", flag.c_str(),
                   argv[i + 1]);
      return 2;
    }
    if (flag == "--kcs") {
      kcs = static_cast<unsigned>(v);
    } else if (flag == "--reads") {
      reads = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "store_bench: unknown flag %s (--kcs N, --reads N)\n", flag.c_str());
      return 2;
    }
  }
  namespace r = kc::kube::resources;
  const unsigned jobs = kcs * 3;  // three fingerprints a KernelCache, as the rig's pools
  const Row rows[] = {
      Measure("warmup Job", r::kJobs, jobs, reads, Job),
      Measure("warmup pod", r::kPods, jobs, reads, Pod),
      Measure("KernelCache", kc::op::resources::KernelCaches(), kcs, reads, KernelCache),
  };
  std::printf("store_bench: %u KernelCaches, %u warmup Jobs and pods, %d reads of each\n", kcs,
              jobs, reads);
  std::printf(
      "| object | tree B | packed B | tree / packed | tree copy us | unpack us | "
      "unpack / copy |\n|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    std::printf("| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n", row.what, row.tree_bytes,
                row.packed_bytes, row.tree_bytes / row.packed_bytes, row.copy_us, row.unpack_us,
                row.unpack_us / row.copy_us);
  }
  std::printf(
      "\nkube::Store, packed objects and their indexes, heap bytes per object:\n"
      "| object | every label indexed | KernelCache labels only | every / only |\n"
      "|---|---|---|---|\n");
  for (const Row& row : rows) {
    std::printf("| %s | %.0f | %.0f | %.2f |\n", row.what, row.store_all_bytes,
                row.store_keys_bytes, row.store_all_bytes / row.store_keys_bytes);
  }
  return 0;
}
