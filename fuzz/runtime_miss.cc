// Fuzz target: the runtime-miss classifier (core/runtime_miss.h), which
// reads files a serving process wrote into its view (Triton metadata and
// autotune JSON, TTIR sources) and their paths. Input: a path, a newline,
// then the file's bytes. Properties: no crash, no exception; one miss for
// one file, counting it; its line bounded.
#include "core/runtime_miss.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = kc::fuzz::Split(kc::fuzz::AsText(data, size), '\n', 2);
  const std::string& rel = parts[0];
  std::string text = parts.size() > 1 ? parts[1] : "";
  if (text.size() > kc::core::kMaxMissContentBytes) text.resize(kc::core::kMaxMissContentBytes);
  const auto misses = kc::core::ClassifyMisses({{rel, text.size(), text}});
  kc::fuzz::Check(misses.size() == 1 && misses[0].files == 1 && misses[0].bytes == text.size());
  kc::fuzz::Check(misses[0].detail.size() <= 700 + rel.size());
  (void)kc::core::MissLine(misses[0]);
  (void)kc::core::WantsContent(rel);
  return 0;
}
