#include "kube/types/node.h"

#include "base/json_get.h"

namespace kc::kube {

using json_get::Object;
using json_get::Read;
using json_get::ReadList;

void from_json(const nlohmann::json& j, Taint& t) {
  t = Taint();
  Read(j, "key", &t.key);
  Read(j, "value", &t.value);
  Read(j, "effect", &t.effect);
}

void from_json(const nlohmann::json& j, Node& n) {
  n = Node();
  from_json(Object(j, "metadata"), n.metadata);
  const auto& spec = Object(j, "spec");
  Read(spec, "unschedulable", &n.unschedulable);
  ReadList(spec, "taints", &n.taints, [](const nlohmann::json& i, Taint* t) { from_json(i, *t); });
  const auto& status = Object(j, "status");
  Read(status, "capacity", &n.capacity);
  Read(status, "allocatable", &n.allocatable);
  ReadList(status, "conditions", &n.conditions,
           [](const nlohmann::json& i, Condition* c) { from_json(i, *c); });
}

}  // namespace kc::kube
