// Typed view of a batch/v1 Job's status (the uid is metadata.uid).
#pragma once

#include <optional>
#include <vector>

#include "api/meta.h"

namespace kc::api {

struct Job {
  ObjectMeta metadata;
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  std::vector<Condition> conditions;    // Complete, Failed, SuccessCriteriaMet, FailureTarget, ...
  std::optional<Time> start_time;       // status.startTime
  std::optional<Time> completion_time;  // status.completionTime

  bool Complete() const { return IsConditionTrue(conditions, "Complete"); }
  bool Failed() const { return IsConditionTrue(conditions, "Failed"); }
  bool Finished() const { return Complete() || Failed(); }
};

void from_json(const Json& j, Job& job);  // NOLINT(readability-identifier-naming)

}  // namespace kc::api
