// Fuzz target: the Triton readers of the validation ladder
// (core/validate.h): __grp__*.json groups (level 3) and kernel metadata
// JSON (level 4, target.arch). Input: the file's path relative to the
// cache directory, a newline, then the file's bytes. Property: no crash,
// no exception, whatever the bytes (the first line also goes through
// ArchFromComputeCapability).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "core/validate.h"
#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = kc::fuzz::Split(kc::fuzz::AsText(data, size), '\n', 2);
  const std::string& rel = parts[0];
  const std::string text = parts.size() > 1 ? parts[1] : "";
  static const std::set<std::string, std::less<>> kListed = {
      "triton/x/k.cubin", "triton/x/k.json", "triton/x/k.ptx", "triton/x/__grp__k.json"};
  (void)kc::core::IsTritonGroupFile(rel);
  (void)kc::core::IsTritonMetadataFile(rel);
  (void)kc::core::CheckTritonGroup(rel, text, "/var/run/kernelcache/view", kListed);
  for (int arch : {80, 90, 100}) (void)kc::core::CheckTritonTargetArch(rel, text, arch);
  (void)kc::core::ArchFromComputeCapability(rel);
  return 0;
}
