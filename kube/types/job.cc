#include "kube/types/job.h"

#include "base/json_get.h"

namespace kc::kube {

using json_get::Object;
using json_get::Read;
using json_get::ReadList;

void from_json(const nlohmann::json& j, Job& job) {
  job = Job();
  from_json(Object(j, "metadata"), job.metadata);
  const auto& status = Object(j, "status");
  Read(status, "active", &job.active);
  Read(status, "succeeded", &job.succeeded);
  Read(status, "failed", &job.failed);
  Read(status, "startTime", &job.start_time);
  Read(status, "completionTime", &job.completion_time);
  ReadList(status, "conditions", &job.conditions,
           [](const nlohmann::json& i, Condition* c) { from_json(i, *c); });
}

}  // namespace kc::kube
