// Fuzz target: the warmup request plan (core/warmup_plan.h), the JSON in env
// KC_WARMUP_REQUESTS that the operator hands `initwarm drive`. Input: the
// plan. Properties: no crash, no exception; a plan that decodes encodes to
// JSON that decodes to the same plan.
#include "core/warmup_plan.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseWarmupCalls,
                           kc::core::WarmupCallsToJson);
  return 0;
}
