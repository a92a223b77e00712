#include "api/lease.h"

namespace kc::api {

void from_json(const Json& j, LeaseSpec& s) {
  s = LeaseSpec();
  Read(j, "holderIdentity", &s.holder_identity);
  Read(j, "leaseDurationSeconds", &s.lease_duration_seconds);
  Read(j, "acquireTime", &s.acquire_time);
  Read(j, "renewTime", &s.renew_time);
  Read(j, "leaseTransitions", &s.lease_transitions);
}

void to_json(Json& j, const LeaseSpec& s) {
  j = Json::object();
  if (!s.holder_identity.empty()) j["holderIdentity"] = s.holder_identity;
  if (s.lease_duration_seconds != 0) j["leaseDurationSeconds"] = s.lease_duration_seconds;
  if (s.acquire_time) j["acquireTime"] = FormatMicroTime(*s.acquire_time);
  if (s.renew_time) j["renewTime"] = FormatMicroTime(*s.renew_time);
  if (s.lease_transitions != 0) j["leaseTransitions"] = s.lease_transitions;
}

void from_json(const Json& j, Lease& l) {
  l = Lease();
  l.metadata = MetaOf(j);
  from_json(Object(j, "spec"), l.spec);
}

void to_json(Json& j, const Lease& l) {
  j = {{"apiVersion", "coordination.k8s.io/v1"},
       {"kind", "Lease"},
       {"metadata", MetadataToJson(l.metadata)},
       {"spec", l.spec}};
}

}  // namespace kc::api
