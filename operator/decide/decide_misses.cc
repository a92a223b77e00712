#include "operator/decide/decide_misses.h"

namespace kc::op {

std::optional<core::RuntimeMissStatus> RuntimeMissesAfter(const core::FingerprintStatus* before,
                                                          const core::FingerprintStatus& after,
                                                          const ObservedMisses* observed) {
  if (after.manifest_digest.empty()) return std::nullopt;
  if (observed != nullptr && observed->manifest_digest == after.manifest_digest) {
    return observed->misses;
  }
  if (before != nullptr && before->manifest_digest == after.manifest_digest) {
    return before->runtime_misses;
  }
  return std::nullopt;
}

}  // namespace kc::op
