// Inspect: a human summary of a cache volume.
//
// For each published fingerprint: READY or not, files and bytes (from the
// manifest when it parses, else from a walk), file counts per framework
// directory (triton, inductor, vllm, nv, other), Triton kernels (one
// __grp__*.json per compiled kernel), framework versions, creation time and
// age; then staging and quarantine directories with their age (and REASON).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/layout.h"

namespace kc::initwarm {

struct CacheSummary {
  std::string kind;  // "published", "staging", "quarantine"
  std::string name;
  std::string fingerprint;
  bool ready = false;
  bool manifest_ok = false;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::map<std::string, std::uint64_t> by_framework;
  std::uint64_t triton_kernels = 0;
  std::map<std::string, std::string> frameworks;
  std::string created_at;
  std::int64_t age_s = 0;
  std::string note;  // REASON first line, manifest error, ...
};

StatusOr<std::vector<CacheSummary>> InspectVolume(const core::Layout& layout, std::int64_t now);
std::string FormatSummaries(const std::vector<CacheSummary>& s);
std::string SummariesJson(const std::vector<CacheSummary>& s);

}  // namespace kc::initwarm
