#include "core/spec_validation.h"

#include <algorithm>

#include "core/cache_env.h"
#include "core/spec_sections.h"

namespace kc::core {
namespace {

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Appends one section's errors and warnings to the spec's report.
void Merge(SpecReport section, SpecReport* r) {
  for (auto& e : section.errors) r->errors.push_back(std::move(e));
  for (auto& w : section.warnings) r->warnings.push_back(std::move(w));
  if (!section.image_not_pinned.empty()) r->image_not_pinned = std::move(section.image_not_pinned);
}

}  // namespace

bool ImagePinned(std::string_view image) {
  const size_t at = image.find("@sha256:");
  if (at == std::string_view::npos || at == 0) return false;
  std::string_view hex = image.substr(at + 8);
  return hex.size() == 64 && std::all_of(hex.begin(), hex.end(), IsHexDigit);
}

const std::vector<std::string>& ReservedEnvNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& [name, value] : CacheViewEnv()) names.push_back(name);
    for (const char* name :
         {"KC_WARMUP_SHAPES", "KC_FINGERPRINT", "KC_NODE_NAME", "KC_JOB_UID", "KC_POD_NAME"}) {
      names.emplace_back(name);
    }
    names.emplace_back(kWarmupServerMarkerEnv);
    return names;
  }();
  return kNames;
}

SpecReport ValidateSpec(const KernelCacheSpec& spec) {
  SpecReport r;
  Merge(CheckPodSelector(spec.pod_selector), &r);
  Merge(CheckNodes(spec.node_selector, spec.tolerations), &r);
  if (!spec.warmup.server) {
    Merge(CheckImage(spec.image), &r);
  } else if (!spec.image.empty()) {
    r.errors.emplace_back(
        "spec.image: the server form runs the pod template's image; remove spec.image");
  }
  Merge(CheckRuntime(spec.runtime), &r);
  Merge(CheckWarmup(spec.warmup), &r);
  Merge(CheckStorage(spec.storage), &r);
  Merge(CheckConsume(spec.consume), &r);
  Merge(CheckSecurityContext(spec.security_context), &r);
  Merge(CheckRetention(spec.retention), &r);
  Merge(CheckHarvest(spec.harvest), &r);
  return r;
}

}  // namespace kc::core
