#include "operator/webhook/trust.h"

#include <algorithm>

namespace kc::webhook {
namespace {

// A CA that can still verify something at `now`.
bool UsableCa(const std::string& pem, TimePoint now) {
  auto info = ParseCert(pem);
  return info.ok() && info->is_ca && info->not_before <= now && now < info->not_after;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string PlanBundle(TimePoint now, const std::string& current,
                       const std::vector<std::string>& retained) {
  std::vector<std::string> cas;
  if (ParseCert(current).ok()) cas.push_back(current);
  for (const std::string& ca : retained) {
    if (!Contains(cas, ca) && UsableCa(ca, now)) cas.push_back(ca);
  }
  std::string out;
  for (const std::string& ca : cas) out += ca;
  return out;
}

std::vector<std::string> RetainAtRotation(TimePoint now, const RotationInputs& in) {
  std::vector<std::string> candidates;
  auto old = ParseCert(in.old_ca);
  if (old.ok() && old->is_ca) {
    candidates.push_back(in.old_ca);
    candidates.insert(candidates.end(), in.old_retained.begin(), in.old_retained.end());
  } else {
    candidates = in.in_bundle;
  }
  std::vector<std::string> out;
  for (const std::string& ca : candidates) {
    if (ca != in.new_ca && !Contains(out, ca) && UsableCa(ca, now)) out.push_back(ca);
  }
  return out;
}

const char* CaRotationStepName(CaRotationStep s) {
  switch (s) {
    case CaRotationStep::kNone:
      return "None";
    case CaRotationStep::kAnnounce:
      return "Announce";
    case CaRotationStep::kWait:
      return "Wait";
    case CaRotationStep::kPromote:
      return "Promote";
  }
  return "?";
}

CaRotationStep DecideCaRotation(TimePoint now, const CaRotationState& s,
                                std::chrono::seconds settle) {
  if (!s.rotation_due) return CaRotationStep::kNone;
  if (!s.next_usable) return CaRotationStep::kAnnounce;
  const bool settled = !s.announced_at || now >= *s.announced_at + settle;
  return settled && s.next_in_every_bundle ? CaRotationStep::kPromote : CaRotationStep::kWait;
}

Readiness DecideServingReady(TimePoint now, const std::string& served_cert_pem,
                             const std::optional<std::vector<EntryBundle>>& entries) {
  if (served_cert_pem.empty()) return {false, "no serving certificate loaded yet"};
  auto info = ParseCert(served_cert_pem);
  if (!info.ok()) return {false, "the serving certificate does not parse"};
  if (now < info->not_before || now >= info->not_after) {
    return {false, "the serving certificate (serial " + info->serial_hex + ") is not valid now"};
  }
  if (!entries) return {true, ""};
  for (const EntryBundle& e : *entries) {
    if (e.bundle_pem.empty()) {
      return {false, e.where + " has no caBundle yet"};
    }
    if (!VerifyIssuedBy(served_cert_pem, e.bundle_pem, now).ok()) {
      return {false, "the serving certificate (serial " + info->serial_hex +
                         ") does not chain to the caBundle of " + e.where};
    }
  }
  return {true, ""};
}

}  // namespace kc::webhook
