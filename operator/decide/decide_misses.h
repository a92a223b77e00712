// The runtimeMisses of a fingerprint's status after a pass: what gated pods
// compiled after their gate for the cache the status names.
//   - the miss channel counted misses for the status's current digest:
//     those (the ledger is the source while this process runs);
//   - none counted, and the digest is the one the stored figure was for
//     (an operator restart, watchers not yet reported again): the stored one;
//   - the digest changed (a re-warm, a purge, a collected cache): none.
// Pure.
#pragma once

#include <optional>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op {

std::optional<core::RuntimeMissStatus> RuntimeMissesAfter(const core::FingerprintStatus* before,
                                                          const core::FingerprintStatus& after,
                                                          const ObservedMisses* observed);

}  // namespace kc::op
