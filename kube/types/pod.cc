#include "kube/types/pod.h"

#include "base/json_get.h"

namespace kc::kube {

using json_get::Field;
using json_get::Object;
using json_get::Read;
using json_get::ReadList;

namespace {

std::optional<ContainerStateTerminated> Terminated(const nlohmann::json& state) {
  const nlohmann::json* t = Field(state, "terminated");
  if (t == nullptr || !t->is_object()) return std::nullopt;
  ContainerStateTerminated out;
  Read(*t, "exitCode", &out.exit_code);
  Read(*t, "reason", &out.reason);
  Read(*t, "message", &out.message);
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

void from_json(const nlohmann::json& j, ContainerStatus& s) {
  s = ContainerStatus();
  Read(j, "name", &s.name);
  Read(j, "ready", &s.ready);
  Read(j, "restartCount", &s.restart_count);
  Read(j, "image", &s.image);
  Read(j, "imageID", &s.image_id);
  const auto& state = Object(j, "state");
  s.running = Field(state, "running") != nullptr;
  const nlohmann::json* waiting = Field(state, "waiting");
  if (waiting != nullptr && waiting->is_object()) {
    std::string reason;
    Read(*waiting, "reason", &reason);
    s.waiting_reason = reason;
  }
  s.terminated = Terminated(state);
  s.last_terminated = Terminated(Object(j, "lastState"));
}

void from_json(const nlohmann::json& j, Pod& p) {
  p = Pod();
  from_json(Object(j, "metadata"), p.metadata);
  Read(Object(j, "spec"), "nodeName", &p.node_name);
  const auto& status = Object(j, "status");
  Read(status, "phase", &p.phase);
  auto decode = [](const nlohmann::json& i, ContainerStatus* s) { from_json(i, *s); };
  ReadList(status, "initContainerStatuses", &p.init_container_statuses, decode);
  ReadList(status, "containerStatuses", &p.container_statuses, decode);
  ReadList(status, "conditions", &p.conditions,
           [](const nlohmann::json& i, Condition* c) { from_json(i, *c); });
}

}  // namespace kc::kube
