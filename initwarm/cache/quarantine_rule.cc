#include "initwarm/cache/quarantine_rule.h"

namespace kc::initwarm {

std::string_view QuarantineDecisionName(QuarantineDecision d) {
  switch (d) {
    case QuarantineDecision::kQuarantine:
      return "Quarantine";
    case QuarantineDecision::kNotPublishedDir:
      return "NotPublishedDir";
    case QuarantineDecision::kNotAsked:
      return "NotAsked";
    case QuarantineDecision::kStillPublishing:
      return "StillPublishing";
    case QuarantineDecision::kVersionDirUnsafe:
      return "VersionDirUnsafe";
  }
  return "?";
}

QuarantineDecision DecideQuarantine(const QuarantineFacts& f) {
  if (!f.published_dir) return QuarantineDecision::kNotPublishedDir;
  if (!f.asked) return QuarantineDecision::kNotAsked;
  if (f.ready_absent) return QuarantineDecision::kStillPublishing;
  if (!f.version_dir_real) return QuarantineDecision::kVersionDirUnsafe;
  return QuarantineDecision::kQuarantine;
}

}  // namespace kc::initwarm
