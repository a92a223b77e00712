// Spec validation: the checks on a KernelCache spec that the CRD's schema
// and CEL rules cannot make (or that must hold even where the CRD was not
// applied, such as an older CRD version or a unit test), plus warnings.
//
// Every message names the field path and the fix, e.g.
//   spec.warmup.env[2].name: TRITON_CACHE_DIR is set by the operator (the
//   cache view); remove it
// Errors make the spec invalid (condition InvalidSpec, nothing created);
// warnings become their own condition (ImageNotPinned) and do not block.
// Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/api_types.h"

namespace kc::core {

struct SpecReport {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  // The warning (also in `warnings`) that spec.image is not pinned by
  // digest: condition ImageNotPinned. Empty when it is pinned.
  std::string image_not_pinned;
  bool ok() const { return errors.empty(); }
};

SpecReport ValidateSpec(const KernelCacheSpec& spec);

// True when `image` is pinned by digest ("name@sha256:<64 hex>").
bool ImagePinned(std::string_view image);

// Environment names the operator sets in warmup and model pods; a spec may
// not set them.
const std::vector<std::string>& ReservedEnvNames();

// Set to "1" in the server containers of a server-form warmup pod: `initwarm
// drive` ends the processes that carry it to restart the server for a
// convergence pass (the pod shares its process namespace).
inline constexpr std::string_view kWarmupServerMarkerEnv = "KC_WARMUP_SERVER";

}  // namespace kc::core
