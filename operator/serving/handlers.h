// The webhook routes on the HTTPS server: POST /mutate-pods and
// POST /validate-kernelcaches decode nothing themselves; they hand the body
// to review.h and answer what it returns. Warning Events the review asks for
// are queued and written by a background thread (an Event write is an API
// call; the server thread must not wait on it). The queue is bounded: beyond
// kMaxPendingEvents, new Events are dropped and counted.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "kube/client.h"
#include "operator/serving/http_server.h"
#include "operator/webhook/review.h"

namespace kc::webhook {

inline constexpr char kMutatePodsPath[] = "/mutate-pods";
inline constexpr char kValidateKernelCachesPath[] = "/validate-kernelcaches";

class EventQueue {
 public:
  static constexpr size_t kMaxPendingEvents = 1000;
  explicit EventQueue(std::function<void(const WarningEvent&)> write);
  ~EventQueue();  // writes what is queued, then joins
  void Push(WarningEvent e);
  size_t dropped() const;

 private:
  std::function<void(const WarningEvent&)> write_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WarningEvent> pending_;
  size_t dropped_ = 0;
  bool done_ = false;
  std::thread thread_;
};

struct WebhookDeps {
  KernelCacheLister list;
  StorageClassLookup storage_class;  // may be empty
  InjectSettings settings;
  EventQueue* events = nullptr;  // may be null: Events are dropped
};

void RegisterWebhookHandlers(op::HttpServer& server, WebhookDeps deps);

// What the API server says about StorageClass `name`: one GET of it, and
// only when that is NotFound, the PersistentVolumes, page by page, for one
// whose spec.storageClassName is `name`. Any other error is kUnknown.
StorageClassFacts LookUpStorageClass(kube::Client& client, const std::string& name);

}  // namespace kc::webhook
