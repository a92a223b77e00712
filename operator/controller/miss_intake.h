// The miss channel's receiving end: POST /v1/misses (core/miss_channel.h).
//
// A report is accepted only when
//   1. its bearer token is a JWT for core::kMissTokenAudience, unexpired,
//      bound to a pod (ClaimsOfMissToken, miss_token.h), and that pod is a
//      gated pod in the operator's cache with the token's uid: all read
//      before any API call, so junk costs no TokenReview;
//   2. a TokenReview authenticates it (IdentityFromTokenReview: namespace,
//      pod name and uid, the same as the claims); a successful review is
//      kept by the token's hash until the token expires
//      (token_review_cache.h), so a watcher's reports cost one review per
//      token;
//   3. that pod is labelled kernelcache.io/consumer and its gate reported
//      Warm with a fingerprint and manifest digest (SourceFromGatedPod); the
//      report's own fingerprint must be that one; and
//   4. that KernelCache exists in the pod's namespace and its status lists
//      that fingerprint with that manifest digest (CheckSourceInStatus).
// The KernelCache, fingerprint and digest recorded are the pod's, never the
// body's. Answers: 200, or 400/401/403/413/429/503 with {"error"} naming
// why. SubmitMissReport() runs the checks of (1) on the server's thread and
// the rest on a bounded pool of workers, answering 429 when its queue is
// full; HandleMissReport() is the same chain run inline (tests).
// The pure parts are separate functions with table tests; the handlers only
// chain them.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/miss_report.h"
#include "operator/controller/miss_ledger.h"
#include "operator/controller/miss_token.h"
#include "operator/controller/token_review_cache.h"
#include "operator/decide/types.h"
#include "operator/serving/bounded_workers.h"
#include "operator/serving/http_server.h"

namespace kc::op {

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

// PermissionDenied unless the gated pod the token claims is in the cache
// with the token's uid (checked before the TokenReview).
Status CheckClaimedPod(const TokenClaims& claims, const std::optional<Json>& pod);

// Whether the pod's inbox files may be harvested: not when its containers
// share one process namespace (spec.shareProcessNamespace), where the app's
// code can reach the miss watcher's filesystem through /proc/<pid>/root and
// write what the watcher copies. Its misses are still counted.
bool MayHarvestFrom(const Json& pod);

// PermissionDenied unless `kernelcache` (the KernelCache object the pod's
// label names, nullopt when there is none in its namespace) lists the
// source's fingerprint with its manifest digest in its status.
Status CheckSourceInStatus(const MissSource& src, const std::optional<Json>& kernelcache);

struct MissIntake {
  // POSTs a TokenReview and returns the answer (Unavailable when the API
  // server could not be asked). Its own client: a flood of reviews never
  // spends the reconciler's API budget.
  std::function<StatusOr<Json>(const Json& review)> review;
  TokenReviewCache* reviews = nullptr;  // successful reviews by token hash
  std::function<std::optional<Json>(const std::string& ns, const std::string& name)> gated_pod;
  std::function<std::optional<Json>(const std::string& ns, const std::string& name)> kernelcache;
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

// The review pool's size: its threads, and how many reports may wait for
// one (a fleet's watchers report once a minute each; one review per token
// per hour after that).
inline constexpr std::size_t kMissReviewThreads = 2;
inline constexpr std::size_t kMissReviewQueue = 256;

// The same chain, the checks before any API call on the calling thread, the
// rest on `workers`; `done` gets 429 at once when their queue is full.
void SubmitMissReport(HttpRequest req, HttpDone done, const MissIntake& intake,
                      BoundedWorkers& workers);

}  // namespace kc::op
