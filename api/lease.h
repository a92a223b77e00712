// Typed view of a coordination.k8s.io/v1 Lease (leader election).
// Times are metav1.MicroTime ("2026-12-02T09:31:35.123456Z", api/time.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/meta.h"

namespace kc::api {

struct LeaseSpec {
  std::string holder_identity;         // "holderIdentity"
  int64_t lease_duration_seconds = 0;  // "leaseDurationSeconds"
  std::optional<Time> acquire_time;    // "acquireTime"
  std::optional<Time> renew_time;      // "renewTime"
  int64_t lease_transitions = 0;       // "leaseTransitions"

  friend bool operator==(const LeaseSpec&, const LeaseSpec&) = default;
};

struct Lease {
  ObjectMeta metadata;
  LeaseSpec spec;
};

void from_json(const Json& j, LeaseSpec& s);  // NOLINT(readability-identifier-naming)
// Writes every field that is set (zero durations/transitions are omitted,
// as the API server does).
void to_json(Json& j, const LeaseSpec& s);  // NOLINT(readability-identifier-naming)
void from_json(const Json& j, Lease& l);    // NOLINT(readability-identifier-naming)
void to_json(Json& j, const Lease& l);      // NOLINT(readability-identifier-naming)

}  // namespace kc::api
