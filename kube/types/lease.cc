#include "kube/types/lease.h"

#include "base/json_get.h"

namespace kc::kube {

using json_get::Object;
using json_get::Read;

void from_json(const nlohmann::json& j, LeaseSpec& s) {
  s = LeaseSpec();
  Read(j, "holderIdentity", &s.holder_identity);
  Read(j, "leaseDurationSeconds", &s.lease_duration_seconds);
  Read(j, "acquireTime", &s.acquire_time);
  Read(j, "renewTime", &s.renew_time);
  Read(j, "leaseTransitions", &s.lease_transitions);
}

void to_json(nlohmann::json& j, const LeaseSpec& s) {
  j = nlohmann::json::object();
  if (!s.holder_identity.empty()) j["holderIdentity"] = s.holder_identity;
  if (s.lease_duration_seconds != 0) j["leaseDurationSeconds"] = s.lease_duration_seconds;
  if (!s.acquire_time.empty()) j["acquireTime"] = s.acquire_time;
  if (!s.renew_time.empty()) j["renewTime"] = s.renew_time;
  if (s.lease_transitions != 0) j["leaseTransitions"] = s.lease_transitions;
}

void from_json(const nlohmann::json& j, Lease& l) {
  l = Lease();
  from_json(Object(j, "metadata"), l.metadata);
  from_json(Object(j, "spec"), l.spec);
}

void to_json(nlohmann::json& j, const Lease& l) {
  j = {{"apiVersion", "coordination.k8s.io/v1"},
       {"kind", "Lease"},
       {"metadata", l.metadata},
       {"spec", l.spec}};
}

}  // namespace kc::kube
