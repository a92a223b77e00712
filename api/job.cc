#include "api/job.h"

namespace kc::api {

void from_json(const Json& j, Job& job) {
  job = Job();
  job.metadata = MetaOf(j);
  const Json& status = Object(j, "status");
  Read(status, "active", &job.active);
  Read(status, "succeeded", &job.succeeded);
  Read(status, "failed", &job.failed);
  Read(status, "startTime", &job.start_time);
  Read(status, "completionTime", &job.completion_time);
  job.conditions = ConditionsFromJson(status, "conditions");
}

}  // namespace kc::api
