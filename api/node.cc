#include "api/node.h"

namespace kc::api {

void from_json(const Json& j, Taint& t) {
  t = Taint();
  Read(j, "key", &t.key);
  Read(j, "value", &t.value);
  Read(j, "effect", &t.effect);
}

void from_json(const Json& j, Node& n) {
  n = Node();
  n.metadata = MetaOf(j);
  const Json& spec = Object(j, "spec");
  Read(spec, "unschedulable", &n.unschedulable);
  ReadList(spec, "taints", &n.taints, [](const Json& i, Taint* t) { from_json(i, *t); });
  const Json& status = Object(j, "status");
  Read(status, "capacity", &n.capacity);
  Read(status, "allocatable", &n.allocatable);
  n.conditions = ConditionsFromJson(status, "conditions");
}

}  // namespace kc::api
