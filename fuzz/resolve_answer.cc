// Fuzz target: the resolve answer codec (core/resolve_answer.h), the body
// initwarm's gate reads from the operator's /v1/resolve. Input: the body.
// Properties: no crash, no exception; an answer that decodes encodes to
// JSON that decodes to the same answer.
#include "core/resolve_answer.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseResolveAnswer,
                           kc::core::ResolveAnswerToJson);
  return 0;
}
