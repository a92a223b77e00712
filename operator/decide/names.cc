#include "operator/decide/names.h"

#include <algorithm>

#include "core/fingerprint.h"

namespace kc::op {
namespace {

// prefix + suffix, the prefix cut (and hashed) so the whole fits in 63.
std::string Fit(std::string_view prefix, const std::string& suffix) {
  if (prefix.size() + suffix.size() <= kMaxJobName) return std::string(prefix) + suffix;
  const std::string hash = core::Sha256Hex(prefix).substr(0, 8);
  size_t keep = kMaxJobName - suffix.size() - hash.size() - 1;
  std::string cut(prefix.substr(0, std::min(keep, prefix.size())));
  while (!cut.empty() && (cut.back() == '-' || cut.back() == '.')) cut.pop_back();
  return cut + "-" + hash + suffix;
}

}  // namespace

std::string WarmupJobName(std::string_view kc_name, std::string_view fp_id,
                          int32_t warm_generation) {
  std::string suffix = "-warm-" + std::string(fp_id);
  if (warm_generation > 0) suffix += "-g" + std::to_string(warm_generation);
  return Fit(kc_name, suffix);
}

std::string GcJobName(std::string_view kc_name, std::vector<std::string> collected_ids) {
  std::sort(collected_ids.begin(), collected_ids.end());
  std::string joined;
  for (const auto& id : collected_ids) joined += id + ",";
  return Fit(kc_name, "-gc-" + core::Sha256Hex(joined).substr(0, 10));
}

std::string HarvestJobName(std::string_view kc_name, std::string_view fp_id,
                           std::string_view base_digest, std::string_view accept_json) {
  const std::string key = std::string(base_digest) + "\n" + std::string(accept_json);
  return Fit(kc_name, "-harvest-" + std::string(fp_id) + "-" + core::Sha256Hex(key).substr(0, 8));
}

std::string PvcName(std::string_view kc_name) { return std::string(kc_name) + "-cache"; }

}  // namespace kc::op
