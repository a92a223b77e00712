#include "kube/leader_election.h"

#include <condition_variable>
#include <iostream>
#include <thread>
#include <utility>

#include "api/lease.h"

namespace kc::kube {
namespace {

int64_t Seconds(Clock::Duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

}  // namespace

Status ValidateLeaderElectionConfig(const LeaderElectionConfig& c) {
  if (c.lease_name.empty()) return InvalidArgumentError("leader election: lease_name is empty");
  if (c.lease_namespace.empty()) {
    return InvalidArgumentError("leader election: lease_namespace is empty");
  }
  if (c.identity.empty()) {
    return InvalidArgumentError(
        "leader election: identity is empty (use the pod name or hostname plus a unique suffix)");
  }
  if (Seconds(c.lease_duration) < 1) {
    return InvalidArgumentError("leader election: lease_duration must be at least 1s");
  }
  if (c.lease_duration <= c.renew_deadline) {
    return InvalidArgumentError(
        "leader election: lease_duration must be greater than renew_deadline");
  }
  if (c.renew_deadline <= c.retry_period || c.retry_period <= Clock::Duration::zero()) {
    return InvalidArgumentError(
        "leader election: renew_deadline must be greater than retry_period (> 0)");
  }
  return OkStatus();
}

LeaseRecord LeaseRecordFromJson(const Json& lease) {
  api::LeaseSpec spec;
  from_json(api::Object(lease, "spec"), spec);
  LeaseRecord r;
  r.holder = std::move(spec.holder_identity);
  r.lease_duration_seconds = spec.lease_duration_seconds;
  r.lease_transitions = spec.lease_transitions;
  r.acquire_time = spec.acquire_time;
  r.renew_time = spec.renew_time;
  return r;
}

void LeaseRecordToJson(const LeaseRecord& record, Json* lease) {
  Json& spec = (*lease)["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (record.holder.empty()) {
    spec.erase("holderIdentity");
  } else {
    spec["holderIdentity"] = record.holder;
  }
  spec["leaseDurationSeconds"] = record.lease_duration_seconds;
  spec["leaseTransitions"] = record.lease_transitions;
  if (record.acquire_time) spec["acquireTime"] = api::FormatMicroTime(*record.acquire_time);
  if (record.renew_time) spec["renewTime"] = api::FormatMicroTime(*record.renew_time);
}

LeaseAction DecideLeaseAction(const LeaseRecord& current, const std::string& identity,
                              api::Time now) {
  if (current.holder == identity) return LeaseAction::kRenew;
  if (current.holder.empty() || !current.renew_time) return LeaseAction::kTakeOver;
  const api::Time expiry =
      *current.renew_time + std::chrono::seconds(current.lease_duration_seconds);
  return expiry < now ? LeaseAction::kTakeOver : LeaseAction::kHeldByOther;
}

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(Client& client,
                                                               LeaderElectionConfig config) {
  KC_RETURN_IF_ERROR(ValidateLeaderElectionConfig(config));
  return std::unique_ptr<LeaderElector>(new LeaderElector(client, std::move(config)));
}

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig config)
    : client_(client),
      config_(std::move(config)),
      clock_(config_.clock != nullptr ? *config_.clock : RealClock()) {
  if (!config_.on_error) {
    const std::string who = config_.identity;
    config_.on_error = [who](const Status& s) {
      std::cerr << "leader election (" << who << "): " << s << std::endl;
    };
  }
}

std::string LeaderElector::GetLeader() const {
  std::lock_guard<std::mutex> l(mu_);
  return observed_holder_;
}

void LeaderElector::Report(const Status& s) { config_.on_error(s); }

void LeaderElector::Observe(const LeaseRecord& record) {
  bool changed = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (record.holder != observed_holder_) {
      observed_holder_ = record.holder;
      changed = true;
    }
  }
  if (changed && !record.holder.empty() && config_.callbacks.on_new_leader) {
    config_.callbacks.on_new_leader(record.holder);
  }
}

LeaderElector::Attempt LeaderElector::TryAcquireOrRenew() {
  const Resource& leases = resources::kLeases;
  const api::Time now = clock_.WallNow();
  LeaseRecord mine;
  mine.holder = config_.identity;
  mine.lease_duration_seconds = Seconds(config_.lease_duration);
  mine.renew_time = now;

  StatusOr<Json> current = client_.Get(leases, config_.lease_namespace, config_.lease_name);
  if (!current.ok() && IsNotFound(current.status())) {
    mine.acquire_time = now;
    Json lease = {
        {"apiVersion", leases.ApiVersion()},
        {"kind", leases.kind},
        {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}}};
    LeaseRecordToJson(mine, &lease);
    StatusOr<Json> created = client_.Create(leases, config_.lease_namespace, lease);
    if (!created.ok()) {
      if (!IsAlreadyExists(created.status())) Report(created.status().WithContext("create lease"));
      return Attempt::kFailed;
    }
    Observe(mine);
    return Attempt::kOk;
  }
  if (!current.ok()) {
    Report(current.status().WithContext("get lease"));
    return Attempt::kFailed;
  }
  const LeaseRecord old = LeaseRecordFromJson(*current);
  Observe(old);
  switch (DecideLeaseAction(old, config_.identity, now)) {
    case LeaseAction::kHeldByOther:
      return Attempt::kHeldByOther;
    case LeaseAction::kRenew:
      mine.acquire_time = old.acquire_time.value_or(now);
      mine.lease_transitions = old.lease_transitions;
      break;
    case LeaseAction::kTakeOver:
      mine.acquire_time = now;
      mine.lease_transitions = old.lease_transitions + 1;
      break;
  }
  Json lease = *current;  // carries metadata.resourceVersion: optimistic concurrency
  LeaseRecordToJson(mine, &lease);
  StatusOr<Json> updated = client_.Update(leases, config_.lease_namespace, lease);
  if (!updated.ok()) {
    // Conflict: someone else wrote first; the next period re-reads.
    if (!IsConflict(updated.status())) Report(updated.status().WithContext("update lease"));
    return Attempt::kFailed;
  }
  Observe(mine);
  return Attempt::kOk;
}

void LeaderElector::Release() {
  const Resource& leases = resources::kLeases;
  StatusOr<Json> current = client_.Get(leases, config_.lease_namespace, config_.lease_name);
  if (!current.ok()) {
    Report(current.status().WithContext("release lease: get"));
    return;
  }
  LeaseRecord old = LeaseRecordFromJson(*current);
  if (old.holder != config_.identity) return;  // not ours any more
  const api::Time now = clock_.WallNow();
  LeaseRecord released;
  released.lease_duration_seconds = 1;
  released.acquire_time = now;
  released.renew_time = now;
  released.lease_transitions = old.lease_transitions;
  Json lease = *current;
  LeaseRecordToJson(released, &lease);
  StatusOr<Json> updated = client_.Update(leases, config_.lease_namespace, lease);
  if (!updated.ok()) {
    Report(updated.status().WithContext("release lease"));
    return;
  }
  Observe(released);
}

void LeaderElector::Run(const std::stop_token& stop) {
  if (config_.ready_to_lead && !config_.ready_to_lead(stop)) return;
  // Acquire.
  while (!stop.stop_requested()) {
    if (TryAcquireOrRenew() == Attempt::kOk) break;
    clock_.SleepFor(config_.retry_period, stop);
  }
  if (stop.stop_requested()) return;

  leading_ = true;
  std::stop_source lead_stop;
  std::jthread leading;
  if (config_.callbacks.on_started_leading) {
    leading = std::jthread(
        [this, token = lead_stop.get_token()] { config_.callbacks.on_started_leading(token); });
  }

  // Renew. A watchdog stops the leader's work once renew_deadline passes
  // without a successful renewal, even while a renewal call is still hanging
  // (the Client has no per-call deadline), so the work never outlives the
  // lease another candidate may take.
  std::mutex renew_mu;
  std::condition_variable_any renew_cv;
  Clock::TimePoint last_renew = clock_.Now();
  std::atomic<bool> expired{false};
  auto renew_overdue = [&] { return clock_.Now() >= last_renew + config_.renew_deadline; };
  std::jthread watchdog([&](const std::stop_token& own) {
    std::unique_lock<std::mutex> lock(renew_mu);
    while (!own.stop_requested()) {
      clock_.WaitUntil(lock, renew_cv, last_renew + config_.renew_deadline, own,
                       [&] { return own.stop_requested() || renew_overdue(); });
      if (!own.stop_requested() && renew_overdue()) {
        expired = true;
        leading_ = false;
        lead_stop.request_stop();
        return;
      }
    }
  });
  while (clock_.SleepFor(config_.retry_period, stop) && !expired) {
    const Attempt a = TryAcquireOrRenew();
    if (expired) break;  // the watchdog already gave up leadership
    if (a == Attempt::kOk) {
      std::lock_guard<std::mutex> l(renew_mu);
      last_renew = clock_.Now();
      renew_cv.notify_all();
      continue;
    }
    if (a == Attempt::kHeldByOther) {
      Report(FailedPreconditionError("lost the lease to " + GetLeader()));
      break;
    }
  }
  if (expired) {
    Report(DeadlineExceededError("could not renew the lease within the renew deadline"));
  }
  watchdog.request_stop();
  watchdog.join();

  leading_ = false;
  lead_stop.request_stop();
  if (leading.joinable()) leading.join();
  if (stop.stop_requested() && config_.release_on_cancel) Release();
  if (config_.callbacks.on_stopped_leading) config_.callbacks.on_stopped_leading();
}

}  // namespace kc::kube
