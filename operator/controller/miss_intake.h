// The miss channel's receiving end: POST /v1/misses (core/miss_channel.h).
//
// A report is accepted only when
//   1. its bearer token is a pod-bound ServiceAccount token for
//      core::kMissTokenAudience that a TokenReview authenticates
//      (IdentityFromTokenReview: namespace, pod name and uid), and
//   2. that pod is in the operator's cache of gated pods with the same uid,
//      labelled kernelcache.io/consumer, and its gate reported Warm with a
//      fingerprint and manifest digest (SourceFromGatedPod); the report's
//      own fingerprint must be that one.
// The KernelCache, fingerprint and digest recorded are the pod's, never the
// body's. Answers: 200, or 400/401/403/413/503 with {"error"} naming why.
// The pure parts are separate functions with table tests; the handler only
// chains them.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/miss_report.h"
#include "operator/controller/miss_ledger.h"
#include "operator/decide/types.h"
#include "operator/serving/http_server.h"

namespace kc::op {

struct TokenIdentity {
  std::string ns;
  std::string pod;
  std::string pod_uid;
  friend bool operator==(const TokenIdentity&, const TokenIdentity&) = default;
};

// "Bearer <token>" -> the token; Unauthenticated otherwise.
StatusOr<std::string> BearerToken(const std::string& authorization);

// The TokenReview request for `token` (audience core::kMissTokenAudience).
Json TokenReviewRequest(const std::string& token);

// From the API server's TokenReview answer: Unauthenticated when it did not
// authenticate the token for our audience; PermissionDenied when the token
// is not a pod-bound ServiceAccount token (no pod name or uid).
StatusOr<TokenIdentity> IdentityFromTokenReview(const Json& review);

// The cache the pod's gate handed it (`pod`: the cached gated pod named by
// the token, nullopt when the cache has none). PermissionDenied naming the
// reason when the pod is unknown, another pod of that name (uid), not
// gated, or not gated Warm; or when the report's fingerprint is not the
// gate's.
StatusOr<MissSource> SourceFromGatedPod(const TokenIdentity& id, const std::optional<Json>& pod,
                                        const core::MissReport& report);

struct MissIntake {
  // POSTs a TokenReview and returns the answer (Unavailable when the API
  // server could not be asked).
  std::function<StatusOr<Json>(const Json& review)> review;
  std::function<std::optional<Json>(const std::string& ns, const std::string& name)> gated_pod;
  MissLedger* ledger = nullptr;
  // After a report was recorded: metrics, the Event, a reconcile.
  std::function<void(const MissSource&, const MissRecord&)> on_record;
  std::function<Time()> now;
  // Only the leader's reconciler writes status: another replica answers 503
  // (the watcher retries; the Service picks a replica per connection).
  std::function<bool()> leading;
};

// The Warning Event's message: the fingerprint, the entries (at most 5
// named, then "and N more") and the pods (likewise), under 1 KiB.
std::string MissEventMessage(const MissSource& src, const MissEventDue& due);

HttpResponse HandleMissReport(const HttpRequest& req, const MissIntake& intake);

}  // namespace kc::op
