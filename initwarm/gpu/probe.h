// Probe: the node part of the fingerprint, read from the machine itself.
//
// NewNvmlProber() loads libnvidia-ml.so.1 and libcuda.so.1 with dlopen at
// run time (no CUDA toolkit at build time) and reports the facts spelled as
// GPU Feature Discovery spells its labels (core::GfdProductName), so a node
// gives the same fingerprint from its labels and from this probe:
//   gpu_product          "NVIDIA-H200" (MIG profile appended in MIG mode)
//   compute_capability   "9.0"
//   driver_version       "580.159.04"   (nvmlSystemGetDriverVersion)
//   cuda_driver_version  "13.0"         (cuDriverGetVersion, major.minor)
//   arch                 "amd64" / "arm64" (uname)
// When no GPU is visible (no driver library, no device) Probe() returns
// Unavailable with a message starting "no NVIDIA GPU visible: ". GPUs of
// different products on one node are an error (one node, one fingerprint).
// (Tests read the same facts from a file: initwarm/testing/file_sources.h.)
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/fingerprint.h"

namespace kc::initwarm {

struct ProbeResult {
  core::NodeFacts facts;
  std::string source;  // "nvml" or "file:<path>"
};

class Prober {
 public:
  virtual ~Prober() = default;
  virtual StatusOr<ProbeResult> Probe() = 0;
};

std::unique_ptr<Prober> NewNvmlProber();

// Maps uname's machine ("x86_64", "aarch64") to the Kubernetes spelling
// ("amd64", "arm64"); other values pass through unchanged. Pure.
std::string KubeArch(std::string_view uname_machine);

// "13.0" from cuDriverGetVersion's integer (13000). Pure.
std::string CudaDriverVersionString(int version);

// One visible GPU (or MIG device) as NVML describes it.
struct GpuDevice {
  std::string nvml_name;    // "NVIDIA H200"
  std::string mig_profile;  // "1g.18gb" in MIG mode, else empty
  int cc_major = 0;
  int cc_minor = 0;
};

// GFD's MIG profile name from NVML device attributes: "<g>g.<gb>gb", or
// "<c>c.<g>g.<gb>gb" when the compute instance has fewer slices than its GPU
// instance; memory rounded up to whole GB. Pure.
std::string MigProfileName(unsigned gpu_slices, unsigned compute_slices,
                           unsigned long long memory_mb);

// Combines the visible devices into the node's facts. No devices is
// Unavailable ("no NVIDIA GPU visible: ..."); devices that differ in product
// or compute capability are FailedPrecondition (one node, one fingerprint).
// Pure.
StatusOr<core::NodeFacts> NodeFactsFromDevices(const std::vector<GpuDevice>& devices,
                                               std::string_view driver_version,
                                               int cuda_driver_version,
                                               std::string_view uname_machine);

// The GFD labels (current spellings) that carry these facts; feeding them to
// core::NodeFactsFromLabels gives the same facts back. Pure.
std::map<std::string, std::string> NodeLabels(const core::NodeFacts& facts);

// NodeFacts as the JSON object the resolve endpoint and probe print:
// {"arch","computeCapability","cudaDriver","driver","gpuProduct"}. Pure.
std::string NodeFactsJson(const core::NodeFacts& facts);
StatusOr<core::NodeFacts> NodeFactsFromJson(std::string_view json);

}  // namespace kc::initwarm
