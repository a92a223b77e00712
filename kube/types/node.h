// Typed view of a core/v1 Node: what scheduling and fingerprinting read.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kube/types/meta.h"

namespace kc::kube {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute

  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Node {
  ObjectMeta metadata;
  bool unschedulable = false;  // cordoned
  std::vector<Taint> taints;
  std::map<std::string, std::string> capacity;  // "nvidia.com/gpu" -> "8"
  std::map<std::string, std::string> allocatable;
  std::vector<Condition> conditions;

  // The Ready condition is True.
  bool Ready() const { return IsConditionTrue(conditions, "Ready"); }
};

void from_json(const nlohmann::json& j, Taint& t);  // NOLINT(readability-identifier-naming)
void from_json(const nlohmann::json& j, Node& n);

}  // namespace kc::kube
