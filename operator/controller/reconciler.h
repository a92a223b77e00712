// Reconciler: one level-triggered pass for one KernelCache, by key.
//
//   Result Reconcile("<namespace>/<name>")
//
// 1. Reads the KernelCache and what belongs to it from the informer caches
//    (never from the API server): matching Nodes (from the NodeIndex, in
//    name order), its Jobs and their Pods
//    (label kernelcache.io/name), its claim; builds an Observed.
// 2. Calls the pure Decide(observed, now) (operator/decide/decide.h).
// 3. Carries out plan.actions in order through the client: creates treat
//    AlreadyExists as success, deletes treat NotFound (and a uid
//    precondition conflict: the object is already another one) as success;
//    finalizers are a JSON merge patch of metadata.finalizers carrying the
//    resourceVersion read (optimistic concurrency).
// 4. Writes plan.status once, as a merge patch of the status subresource
//    with the resourceVersion precondition, only when it differs from the
//    status read. A Conflict (the cache was behind) is an error: the key is
//    retried with backoff and the next pass reads the newer object.
//    Put off while others wait: when the pass created or deleted a Job
//    and DeferStatusWhile's predicate says urgent keys wait for a worker
//    (a node change's KernelCaches, each waiting for its Job create), the
//    status is kept as owed instead (Result.status_deferred: the caller
//    queues the key again, without urgency). The next pass of the key reads
//    the owed status as if it had been written (so it decides and emits
//    nothing twice) and writes it, or puts it off once more: at most
//    kMaxStatusDeferrals passes in a row (a change and its revert, each
//    writing Jobs while others wait, then one status write for both). An
//    owed status lost with the process is a status write that failed: the
//    next pass decides again from the objects. Only one replica writes
//    status, and it exits when it loses the Lease (operator/main.cc), so
//    an owed status never outlives the leadership it was decided in.
// 5. Emits the plan's Events only after the status write succeeded (or
//    was put off), so a retried pass does not repeat them (a refinement of
//    decide.h's "in order": Events change no state).
// 6. A create that meets AlreadyExists means the caches were behind: see
//    ReconcileResult::stale_cache.
// A failing step stops the pass; Result.status carries the error (logged
// once, by the caller).
// Never throws: an exception escaping one pass (a bug, or input nothing
// else caught) becomes Internal "reconcile of <key> failed unexpectedly:
// <what>" in Result.status, so the caller retries that key with
// rate-limited backoff while every other key goes on, the way
// controller-runtime recovers a panic per item. Best effort, the object is
// told: its status gets Degraded=True reason ReconcileError with the
// message (phase Degraded) and a Warning Event ReconcileError. The next
// pass that succeeds sets Degraded from its own findings again. Metrics: per-KernelCache gauges
// from the status written, warmup durations and time-to-ready on state transitions,
// and the gate series from the gated pods' reports, each gate run counted once
// (operator/controller/gate_metrics.h). Gate runs that finished before this
// process's first pass are not counted: an operator that starts (or starts
// leading) does not count again what the replica before it counted.
//
// Thread-safe: the controller's workers call Reconcile concurrently, never
// for the same key at once (the work queue guarantees it).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "operator/controller/caches.h"
#include "operator/controller/gate_metrics.h"
#include "operator/decide/types.h"
#include "operator/serving/logging.h"
#include "operator/serving/metrics.h"

namespace kc::op {

namespace resources {
// kernelcache.io/v1alpha1 kernelcaches.
const kube::Resource& KernelCaches();
}  // namespace resources

// Where Events go. Production: Events written through the client.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // `involved`: the KernelCache object (apiVersion, kind, metadata).
  virtual void Emit(const kube::Json& involved, const std::string& type, const std::string& reason,
                    const std::string& message) = 0;
};

// Events through kube::EventRecorder (component "kernelcache-operator",
// instance = this replica's identity): repeats of one (object, type, reason,
// message) within 10 minutes bump the count of one Event. A failed write is
// logged, never retried. Emit() only queues: one writer thread makes the
// API calls (at most 1,024 waiting; more are dropped and logged), so a
// reconcile never waits on an Event. Stop() drops what is still queued.
class ClientEventSink : public EventSink {
 public:
  ClientEventSink(kube::Client& client, const Logger& logger, const std::string& identity);
  void Emit(const kube::Json& involved, const std::string& type, const std::string& reason,
            const std::string& message) override;
  void Flush() { recorder_.Flush(); }
  void Stop() { recorder_.Stop(); }

 private:
  kube::EventRecorder recorder_;
};

// Passes in a row that may put their status write off (step 4).
inline constexpr int kMaxStatusDeferrals = 2;

struct ReconcileResult {
  Status status;
  std::optional<std::chrono::seconds> requeue_after;
  // A create met AlreadyExists: the caches were behind what the API server
  // has (typically our own create of a moment ago). The pass carried out
  // its idempotent actions but wrote no status and emitted no Events, since
  // both were planned from stale input; the caller retries the key with
  // rate-limited backoff. A cache that stays behind for ever therefore
  // costs backoff, not a hot loop, and never duplicate Events.
  bool stale_cache = false;
  // The status write was put off (see step 4): queue the key again.
  bool status_deferred = false;
};

class Reconciler {
 public:
  Reconciler(
      kube::Client& client, Caches caches, Settings settings, EventSink* events,
      OperatorMetrics* metrics, Logger logger,
      std::function<Time()> now = [] { return std::chrono::system_clock::now(); });

  ReconcileResult Reconcile(const std::string& key) noexcept;

  // Step 4's predicate: true while urgent keys wait for a worker. Unset:
  // never put off. Set before the first Reconcile.
  void DeferStatusWhile(std::function<bool()> urgent_waiting) {
    urgent_waiting_ = std::move(urgent_waiting);
  }

  // Builds the Observed for `kc_json` from the caches (exposed for tests).
  Observed Observe(const kube::Json& kc_json) const;

 private:
  ReconcileResult ReconcileOnce(const std::string& key);
  // What a pass of a key whose KernelCache is gone leaves: its gauges, gate
  // ledger, owed status and first-seen times.
  void Forget(const std::string& key);
  // Step 1: the Observed, with the status owed for this object (step 4)
  // in place of the one read.
  struct Observation {
    Observed observed;
    core::KernelCacheStatus written;  // what the API server holds
    bool owed = false;
    int deferrals = 0;  // status writes put off in a row, before this pass
  };
  Observation ObserveOwing(const std::string& key, const kube::Json& kc_json);
  // Step 3: every action in order, stopping at the first error.
  struct Executed {
    Status status;
    std::string resource_version;         // after our own writes
    std::vector<std::string> finalizers;  // after our own writes
    bool stale = false;                   // a create met AlreadyExists (step 6)
    bool job_written = false;             // a Job was created, deleted or cancelled
  };
  Executed ExecuteAll(const Plan& plan, const core::KernelCache& kc, const Logger& log);
  // Step 4: the status written, kept as owed (*deferred), or left as is.
  Status WriteStatus(const std::string& key, const kube::Json& kc_json, const Observation& ob,
                     const Plan& plan, const Executed& done, const Logger& log, bool* deferred);
  // Step 5: the plan's Events.
  void EmitEvents(const kube::Json& kc_json, const Plan& plan, const Logger& log);
  // o.runtime_misses for the fingerprints of o.kc.status.
  void ObserveMisses(Observed& o) const;
  // Degraded/ReconcileError on the object and a Warning Event; errors and
  // exceptions here are logged and dropped.
  void ReportUnexpected(const std::string& key, const std::string& message);
  Status Execute(const Action& a, const core::KernelCache& kc, std::string* resource_version,
                 std::vector<std::string>* finalizers, bool* stale, const Logger& log);
  void RecordMetrics(const std::string& key, const core::KernelCache& kc, const Plan& plan,
                     const Observed& observed);
  // The gate series of one pass; mu_ held.
  void RecordGateRuns(const std::string& key, const core::KernelCache& kc,
                      const core::KernelCacheStatus& status, const Observed& observed, Time now);

  kube::Client& client_;
  Caches caches_;
  Settings settings_;
  EventSink* events_;
  OperatorMetrics* metrics_;
  Logger logger_;
  std::function<Time()> now_;
  std::function<bool()> urgent_waiting_;
  std::mutex mu_;
  // Per KernelCache key: the status a pass decided but did not write yet
  // (step 4), for the object of that uid.
  struct Owed {
    std::string uid;
    core::KernelCacheStatus status;
    int deferrals = 0;  // passes in a row that put it off
  };
  std::map<std::string, Owed> owed_;
  // "<key>/<fp>" -> when this process first saw the fingerprint in a status
  // that was not Ready (for kernelcache_time_to_ready_seconds).
  std::map<std::string, Time> first_seen_;
  // Per KernelCache key: the gate runs counted and what its fingerprints'
  // warmups took (TallyGateRuns, WarmupSecondsByFingerprint).
  struct GateLedger {
    std::set<GateRunId> counted;
    std::map<std::string, double> warmup_seconds;
  };
  std::map<std::string, GateLedger> gates_;
  // This process's first pass (whole seconds); gate runs that finished
  // before it are not counted.
  std::optional<Time> counting_since_;
};

}  // namespace kc::op
