// Decide's spec step: is the spec valid (condition InvalidSpec; when not,
// Ready=False and nothing else is decided), is its image pinned (condition
// ImageNotPinned), and spec.retention parsed once for the later steps.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operator/decide/decide_step.h"

namespace kc::op::decide {

struct SpecVerdict {
  std::optional<Retention> retention;                // none: the spec is invalid
  ConditionVerdict invalid_spec;                     // InvalidSpec
  std::optional<ConditionVerdict> ready;             // Ready, when the spec is invalid
  std::optional<ConditionVerdict> image_not_pinned;  // ImageNotPinned, when it is valid
  Effects effects;                                   // InvalidSpec / ImageNotPinned Events
};

// `parse_errors`: Observed::parse_errors; `prev_invalid`, `prev_image`: the
// last InvalidSpec and ImageNotPinned (an Event only when they change).
SpecVerdict CheckSpec(const core::KernelCacheSpec& spec,
                      const std::vector<std::string>& parse_errors,
                      const api::Condition* prev_invalid, const api::Condition* prev_image);

}  // namespace kc::op::decide
