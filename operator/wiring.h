// The operator program's wiring, in named steps that main.cc calls in order:
// what each library is given from the Config (pure, table-tested), and the
// routes of the plain HTTP listeners.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "kube/leader_election.h"
#include "operator/config.h"
#include "operator/controller/controller.h"
#include "operator/controller/miss_intake.h"
#include "operator/serving/cert_controller.h"
#include "operator/serving/http_server.h"
#include "operator/serving/metrics.h"
#include "operator/webhook/review.h"
#include "operator/webhook/trust.h"

namespace kc::op {

// Recorded by the webhook in the pods it mutates (the chart's appVersion).
inline constexpr char kInjectorVersion[] = "kernelcache-operator/0.1.0";

// Decide's settings from the flags.
Settings SettingsFrom(const Config& c);
// The controller's options; `events_client` writes the Events (may be null).
ControllerOptions ControllerOptionsFrom(const Config& c, kube::Client* events_client);
// What the pod mutation injects.
webhook::InjectSettings InjectSettingsFrom(const Config& c);
// The webhook certificates' Secret, Service, configurations and lifetimes.
webhook::CertControllerOptions CertControllerOptionsFrom(const Config& c);
// The Lease and its timings; the caller adds the callbacks.
kube::LeaderElectionConfig LeaderElectionFrom(const Config& c);

// GET /readyz: 200 once the informers have synced and, with the webhooks
// on (`certs` set), the replica serves a certificate the caBundle trusts;
// else 503 with why.
HttpResponse ReadyzResponse(bool synced, const std::optional<webhook::Readiness>& certs);

// The miss channel's intake (POST /v1/misses, miss_intake.h): TokenReviews
// through `review_client` (its own, so reviews never spend the reconciler's
// API budget), kept in `reviews`; pods and KernelCaches from the
// controller's cache, the ledger, and on each report the runtime-miss
// metrics, the rate-limited Warning Event "RuntimeMisses" on the
// KernelCache, and a reconcile (status). `leading`: whether this replica
// runs the workers.
MissIntake MissIntakeFor(Controller& controller, OperatorMetrics& metrics,
                         kube::Client& review_client, TokenReviewCache* reviews,
                         std::function<bool()> leading, const Logger& log);

// The routes of one plain listener serving `groups` ("health", "metrics",
// "resolve"; the last also takes POST /v1/misses when `misses` is set, its
// reviews run on `miss_workers`, never on the listener's thread).
// `certs`: the webhook's certificate controller, null when the webhooks are
// off.
void RegisterHandlers(HttpServer& server, const std::set<std::string>& groups,
                      Controller& controller, OperatorMetrics& metrics,
                      const webhook::CertController* certs, const MissIntake* misses = nullptr,
                      BoundedWorkers* miss_workers = nullptr);

}  // namespace kc::op
