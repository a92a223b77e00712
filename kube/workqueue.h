// WorkQueue: a rate-limited, delaying work queue of string keys, with the
// semantics of client-go's workqueue (its contract, not its code).
//
// Contract:
// - Add(key): queues `key` unless it is already queued (dedup). A key being
//   processed (handed out by Get, not yet Done) is never handed to a second
//   worker: re-adding it marks it dirty, and Done() queues it again.
// - Get(): blocks until a key is available (returns it and marks it
//   processing) or the queue is shut down and empty (returns nullopt).
//   Every key returned must be passed to Done().
// - AddUrgent(key): as Add, but the key is handed out before every key
//   added without urgency (first come, first served among urgent keys); a
//   key already queued moves ahead, a key being processed is queued ahead
//   when Done. For work whose latency users see (a node whose fingerprint
//   moved needs its warmup Job) behind bulk work (pod status churn).
// - AddAfter(key, d): adds `key` once `d` has passed on the clock; a key
//   already waiting keeps the earlier of its two ready times. Waiting keys
//   are promoted by Get()/Len() (no background thread).
// - AddRateLimited(key) = AddAfter(key, rate_limiter.When(key));
//   Forget(key) ends its retry tracking; NumRequeues(key) counts retries.
// - Len(): number of keys queued and ready (the depth metric).
//   UrgentLen(): of those, the urgent ones (a worker may put off work that
//   can wait while urgent keys wait for a worker).
// - ShutDown(): new adds are ignored, waiting (delayed) keys are dropped,
//   Get() still hands out the keys already queued, then returns nullopt.
//   ShutDownWithDrain(): ShutDown() and then blocks until every queued key
//   has been handed out and every handed-out key is Done (needs workers).
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "kube/clock.h"
#include "kube/rate_limiter.h"

namespace kc::kube {

class WorkQueue {
 public:
  struct Options {
    std::string name;                           // for metrics and logs
    std::unique_ptr<RateLimiter> rate_limiter;  // default: DefaultControllerRateLimiter
    Clock* clock = nullptr;                     // default: RealClock()
  };

  WorkQueue() : WorkQueue(Options{}) {}
  explicit WorkQueue(Options options);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddUrgent(const std::string& key);
  void AddAfter(const std::string& key, Clock::Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  std::optional<std::string> Get();
  void Done(const std::string& key);

  size_t Len();
  size_t UrgentLen();
  // Keys waiting for their AddAfter time.
  size_t NumWaiting();
  const std::string& name() const { return name_; }

  void ShutDown();
  void ShutDownWithDrain();
  bool ShuttingDown();

 private:
  struct Waiting {
    Clock::TimePoint ready;
    uint64_t seq;
    std::string key;
    bool operator>(const Waiting& o) const {
      return ready != o.ready ? ready > o.ready : seq > o.seq;
    }
  };

  void AddLocked(const std::string& key);
  // Moves a queued (or dirty while processing) key into urgent_.
  void MakeUrgentLocked(const std::string& key);
  // Moves waiting keys whose time has come into the queue; returns the next
  // ready time of a still-waiting key, if any.
  std::optional<Clock::TimePoint> PromoteLocked(Clock::TimePoint now);

  const std::string name_;
  std::unique_ptr<RateLimiter> rate_limiter_;
  Clock& clock_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<std::string> urgent_;  // handed out before queue_
  std::deque<std::string> queue_;
  std::set<std::string> urgent_keys_;  // in urgent_, or to go there when Done
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>> waiting_heap_;
  std::map<std::string, Clock::TimePoint> waiting_;  // key -> ready time (heap may hold stale)
  uint64_t seq_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kc::kube
