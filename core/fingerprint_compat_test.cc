// Fingerprint ids across versions: the ids below were computed by the first
// release from the node labels and KernelCache specs beside them. Every
// cluster's caches are named by such ids; an id that moves means every cache
// of that kind is re-warmed on the operator's upgrade. A new fingerprint
// input must be left out of the canonical JSON while it has its default
// (core/canonical_json.h), so these ids hold. Never edit an id here to make
// a change pass: add the input the compatible way instead.
#include <gtest/gtest.h>

#include "core/api_types.h"
#include "core/fingerprint.h"

namespace kc::core {
namespace {

using Labels = std::map<std::string, std::string>;

// The label sets are frozen copies, on purpose not shared with other tests'
// fixtures: editing a fixture must never move a pinned id. They carry labels
// that are not inputs today (nvidia.com/gpu.count, gpu.memory), so a future
// input read from them shows here.

Labels H200() {
  return {{"nvidia.com/gpu.product", "NVIDIA-H200"},
          {"nvidia.com/gpu.compute.major", "9"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.full", "580.159.04"},
          {"nvidia.com/cuda.driver-version.major", "580"},
          {"nvidia.com/cuda.driver-version.minor", "159"},
          {"nvidia.com/cuda.driver-version.revision", "04"},
          {"nvidia.com/cuda.runtime-version.full", "13.0"},
          {"nvidia.com/gpu.count", "8"},
          {"nvidia.com/gpu.memory", "143771"},
          {"nvidia.com/gpu.present", "true"},
          {"kubernetes.io/arch", "amd64"}};
}

Labels A100Deprecated() {  // GFD before v0.15
  return {{"nvidia.com/gpu.product", "A100-SXM4-40GB"},
          {"nvidia.com/gpu.compute.major", "8"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver.major", "455"},
          {"nvidia.com/cuda.driver.minor", "06"},
          {"nvidia.com/cuda.driver.rev", ""},
          {"nvidia.com/cuda.runtime.major", "11"},
          {"nvidia.com/cuda.runtime.minor", "1"},
          {"nvidia.com/gpu.count", "4"},
          {"kubernetes.io/arch", "amd64"}};
}

Labels MigShared() {  // a MIG slice under time-slicing
  return {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"},
          {"nvidia.com/gpu.compute.major", "8"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.major", "550"},
          {"nvidia.com/cuda.driver-version.minor", "54"},
          {"nvidia.com/cuda.driver-version.revision", "15"},
          {"nvidia.com/cuda.runtime-version.major", "12"},
          {"nvidia.com/cuda.runtime-version.minor", "4"},
          {"kubernetes.io/arch", "amd64"}};
}

Labels Gh200() {
  return {{"nvidia.com/gpu.product", "NVIDIA-GH200-480GB"},
          {"nvidia.com/gpu.compute.major", "9"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.full", "570.124.06"},
          {"nvidia.com/cuda.runtime-version.full", "12.8"},
          {"nvidia.com/gpu.count", "1"},
          {"kubernetes.io/arch", "arm64"}};
}

struct Pinned {
  std::string name;
  Labels labels;
  const char* spec;  // a KernelCache spec as stored in the API server
  std::string id;    // computed by the first release; never edited
};

TEST(FingerprintCompat, IdsOfTheFirstReleaseHold) {
  const Pinned cases[] = {
      {"H200, pinned image, two runtime versions", H200(),
       R"({"image": "registry.example/llama@sha256:abc",
           "runtime": {"triton": "3.6.0", "pytorch": "2.11.0"},
           "warmup": {"command": ["python", "warm.py"], "env": [{"name": "HF_HOME", "value": "/m"}]},
           "storage": {"size": "10Gi"}})",
       "9c08515933aae947"},
      {"H200, cache-affecting env (valueFrom, other names and the operator's own cache-view "
       "variable TRITON_CACHE_AUTOTUNING left out)",
       H200(),
       R"({"image": "registry.example/llama@sha256:abc",
           "runtime": {"triton": "3.6.0", "pytorch": "2.11.0"},
           "warmup": {"command": ["python", "warm.py"], "env": [
             {"name": "TRITON_CACHE_AUTOTUNING", "value": "1"},
             {"name": "TORCHINDUCTOR_MAX_AUTOTUNE", "value": "1"},
             {"name": "CUDA_VISIBLE_DEVICES", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
             {"name": "HF_TOKEN", "value": "secret"}]},
           "storage": {"size": "10Gi"},
           "consume": {"mode": "Shared"}})",
       "6300542d53a6d55f"},
      {"A100, deprecated GFD labels, empty revision", A100Deprecated(),
       R"({"image": "kernelcache.local/jit-workload:dev", "runtime": {"triton": "3.6.0"},
           "warmup": {"command": ["python"]}, "storage": {"existingClaim": "shared"}})",
       "fc358ec0f091a4a2"},
      {"MIG slice, -SHARED dropped, split driver labels", MigShared(),
       R"({"image": "vllm/vllm-openai:v0.11.0", "runtime": {"vllm": "0.11.0"},
           "warmup": {"command": ["vllm"], "backoffLimit": 0}, "storage": {"size": "1Gi"}})",
       "980f8dbccade916f"},
      {"GH200 arm64, no runtime versions", Gh200(),
       R"({"image": "registry.example/model:1", "warmup": {"command": ["x"]},
           "storage": {"size": "1Gi"}, "retention": {"staleAfter": "1h"}})",
       "bad586394ab49df3"},
  };
  for (const auto& c : cases) {
    auto node = NodeFactsFromLabels(c.labels);
    ASSERT_TRUE(node.ok()) << c.name << ": " << node.status().message();
    std::vector<std::string> errors;
    KernelCacheSpec spec = SpecFromJson(Json::parse(c.spec), &errors);
    ASSERT_TRUE(errors.empty()) << c.name << ": " << errors.front();
    EXPECT_EQ(ComputeFingerprint(*node, RuntimeFactsFor(spec)).id, c.id)
        << c.name << ": this change moves existing fingerprint ids (every cache of this kind "
        << "would be re-warmed); leave a new input out of the canonical JSON while it has its "
        << "default (core/canonical_json.h)";
  }
}

// Spec fields that are not fingerprint inputs never move an id.
TEST(FingerprintCompat, NonInputSpecFieldsDoNotMoveIds) {
  const char* base = R"({"image": "registry.example/llama@sha256:abc",
      "runtime": {"triton": "3.6.0", "pytorch": "2.11.0"},
      "warmup": {"command": ["python", "warm.py"]}, "storage": {"size": "10Gi"}})";
  Json with = Json::parse(base);
  with["warmup"]["podAnnotations"] = {{"sidecar.istio.io/inject", "false"}};
  with["warmup"]["activeDeadlineSeconds"] = 600;
  with["consume"] = {{"mode", "SharedReadWrite"}, {"verify", "Checksums"}};
  auto node = NodeFactsFromLabels(H200());
  ASSERT_TRUE(node.ok());
  std::vector<std::string> errors;
  EXPECT_EQ(ComputeFingerprint(*node, RuntimeFactsFor(SpecFromJson(with, &errors))).id,
            "9c08515933aae947");
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace kc::core
