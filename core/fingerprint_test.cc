#include "core/fingerprint.h"

#include <gtest/gtest.h>

#include "testing/objects.h"

namespace kc::core {
namespace {

using Labels = std::map<std::string, std::string>;

// Label sets as GPU Feature Discovery writes them (from its README examples),
// current names and deprecated names.
Labels H200Current() {
  return {{"nvidia.com/gpu.product", "NVIDIA-H200"},
          {"nvidia.com/gpu.compute.major", "9"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.full", "580.159.04"},
          {"nvidia.com/cuda.driver-version.major", "580"},
          {"nvidia.com/cuda.driver-version.minor", "159"},
          {"nvidia.com/cuda.driver-version.revision", "04"},
          {"nvidia.com/cuda.runtime-version.full", "13.0"},
          {"nvidia.com/cuda.runtime-version.major", "13"},
          {"nvidia.com/cuda.runtime-version.minor", "0"},
          {"nvidia.com/gpu.present", "true"},
          {"kubernetes.io/arch", "amd64"}};
}

Labels A100Deprecated() {
  return {{"nvidia.com/gpu.product", "A100-SXM4-40GB"},
          {"nvidia.com/gpu.compute.major", "8"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver.major", "455"},
          {"nvidia.com/cuda.driver.minor", "06"},
          {"nvidia.com/cuda.driver.rev", ""},
          {"nvidia.com/cuda.runtime.major", "11"},
          {"nvidia.com/cuda.runtime.minor", "1"},
          {"kubernetes.io/arch", "amd64"}};
}

struct FactsCase {
  std::string name;
  Labels labels;
  NodeFacts want;
};

TEST(NodeFactsFromLabels, Table) {
  Labels mig = H200Current();
  mig["nvidia.com/gpu.product"] = "NVIDIA-H200-MIG-1g.18gb";
  Labels shared = H200Current();
  shared["nvidia.com/gpu.product"] = "NVIDIA-H200-SHARED";
  Labels split_only = H200Current();
  split_only.erase("nvidia.com/cuda.driver-version.full");
  split_only.erase("nvidia.com/cuda.runtime-version.full");
  Labels arm = H200Current();
  arm["kubernetes.io/arch"] = "arm64";
  arm["nvidia.com/gpu.product"] = "NVIDIA-GH200-480GB";

  const std::vector<FactsCase> cases = {
      {"current names", H200Current(), testutil::H200Facts()},
      {"deprecated names, empty rev",
       A100Deprecated(),
       {"A100-SXM4-40GB", "8.0", "455.06", "11.1", "amd64"}},
      {"MIG suffix kept", mig, {"NVIDIA-H200-MIG-1g.18gb", "9.0", "580.159.04", "13.0", "amd64"}},
      {"SHARED suffix dropped", shared, testutil::H200Facts()},
      {"split current names", split_only, testutil::H200Facts()},
      {"arm64", arm, {"NVIDIA-GH200-480GB", "9.0", "580.159.04", "13.0", "arm64"}},
  };
  for (const auto& c : cases) {
    auto got = NodeFactsFromLabels(c.labels);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

struct BadCase {
  std::string name;
  std::string drop;                         // label to remove
  std::pair<std::string, std::string> set;  // label to set
  std::string want_in_message;
};

TEST(NodeFactsFromLabels, MissingOrMalformedNamesTheLabel) {
  const std::vector<BadCase> cases = {
      {"no product", "nvidia.com/gpu.product", {}, "nvidia.com/gpu.product"},
      {"no compute major", "nvidia.com/gpu.compute.major", {}, "nvidia.com/gpu.compute.major"},
      {"no arch", "kubernetes.io/arch", {}, "kubernetes.io/arch"},
      {"bad compute",
       "",
       {"nvidia.com/gpu.compute.minor", "x"},
       "nvidia.com/gpu.compute.minor=\"x\""},
  };
  for (const auto& c : cases) {
    Labels l = H200Current();
    if (!c.drop.empty()) l.erase(c.drop);
    if (!c.set.first.empty()) l[c.set.first] = c.set.second;
    auto got = NodeFactsFromLabels(l);
    ASSERT_FALSE(got.ok()) << c.name;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(got.status().message().find(c.want_in_message), std::string::npos)
        << c.name << ": " << got.status();
  }
  Labels no_driver = H200Current();
  for (auto k : {"nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver-version.major"}) {
    no_driver.erase(k);
  }
  auto got = NodeFactsFromLabels(no_driver);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("driver"), std::string::npos);
  EXPECT_TRUE(NodeFactsFromLabels({}).status().message().find("Feature Discovery") !=
              std::string::npos);
}

TEST(FingerprintLabels, ReturnsExactlyTheLabelsRead) {
  auto got = FingerprintLabels(H200Current());
  EXPECT_EQ(got, (Labels{{"nvidia.com/gpu.product", "NVIDIA-H200"},
                         {"nvidia.com/gpu.compute.major", "9"},
                         {"nvidia.com/gpu.compute.minor", "0"},
                         {"nvidia.com/cuda.driver-version.full", "580.159.04"},
                         {"nvidia.com/cuda.runtime-version.full", "13.0"},
                         {"kubernetes.io/arch", "amd64"}}));
  EXPECT_TRUE(FingerprintLabels({}).empty());
}

TEST(GfdProductName, SpellsLikeGfd) {
  EXPECT_EQ(GfdProductName("NVIDIA H200"), "NVIDIA-H200");
  EXPECT_EQ(GfdProductName("NVIDIA A100-SXM4-40GB", "1g.5gb"), "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb");
}

TEST(Fingerprint, CanonicalStableAndSensitive) {
  NodeFacts n = testutil::H200Facts();
  RuntimeFacts r{
      "registry.example/llama@sha256:abc", {{"triton", "3.6.0"}, {"pytorch", "2.11.0"}}, {}};
  EXPECT_EQ(CanonicalJson(n, r),
            R"({"node":{"arch":"amd64","computeCapability":"9.0","cudaDriver":"13.0",)"
            R"("driver":"580.159.04","gpuProduct":"NVIDIA-H200"},"runtime":{"env":{},)"
            R"("image":"registry.example/llama@sha256:abc","versions":{"pytorch":"2.11.0",)"
            R"("triton":"3.6.0"}},"schema":1})");
  Fingerprint f = ComputeFingerprint(n, r);
  EXPECT_EQ(f.sha256, Sha256Hex(f.canonical_json));
  EXPECT_EQ(f.id, f.sha256.substr(0, 16));
  EXPECT_TRUE(IsFingerprintId(f.id));
  // Every input moves the fingerprint.
  auto differs = [&](NodeFacts n2, RuntimeFacts r2) {
    return ComputeFingerprint(n2, r2).id != f.id;
  };
  NodeFacts n2 = n;
  n2.driver_version = "580.160.01";
  EXPECT_TRUE(differs(n2, r));
  n2 = n;
  n2.gpu_product = "NVIDIA-H100-80GB-HBM3";
  EXPECT_TRUE(differs(n2, r));
  n2 = n;
  n2.cuda_driver_version = "13.1";
  EXPECT_TRUE(differs(n2, r));
  n2 = n;
  n2.compute_capability = "10.0";
  EXPECT_TRUE(differs(n2, r));
  n2 = n;
  n2.arch = n.arch == "arm64" ? "amd64" : "arm64";
  EXPECT_TRUE(differs(n2, r));
  RuntimeFacts r2 = r;
  r2.image = r.image + "-other";
  EXPECT_TRUE(differs(n, r2));
  r2 = r;
  r2.runtime["triton"] = "3.6.1";
  EXPECT_TRUE(differs(n, r2));
  r2 = r;
  r2.env["TRITON_CACHE_AUTOTUNING"] = "1";
  EXPECT_TRUE(differs(n, r2));
  r2 = r;
  r2.schema_version = 2;
  EXPECT_TRUE(differs(n, r2));
}

TEST(Sha256Hex, KnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_FALSE(IsFingerprintId("3F9A1C2B7D4E5F60"));
  EXPECT_FALSE(IsFingerprintId("3f9a1c2b7d4e5f6"));
}

}  // namespace
}  // namespace kc::core
