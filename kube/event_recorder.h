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
//
// Thread-safe; writes are synchronous (one API call per Event()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>

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
};

class EventRecorder {
 public:
  EventRecorder(Client& client, EventRecorderOptions options);

  void Event(const ObjectReference& ref, EventType type, const std::string& reason,
             const std::string& message);
  void Eventf(const ObjectReference& ref, EventType type, const std::string& reason,
              const char* format, ...) __attribute__((format(printf, 5, 6)));

 private:
  struct Seen {
    std::string ns;
    std::string name;
    int64_t count = 0;
    Clock::TimePoint first;
    std::list<std::string>::iterator lru;
  };

  bool CreateLocked(const std::string& key, const ObjectReference& ref, EventType type,
                    const std::string& reason, const std::string& message);
  void Remember(const std::string& key, Seen seen);

  Client& client_;
  EventRecorderOptions options_;
  Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Seen> seen_;
  std::list<std::string> lru_;  // front = most recent
  int64_t last_nanos_ = 0;
};

}  // namespace kc::kube
