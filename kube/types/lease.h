// Typed view of a coordination.k8s.io/v1 Lease (leader election).
// Times are metav1.MicroTime strings (kube/wall_time.h formats and parses them).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kube/types/meta.h"

namespace kc::kube {

struct LeaseSpec {
  std::string holder_identity;
  int lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int lease_transitions = 0;

  friend bool operator==(const LeaseSpec&, const LeaseSpec&) = default;
};

struct Lease {
  ObjectMeta metadata;
  LeaseSpec spec;
};

void from_json(const nlohmann::json& j, LeaseSpec& s);  // NOLINT(readability-identifier-naming)
// Writes every field that is set (zero durations/transitions are omitted,
// as the API server does).
void to_json(nlohmann::json& j, const LeaseSpec& s);
void from_json(const nlohmann::json& j, Lease& l);
void to_json(nlohmann::json& j, const Lease& l);

}  // namespace kc::kube
