// Typed view of a batch/v1 Job's status (the uid is metadata.uid).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/types/meta.h"

namespace kc::kube {

struct Job {
  ObjectMeta metadata;
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  std::vector<Condition> conditions;  // Complete, Failed, SuccessCriteriaMet, FailureTarget, ...
  std::string start_time;
  std::string completion_time;

  bool Complete() const { return IsConditionTrue(conditions, "Complete"); }
  bool Failed() const { return IsConditionTrue(conditions, "Failed"); }
  bool Finished() const { return Complete() || Failed(); }
};

void from_json(const nlohmann::json& j, Job& job);  // NOLINT(readability-identifier-naming)

}  // namespace kc::kube
