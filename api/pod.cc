#include "api/pod.h"

namespace kc::api {
namespace {

std::optional<ContainerStateTerminated> Terminated(const Json& state) {
  const Json* t = Field(state, "terminated");
  if (t == nullptr || !t->is_object() || t->empty()) return std::nullopt;
  ContainerStateTerminated out;
  Read(*t, "exitCode", &out.exit_code);
  Read(*t, "reason", &out.reason);
  Read(*t, "message", &out.message);
  Read(*t, "containerID", &out.container_id);
  Read(*t, "startedAt", &out.started_at);
  Read(*t, "finishedAt", &out.finished_at);
  return out;
}

}  // namespace

const ContainerStatus* Pod::FindContainerStatus(std::string_view name) const {
  for (const auto* list : {&init_container_statuses, &container_statuses}) {
    for (const auto& s : *list) {
      if (s.name == name) return &s;
    }
  }
  return nullptr;
}

void from_json(const Json& j, ContainerStatus& s) {
  s = ContainerStatus();
  Read(j, "name", &s.name);
  Read(j, "ready", &s.ready);
  Read(j, "restartCount", &s.restart_count);
  Read(j, "image", &s.image);
  Read(j, "imageID", &s.image_id);
  const Json& state = Object(j, "state");
  s.running = Field(state, "running") != nullptr;
  const Json* waiting = Field(state, "waiting");
  if (waiting != nullptr && waiting->is_object()) {
    std::string reason;
    Read(*waiting, "reason", &reason);
    s.waiting_reason = reason;
  }
  s.terminated = Terminated(state);
  s.last_terminated = Terminated(Object(j, "lastState"));
}

void from_json(const Json& j, Pod& p) {
  p = Pod();
  p.metadata = MetaOf(j);
  Read(Object(j, "spec"), "nodeName", &p.node_name);
  const Json& status = Object(j, "status");
  Read(status, "phase", &p.phase);
  auto decode = [](const Json& i, ContainerStatus* s) { from_json(i, *s); };
  ReadList(status, "initContainerStatuses", &p.init_container_statuses, decode);
  ReadList(status, "containerStatuses", &p.container_statuses, decode);
  p.conditions = ConditionsFromJson(status, "conditions");
}

}  // namespace kc::api
