// EventRecorder: writes core/v1 Events about objects, aggregating repeats.
//
// Contract:
// - Event(ref, type, reason, message) creates an Event in the involved
//   object's namespace ("default" for cluster-scoped objects) named
//   "<object name>.<hex nanoseconds>", with involvedObject, reason, message
//   (truncated to 1024 bytes), type Normal|Warning, source.component/host,
//   reportingComponent/reportingInstance, firstTimestamp = lastTimestamp =
//   now, count 1.
// - The same (object, type, reason, message) again within
//   options.aggregation_window of the first occurrence patches the existing
//   Event instead (JSON merge patch of count + 1 and lastTimestamp). If that
//   Event is gone (NotFound), a new one is created.
// - Failures never reach the caller: each failed write is reported once
//   through options.on_error (default: stderr) and dropped.
// - options.queue == 0: writes are synchronous (one API call in Event()).
//   options.queue > 0: Event() only queues the event and returns; one writer
//   thread makes the API calls in order (client-go's broadcaster), so a
//   reconcile never waits on an Event's round trip nor on another worker's.
//   At most `queue` events wait; beyond that an event is dropped and
//   reported through on_error. Flush() waits until the queue is written;
//   the destructor writes what is queued unless Stop() was called first.
//
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "base/status.h"
#include "kube/client.h"
#include "kube/clock.h"

namespace kc::kube {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;
};

// The reference to an object as read from the API (apiVersion, kind,
// metadata.namespace/name/uid/resourceVersion).
ObjectReference ReferenceTo(const Json& object);
Json ObjectReferenceToJson(const ObjectReference& ref);

enum class EventType { kNormal, kWarning };

struct EventRecorderOptions {
  std::string component = "kernelcache";  // source.component, reportingComponent
  std::string host;                       // source.host, reportingInstance
  Clock::Duration aggregation_window = std::chrono::minutes(10);
  size_t cache_size = 4096;  // distinct (object, type, reason, message) remembered
  Clock* clock = nullptr;    // default RealClock()
  std::function<void(const Status&)> on_error;  // default: stderr
  size_t queue = 0;  // 0: synchronous; > 0: asynchronous, at most this many waiting
};

class EventRecorder {
 public:
  EventRecorder(Client& client, EventRecorderOptions options);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  void Event(const ObjectReference& ref, EventType type, const std::string& reason,
             const std::string& message);
  void Eventf(const ObjectReference& ref, EventType type, const std::string& reason,
              const char* format, ...) __attribute__((format(printf, 5, 6)));

  // Asynchronous mode: returns once every event queued before the call is
  // written (or failed). Synchronous mode: returns at once.
  void Flush();
  // Asynchronous mode: the writer finishes its current write and drops the
  // rest of the queue (the process is exiting; the API may be gone).
  void Stop();
  // Asynchronous mode: events waiting for the writer (not the one it writes).
  size_t Queued();

 private:
  // The digest (SHA-256, first 16 bytes) of (object, type, reason, message):
  // what the cache remembers instead of those strings, which are most of
  // its bytes (a message is up to 1 KiB; 4,096 keys held twice).
  using Key = std::array<unsigned char, 16>;

  static Key KeyOf(const std::string& text);

  struct Pending {
    Key key;
    ObjectReference ref;
    EventType type;
    std::string reason;
    std::string message;
  };

  struct Seen {
    std::string ns;
    std::string name;
    int64_t count = 0;
    Clock::TimePoint first;
    std::list<Key>::iterator lru;
  };

  bool CreateLocked(const Key& key, const ObjectReference& ref, EventType type,
                    const std::string& reason, const std::string& message);
  void Remember(const Key& key, Seen seen);
  void Write(const Pending& e);  // under mu_
  void WriterLoop(const std::stop_token& stop);

  Client& client_;
  EventRecorderOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::map<Key, Seen> seen_;
  std::list<Key> lru_;  // front = most recent
  int64_t last_nanos_ = 0;

  // Asynchronous mode.
  std::mutex queue_mu_;
  std::condition_variable_any queue_cv_;
  std::deque<Pending> pending_;
  size_t writing_ = 0;              // events taken off pending_ and not yet written
  std::atomic<bool> async_{false};  // queueing; false after Stop()
  std::jthread writer_;             // last: joined first
};

}  // namespace kc::kube
