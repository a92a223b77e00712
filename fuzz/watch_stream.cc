// Fuzz target: the watch-stream decoder (kube/watch_decoder.h). Input: the
// first byte picks how the rest, a watch response body, is cut into chunks
// (1..64 bytes each, as a transport may hand it over). Properties: no
// crash, no exception; the events decoded chunk by chunk equal the events
// decoded from the whole body at once (type and object, in order); an
// ERROR event maps to a non-OK Status.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/util.h"
#include "kube/watch_decoder.h"

namespace {

std::vector<kc::kube::WatchEvent> DecodeAll(std::string_view body, uint32_t seed) {
  kc::kube::WatchDecoder decoder;
  std::vector<kc::kube::WatchEvent> events;
  if (seed == 0) {
    (void)decoder.Feed(body, &events);
  } else {
    uint32_t state = seed;
    while (!body.empty()) {
      state = state * 1103515245u + 12345u;
      const size_t n = std::min<size_t>(body.size(), 1 + (state >> 16) % 64);
      (void)decoder.Feed(body.substr(0, n), &events);
      body.remove_prefix(n);
    }
  }
  (void)decoder.Finish(&events);
  kc::fuzz::Check(decoder.buffered() == 0);
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  if (size == 0) return 0;
  const std::string_view body = kc::fuzz::AsText(data + 1, size - 1);
  const auto whole = DecodeAll(body, 0);
  const auto chunked = DecodeAll(body, 1u + data[0]);
  Check(whole.size() == chunked.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    Check(whole[i].type == chunked[i].type && whole[i].object == chunked[i].object);
    if (whole[i].type == kc::kube::WatchEvent::Type::kError) {
      Check(!kc::kube::WatchErrorToStatus(whole[i].object).ok());
    }
    (void)kc::kube::WatchEventTypeName(whole[i].type);
  }
  for (const std::string& line : kc::fuzz::Split(body, '\n', 64)) {
    (void)kc::kube::DecodeWatchLine(line);
  }
  return 0;
}
