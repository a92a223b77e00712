// Informer: list + watch of one resource into a local cache, with handlers.
//
// Contract (client-go's SharedIndexInformer, reduced to one process):
// - Run(stop) blocks (run it on its own thread) until `stop` is requested.
//   It lists every object (paged, options.page_size per page), replaces the
//   cache with the list, then watches from the list's resourceVersion.
// - Every watch event updates the Store and then calls the handlers:
//   on_add(obj), on_update(old, new), on_delete(obj, final_state_unknown).
//   Handlers run on the informer's thread (or the resync thread), one at a
//   time, in event order; they should be quick (enqueue a key) and must not
//   call AddEventHandler/AddIndex.
// - The resourceVersion of every event and bookmark is remembered. A watch
//   that ends (server timeout, dropped connection, idle timeout) is resumed
//   from it, after an exponential backoff when it failed without delivering
//   anything (options.backoff_base..backoff_max); no relist happens.
// - When the resume point is gone (410 Gone, from the watch call or as an
//   ERROR event), the informer relists and diffs the new list against the
//   cache: new objects -> on_add, changed resourceVersion -> on_update,
//   objects no longer listed -> on_delete with final_state_unknown = true
//   (the deletion happened while not watching; `obj` is the last state
//   known). So no final state is lost.
// - HasSynced() turns true once the first list is in the cache and its
//   on_add calls are done; WaitForSync() waits for it.
// - With options.resync_period > 0, every cached object is re-delivered as
//   on_update(obj, obj) once per period (level-triggered safety net).
// - Failures are reported once each through options.on_error (default:
//   stderr); Gone and idle timeouts are normal and not reported.
// - With options.transform (kube/transform.h), every listed object and every
//   ADDED/MODIFIED/DELETED event's object is transformed before the store
//   and the handlers see it: the cache holds, and handlers receive, only
//   what the transform keeps (client-go's SetTransform).
//
// Thread-safe: store(), HasSynced(), LastResourceVersion() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"
#include "kube/clock.h"
#include "kube/store.h"

namespace kc::kube {

struct EventHandler {
  std::function<void(const Json& object)> on_add;
  std::function<void(const Json& old_object, const Json& new_object)> on_update;
  std::function<void(const Json& object, bool final_state_unknown)> on_delete;
};

struct InformerOptions {
  int64_t page_size = 500;
  Clock::Duration resync_period = Clock::Duration::zero();  // 0: no resync
  Clock::Duration backoff_base = std::chrono::milliseconds(200);
  Clock::Duration backoff_max = std::chrono::seconds(30);
  int watch_timeout_seconds = 300;
  Clock* clock = nullptr;                       // default RealClock()
  std::function<void(const Status&)> on_error;  // default: one line on stderr
  ObjectTransform transform;                    // default: objects kept whole
  // What the store keeps of an object once its handlers have seen it
  // (default: all `transform` made). For a consumer that keeps its own view
  // of each object (the operator's NodeIndex): handlers still get the whole
  // new object, but an update's old object, a relist's delete and the store
  // hold only this. It must keep metadata name, namespace and
  // resourceVersion (a relist compares them).
  ObjectTransform keep;
  // The label keys the store's kLabelIndex covers (StoreOptions::label_keys;
  // empty: every label).
  std::vector<std::string> indexed_labels;
};

class Informer {
 public:
  // `selector` supplies label_selector and field_selector (other fields are
  // ignored).
  Informer(Client& client, Resource resource, std::string ns, ListOptions selector = {},
           InformerOptions options = {});
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // May be called before or during Run(); a handler added after the first
  // sync first receives on_add for every cached object.
  void AddEventHandler(EventHandler handler);
  Status AddIndex(const std::string& name, IndexFunc fn) { return store_.AddIndex(name, fn); }

  void Run(const std::stop_token& stop);

  bool HasSynced() const;
  // True once synced; false when `stop` was requested or `timeout` (real
  // time) passed first.
  bool WaitForSync(std::stop_token stop,
                   std::chrono::milliseconds timeout = std::chrono::hours(24 * 365)) const;

  const Store& store() const { return store_; }
  const Resource& resource() const { return resource_; }
  std::string LastResourceVersion() const;
  // Full lists done (1 after the first sync; +1 per relist after Gone).
  int ListCount() const { return list_count_.load(); }

 private:
  // Lists page by page (ListEach), upserting and dispatching each item
  // under dispatch_mu_, which it holds across the list's HTTP pages: an
  // AddEventHandler or a resync waits for a relist to finish.
  Status ListAndReplace(const std::stop_token& stop);
  // Returns false to end the watch (ERROR event; *error set).
  bool HandleEvent(const WatchEvent& event, bool* delivered, Status* error);
  void Resync();
  void Report(const Status& s);
  void SetResourceVersion(const std::string& rv);
  void DispatchAdd(const Json& obj);
  void DispatchUpdate(const Json& old_obj, const Json& new_obj);
  void DispatchDelete(const Json& obj, bool final_state_unknown);

  Client& client_;
  const Resource resource_;
  const std::string ns_;
  const ListOptions selector_;
  InformerOptions options_;
  Clock& clock_;
  Store store_;

  std::mutex dispatch_mu_;  // serialises store updates + handler calls
  std::vector<EventHandler> handlers_;

  mutable std::mutex state_mu_;
  mutable std::condition_variable_any synced_cv_;
  bool synced_ = false;
  std::string last_rv_;
  std::atomic<int> list_count_{0};
};

}  // namespace kc::kube
