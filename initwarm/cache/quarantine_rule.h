// When a failed validation moves a published cache into the quarantine: one
// rule for `initwarm verify` and the gate. Pure.
//
//   a directory given by path (verify --dir)        never: not ours to move
//   quarantine not asked (--no-quarantine)          never
//   the finding is READY and READY is absent        never: still publishing
//                                                   (the gate polls on)
//   v1/ is not a real directory (a planted symlink) never: never renamed
//                                                   through
//   otherwise                                       quarantine
#pragma once

#include <string_view>

namespace kc::initwarm {

enum class QuarantineDecision {
  kQuarantine,
  kNotPublishedDir,   // a directory given by path, not v1/<fingerprint>
  kNotAsked,          // quarantine turned off
  kStillPublishing,   // READY absent: a seal may be publishing it
  kVersionDirUnsafe,  // v1/ is not a real directory
};

std::string_view QuarantineDecisionName(QuarantineDecision d);

struct QuarantineFacts {
  bool published_dir = true;     // the cache checked is v1/<fingerprint>
  bool asked = true;             // quarantine is on
  bool ready_absent = false;     // the finding is about READY and it is absent
  bool version_dir_real = true;  // v1/ is a real directory, no symlink
};

QuarantineDecision DecideQuarantine(const QuarantineFacts& f);

}  // namespace kc::initwarm
