// Fuzz target: the harvest accept list (core/harvest.h), the argument the
// operator hands a harvest Job and `initwarm harvest` decodes. Input: the
// list. Properties: no crash, no exception; a list that decodes encodes to
// JSON that decodes to the same list.
#include <cstddef>
#include <cstdint>

#include "core/harvest.h"
#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseHarvestAccept,
                           kc::core::HarvestAcceptToJson);
  return 0;
}
