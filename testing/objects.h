// The test objects every layer shares, built in one place: one GPU node's
// facts as `initwarm probe` and the operator see them, and the KernelCache
// each test starts from and edits. Test-only (kc_testing); never linked into
// a program.
#pragma once

#include <string>

#include "core/api_types.h"
#include "core/fingerprint.h"

namespace kc::testutil {

// One H200 node: GPU product, compute capability 9.0, driver 580.159.04,
// CUDA 13.0, amd64.
inline core::NodeFacts H200Facts() { return {"NVIDIA-H200", "9.0", "580.159.04", "13.0", "amd64"}; }

// A KernelCache <ns>/<name> with uid "kc-uid" and a 20Gi volume, every
// other field its default.
inline core::KernelCache KernelCacheNamed(const std::string& name = "llama",
                                          const std::string& ns = "ml") {
  core::KernelCache kc;
  kc.metadata.name = name;
  kc.metadata.namespace_ = ns;
  kc.metadata.uid = "kc-uid";
  kc.spec.storage.size = "20Gi";
  return kc;
}

}  // namespace kc::testutil
