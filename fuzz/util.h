// Helpers shared by the fuzz targets (fuzz/*.cc): a property check that
// traps (libFuzzer reports it as a crash, and the replay test dies), input
// splitting, and a scratch directory for targets whose entry point reads
// files.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace kc::fuzz {

// A violated property: trap, so the fuzzer keeps the input.
inline void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// A codec's round trip: when `parse(text)` succeeds, parsing what `encode`
// writes for the result gives it back.
template <class Parse, class Encode>
void CheckRoundTrip(std::string_view text, Parse parse, Encode encode) {
  auto decoded = parse(text);
  if (!decoded.ok()) return;
  auto back = parse(encode(*decoded));
  Check(back.ok() && *back == *decoded);
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `text` cut at every `sep`; at most `max_parts` parts (the last keeps the
// rest, separators included).
inline std::vector<std::string> Split(std::string_view text, char sep, size_t max_parts) {
  std::vector<std::string> out;
  while (out.size() + 1 < max_parts) {
    const size_t at = text.find(sep);
    if (at == std::string_view::npos) break;
    out.emplace_back(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  out.emplace_back(text);
  return out;
}

// A private directory under $TMPDIR (or /tmp), made once per process and
// reused by every input; removed at exit.
inline const std::filesystem::path& ScratchDir() {
  // Never destroyed, so the exit handler can still read it.
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/kcfuzz.XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    auto* p = new std::filesystem::path(tmpl);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return p;
  }();
  return *dir;
}

inline void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace kc::fuzz
