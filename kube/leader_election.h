// LeaderElector: leader election on a coordination.k8s.io/v1 Lease
// (client-go's leaderelection contract, not its code).
//
// Contract:
// - Run(stop) blocks. It tries every retry_period to acquire the Lease
//   <lease_namespace>/<lease_name>: create it when missing, renew it when
//   this identity holds it, take it over when its holder is empty or it
//   expired (renewTime + leaseDurationSeconds < now). Every write is an
//   optimistic-concurrency Update carrying the resourceVersion read; a
//   Conflict just means "try again next period". A takeover increments
//   leaseTransitions and sets acquireTime.
// - Once leading, on_started_leading(token) runs on its own thread and the
//   lease is renewed every retry_period. Leadership is lost when no renewal
//   has succeeded for renew_deadline (also while a renewal call hangs: a
//   watchdog stops the token on time), or at once when another identity is
//   seen holding the lease; then the token is stopped, the thread joined
//   (the callback must return when its token stops), on_stopped_leading()
//   runs, and Run returns. Run also returns when `stop` is requested; with
//   release_on_cancel it then releases the lease (holder cleared,
//   leaseDurationSeconds 1) so another candidate takes over at its next try.
// - With ready_to_lead set, Run() first calls it and joins the election only
//   once it returns true (false: Run returns without touching the Lease).
//   The operator waits for its informer caches there: a restarted leader
//   (same identity, its Lease still its own) would otherwise renew the Lease
//   at once and hold it through a full relist while a synced standby waits.
// - on_new_leader(identity) is called whenever the observed holder changes
//   to a non-empty identity (this one included).
// - Requires lease_duration > renew_deadline > retry_period (Validate...).
//
// Thread-safe accessors IsLeader()/GetLeader(). One Run at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "api/time.h"
#include "base/status.h"
#include "kube/client.h"
#include "kube/clock.h"

namespace kc::kube {

struct LeaderCallbacks {
  std::function<void(std::stop_token)> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;
  Clock::Duration lease_duration = std::chrono::seconds(15);
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  Clock::Duration retry_period = std::chrono::seconds(2);
  bool release_on_cancel = true;
  LeaderCallbacks callbacks;
  // Blocks until this candidate may lead (true) or must not (false: `stop`
  // was requested); nullptr: at once.
  std::function<bool(std::stop_token)> ready_to_lead;
  Clock* clock = nullptr;                       // default RealClock()
  std::function<void(const Status&)> on_error;  // default: stderr
};

Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config);

// The spec of a Lease, as leader election reads it (decoded as api::LeaseSpec).
struct LeaseRecord {
  std::string holder;
  int64_t lease_duration_seconds = 0;
  std::optional<api::Time> acquire_time;
  std::optional<api::Time> renew_time;
  int64_t lease_transitions = 0;
};

LeaseRecord LeaseRecordFromJson(const Json& lease);
// Writes `record` into lease["spec"] (holderIdentity omitted when empty).
void LeaseRecordToJson(const LeaseRecord& record, Json* lease);

enum class LeaseAction { kRenew, kTakeOver, kHeldByOther };
// What `identity` may do with a lease in state `current` at `now`. Pure.
LeaseAction DecideLeaseAction(const LeaseRecord& current, const std::string& identity,
                              api::Time now);

class LeaderElector {
 public:
  static StatusOr<std::unique_ptr<LeaderElector>> Create(Client& client,
                                                         LeaderElectionConfig config);

  void Run(const std::stop_token& stop);

  bool IsLeader() const { return leading_.load(); }
  // The holder last observed ("" when none).
  std::string GetLeader() const;

 private:
  enum class Attempt { kOk, kFailed, kHeldByOther };

  LeaderElector(Client& client, LeaderElectionConfig config);
  Attempt TryAcquireOrRenew();
  void Release();
  void Observe(const LeaseRecord& record);
  void Report(const Status& s);

  Client& client_;
  LeaderElectionConfig config_;
  Clock& clock_;
  std::atomic<bool> leading_{false};
  mutable std::mutex mu_;
  std::string observed_holder_;
};

}  // namespace kc::kube
