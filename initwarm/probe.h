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
//
// NewFileProber() reads the same facts from a JSON file
// ({"gpuProduct","computeCapability","driver","cudaDriver","arch"}); it
// exists for tests only, production code paths never use it.
#pragma once

#include <memory>
#include <string>

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
std::unique_ptr<Prober> NewFileProber(std::string path);

// Maps uname's machine ("x86_64", "aarch64") to the Kubernetes spelling
// ("amd64", "arm64"); other values pass through unchanged. Pure.
std::string KubeArch(std::string_view uname_machine);

// "13.0" from cuDriverGetVersion's integer (13000). Pure.
std::string CudaDriverVersionString(int version);

// NodeFacts as the JSON object the resolve endpoint and probe print:
// {"arch","computeCapability","cudaDriver","driver","gpuProduct"}. Pure.
std::string NodeFactsJson(const core::NodeFacts& facts);
StatusOr<core::NodeFacts> NodeFactsFromJson(std::string_view json);

}  // namespace kc::initwarm
