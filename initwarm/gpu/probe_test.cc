#include "initwarm/gpu/probe.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "testing/objects.h"

namespace kc::initwarm {
namespace {

TEST(KubeArchTest, MapsUnameSpellings) {
  const std::array<std::pair<const char*, const char*>, 4> cases = {{
      {"x86_64", "amd64"},
      {"aarch64", "arm64"},
      {"ppc64le", "ppc64le"},
      {"s390x", "s390x"},
  }};
  for (const auto& [in, want] : cases) EXPECT_EQ(KubeArch(in), want) << in;
}

TEST(CudaDriverVersionStringTest, MajorMinor) {
  EXPECT_EQ(CudaDriverVersionString(13000), "13.0");
  EXPECT_EQ(CudaDriverVersionString(12080), "12.8");
  EXPECT_EQ(CudaDriverVersionString(12020), "12.2");
  EXPECT_EQ(CudaDriverVersionString(11040), "11.4");
}

TEST(MigProfileNameTest, GfdSpelling) {
  EXPECT_EQ(MigProfileName(1, 1, 4864), "1g.5gb");    // A100-40GB 1g.5gb
  EXPECT_EQ(MigProfileName(3, 3, 40192), "3g.40gb");  // A100-80GB 3g.40gb
  EXPECT_EQ(MigProfileName(7, 7, 81920), "7g.80gb");
  EXPECT_EQ(MigProfileName(2, 1, 9984), "1c.2g.10gb");  // compute instance smaller
  EXPECT_EQ(MigProfileName(1, 0, 18176), "1g.18gb");    // no compute slice info
}

TEST(NodeFactsFromDevicesTest, SingleH200) {
  auto f = NodeFactsFromDevices({{"NVIDIA H200", "", 9, 0}}, "580.159.04", 13000, "x86_64");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, testutil::H200Facts());
}

TEST(NodeFactsFromDevicesTest, EightIdenticalGpusAreOneKind) {
  std::vector<GpuDevice> d(8, GpuDevice{"NVIDIA H100 80GB HBM3", "", 9, 0});
  auto f = NodeFactsFromDevices(d, "570.86.15", 12080, "aarch64");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->gpu_product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(f->cuda_driver_version, "12.8");
  EXPECT_EQ(f->arch, "arm64");
}

TEST(NodeFactsFromDevicesTest, MigProfileAppended) {
  std::vector<GpuDevice> d(2, GpuDevice{"NVIDIA A100-SXM4-40GB", "1g.5gb", 8, 0});
  auto f = NodeFactsFromDevices(d, "550.54.15", 12040, "x86_64");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->gpu_product, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb");
  EXPECT_EQ(f->compute_capability, "8.0");
}

TEST(NodeFactsFromDevicesTest, Refusals) {
  struct Case {
    std::string name;
    std::vector<GpuDevice> devices;
    std::string driver;
    int cuda;
    StatusCode want;
    std::string want_substr;
  };
  const std::vector<Case> cases = {
      {"no devices", {}, "580.159.04", 13000, StatusCode::kUnavailable, "no NVIDIA GPU visible"},
      {"mixed products",
       {{"NVIDIA H200", "", 9, 0}, {"NVIDIA L40S", "", 8, 9}},
       "580.159.04",
       13000,
       StatusCode::kFailedPrecondition,
       "GPUs of different kinds"},
      {"mixed MIG profiles",
       {{"NVIDIA A100-SXM4-40GB", "1g.5gb", 8, 0}, {"NVIDIA A100-SXM4-40GB", "3g.20gb", 8, 0}},
       "550.54.15",
       12040,
       StatusCode::kFailedPrecondition,
       "MIG-3g.20gb"},
      {"empty driver", {{"NVIDIA H200", "", 9, 0}}, "", 13000, StatusCode::kUnavailable, "driver"},
      {"no cuda version",
       {{"NVIDIA H200", "", 9, 0}},
       "580.159.04",
       0,
       StatusCode::kUnavailable,
       "cuDriverGetVersion"},
  };
  for (const auto& c : cases) {
    auto f = NodeFactsFromDevices(c.devices, c.driver, c.cuda, "x86_64");
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_EQ(f.status().code(), c.want) << c.name << ": " << f.status();
    EXPECT_NE(f.status().message().find(c.want_substr), std::string::npos)
        << c.name << ": " << f.status();
  }
}

TEST(NodeLabelsTest, RoundTripsThroughTheOperatorsLabelReader) {
  for (const core::NodeFacts& f :
       {testutil::H200Facts(),
        core::NodeFacts{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "8.0", "550.54.15", "12.4", "arm64"}}) {
    auto labels = NodeLabels(f);
    EXPECT_EQ(labels.at("nvidia.com/gpu.product"), f.gpu_product);
    auto back = core::NodeFactsFromLabels(labels);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, f);
    // Same fingerprint from labels and from the probe.
    core::RuntimeFacts rt{"registry.example/llama@sha256:abc", {{"pytorch", "2.11.0"}}, {}};
    EXPECT_EQ(core::ComputeFingerprint(*back, rt), core::ComputeFingerprint(f, rt));
  }
  auto l = NodeLabels(testutil::H200Facts());
  EXPECT_EQ(l.at("nvidia.com/gpu.compute.major"), "9");
  EXPECT_EQ(l.at("nvidia.com/cuda.driver-version.revision"), "04");
  EXPECT_EQ(l.at("nvidia.com/cuda.runtime-version.major"), "13");
}

TEST(NodeFactsJsonTest, RoundTripAndRefusals) {
  auto back = NodeFactsFromJson(NodeFactsJson(testutil::H200Facts()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, testutil::H200Facts());
  EXPECT_FALSE(NodeFactsFromJson("[1]").ok());
  EXPECT_FALSE(NodeFactsFromJson("{").ok());
  auto missing = NodeFactsFromJson(R"({"gpuProduct":"NVIDIA-H200","computeCapability":"9.0",
      "driver":"580.159.04","cudaDriver":"13.0"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("\"arch\""), std::string::npos);
  EXPECT_FALSE(NodeFactsFromJson(R"({"gpuProduct":1})").ok());
}

// Runs `cmd` and returns its stdout, or nullopt when it cannot run.
std::optional<std::string> Capture(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p.get()) != nullptr) out += buf.data();
  return out;
}

// GPU-only: the real probe agrees with nvidia-smi.
TEST(NvmlProberTest, AgreesWithNvidiaSmiOnThisMachine) {
  auto r = NewNvmlProber()->Probe();
  if (!r.ok() && r.status().code() == StatusCode::kUnavailable) {
    GTEST_SKIP() << "needs an NVIDIA GPU and driver: " << r.status().message();
  }
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source, "nvml");
  EXPECT_EQ(r->facts.gpu_product.find(' '), std::string::npos);
  EXPECT_TRUE(core::NodeFactsFromLabels(NodeLabels(r->facts)).ok());
  auto smi = Capture(
      "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader -i 0 "
      "2>/dev/null");
  if (!smi || smi->empty())
    GTEST_SKIP() << "nvidia-smi not runnable; probe gave " << NodeFactsJson(r->facts);
  // "NVIDIA H200, 9.0, 580.159.04\n"
  std::vector<std::string> parts;
  std::stringstream ss(*smi);
  for (std::string p; std::getline(ss, p, ',');) {
    while (!p.empty() && (p.front() == ' ')) p.erase(0, 1);
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    parts.push_back(p);
  }
  ASSERT_EQ(parts.size(), 3u) << *smi;
  if (r->facts.gpu_product.find("-MIG-") == std::string::npos) {
    EXPECT_EQ(r->facts.gpu_product, core::GfdProductName(parts[0]));
  }
  EXPECT_EQ(r->facts.compute_capability, parts[1]);
  EXPECT_EQ(r->facts.driver_version, parts[2]);
}

}  // namespace
}  // namespace kc::initwarm
