#include "operator/decide/decide_spec.h"

#include "base/duration.h"
#include "base/strings.h"
#include "core/spec_validation.h"

namespace kc::op::decide {

SpecVerdict CheckSpec(const core::KernelCacheSpec& spec,
                      const std::vector<std::string>& parse_errors,
                      const api::Condition* prev_invalid, const api::Condition* prev_image) {
  SpecVerdict v;
  std::vector<std::string> errors = parse_errors;
  const core::SpecReport report = core::ValidateSpec(spec);
  errors.insert(errors.end(), report.errors.begin(), report.errors.end());
  if (!errors.empty()) {
    const std::string msg = StrJoin(errors, "; ");
    const api::Condition* p = prev_invalid;
    if (p == nullptr || p->status != "True" || p->message != msg) {
      v.effects.Event("Warning", "InvalidSpec", msg);
    }
    v.invalid_spec = {true, "InvalidSpec", msg};
    v.ready = {false, "InvalidSpec",
               "the spec is invalid; nothing is warmed until it is fixed: " + msg};
    return v;
  }
  v.invalid_spec = {false, "SpecValid", "the spec is valid"};
  // ValidateSpec accepted these: parsed once here, handed to the steps.
  Retention& r = v.retention.emplace();
  if (auto d = ParseDuration(spec.retention.stale_after); d.ok()) r.stale_after = *d;
  if (auto d = ParseDuration(spec.retention.absent_after); d.ok()) r.absent_after = *d;
  if (!spec.retention.purge_schedule.empty()) {
    if (auto d = ParseDuration(spec.retention.purge_schedule); d.ok()) r.purge = *d;
  }
  if (!spec.retention.max_bytes.empty()) {
    if (auto b = api::ParseQuantityBytes(spec.retention.max_bytes); b.ok()) r.max_bytes = *b;
  }
  if (!report.image_not_pinned.empty()) {
    if (Changed(prev_image, true, "TagNotDigest")) {
      v.effects.Event("Warning", "ImageNotPinned", report.image_not_pinned);
    }
    v.image_not_pinned = {true, "TagNotDigest", report.image_not_pinned};
  } else {
    v.image_not_pinned = {false, "DigestPinned", "the image is pinned by digest"};
  }
  return v;
}

}  // namespace kc::op::decide
