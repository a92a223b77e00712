// Typed view of a core/v1 Node: what scheduling and fingerprinting read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/meta.h"

namespace kc::api {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute

  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Node {
  ObjectMeta metadata;
  bool unschedulable = false;  // spec.unschedulable: cordoned
  std::vector<Taint> taints;
  // status.capacity / status.allocatable: "nvidia.com/gpu" -> "8" (a number
  // in the JSON becomes its text).
  std::map<std::string, std::string> capacity;
  std::map<std::string, std::string> allocatable;
  std::vector<Condition> conditions;

  // The Ready condition is True.
  bool Ready() const { return IsConditionTrue(conditions, "Ready"); }
};

void from_json(const Json& j, Taint& t);  // NOLINT(readability-identifier-naming)
void from_json(const Json& j, Node& n);   // NOLINT(readability-identifier-naming)

}  // namespace kc::api
