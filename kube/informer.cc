#include "kube/informer.h"

#include <iostream>
#include <set>
#include <thread>
#include <utility>

#include "kube/backoff.h"
#include "kube/watch_decoder.h"

namespace kc::kube {

Informer::Informer(Client& client, Resource resource, std::string ns, ListOptions selector,
                   InformerOptions options)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      selector_(std::move(selector)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock()),
      store_(StoreOptions{options_.indexed_labels}) {
  if (!options_.on_error) {
    const std::string what = resource_.resource;
    options_.on_error = [what](const Status& s) {
      std::cerr << "informer " << what << ": " << s << std::endl;
    };
  }
}

void Informer::AddEventHandler(EventHandler handler) {
  std::lock_guard<std::mutex> l(dispatch_mu_);
  if (HasSynced() && handler.on_add) {
    for (const Json& obj : store_.List()) handler.on_add(obj);
  }
  handlers_.push_back(std::move(handler));
}

bool Informer::HasSynced() const {
  std::lock_guard<std::mutex> l(state_mu_);
  return synced_;
}

bool Informer::WaitForSync(std::stop_token stop, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(state_mu_);
  return synced_cv_.wait_for(lock, std::move(stop), timeout, [&] { return synced_; });
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard<std::mutex> l(state_mu_);
  return last_rv_;
}

void Informer::SetResourceVersion(const std::string& rv) {
  if (rv.empty()) return;
  std::lock_guard<std::mutex> l(state_mu_);
  last_rv_ = rv;
}

void Informer::Report(const Status& s) {
  if (options_.on_error) options_.on_error(s);
}

void Informer::DispatchAdd(const Json& obj) {
  for (const auto& h : handlers_) {
    if (h.on_add) h.on_add(obj);
  }
}

void Informer::DispatchUpdate(const Json& old_obj, const Json& new_obj) {
  for (const auto& h : handlers_) {
    if (h.on_update) h.on_update(old_obj, new_obj);
  }
}

void Informer::DispatchDelete(const Json& obj, bool final_state_unknown) {
  for (const auto& h : handlers_) {
    if (h.on_delete) h.on_delete(obj, final_state_unknown);
  }
}

Status Informer::ListAndReplace(const std::stop_token& stop) {
  ListOptions options;
  options.label_selector = selector_.label_selector;
  options.field_selector = selector_.field_selector;
  options.limit = options_.page_size;
  // Items go to the store and the handlers page by page as they arrive (a
  // relist of a large fleet never holds the whole list, nor whole objects:
  // the transform runs while each page is parsed); objects the list no
  // longer has are deleted once the last page is in.
  std::lock_guard<std::mutex> l(dispatch_mu_);
  const bool relist = HasSynced();
  std::set<std::string> listed;
  auto each = [&](Json&& item) {
    listed.insert(ObjectKey(item));
    std::optional<Json> previous = store_.Upsert(options_.keep ? options_.keep(item) : item);
    if (!previous) {
      DispatchAdd(item);
    } else if (ObjectResourceVersion(*previous) != ObjectResourceVersion(item)) {
      DispatchUpdate(*previous, item);
    }
  };
  StatusOr<std::string> list = ListEach(client_, resource_, ns_, options, options_.transform, each);
  if (!list.ok() && IsGone(list.status()) && options.limit > 0) {
    // The continue token expired between pages: one unpaged list instead.
    options.limit = 0;
    listed.clear();
    list = ListEach(client_, resource_, ns_, options, options_.transform, each);
  }
  if (!list.ok()) return list.status().WithContext("list " + resource_.resource);
  if (stop.stop_requested()) return CancelledError("informer stopped");

  for (const std::string& key : store_.ListKeys()) {
    if (listed.count(key) != 0) continue;
    std::optional<Json> gone = store_.Remove(key);
    if (gone) DispatchDelete(*gone, /*final_state_unknown=*/relist);
  }
  list_count_.fetch_add(1);
  {
    std::lock_guard<std::mutex> s(state_mu_);
    last_rv_ = *list;
    synced_ = true;
  }
  synced_cv_.notify_all();
  return OkStatus();
}

bool Informer::HandleEvent(const WatchEvent& event, bool* delivered, Status* error) {
  if (event.type == WatchEvent::Type::kError) {
    *error = WatchErrorToStatus(event.object);
    return false;
  }
  *delivered = true;
  const std::string rv = ObjectResourceVersion(event.object);
  if (event.type == WatchEvent::Type::kBookmark) {
    SetResourceVersion(rv);
    return true;
  }
  Json transformed;
  const Json* obj = &event.object;
  if (options_.transform) {
    transformed = options_.transform(event.object);
    obj = &transformed;
  }
  {
    std::lock_guard<std::mutex> l(dispatch_mu_);
    if (event.type == WatchEvent::Type::kDeleted) {
      std::optional<Json> previous = store_.Remove(ObjectKey(*obj));
      if (previous) DispatchDelete(*obj, /*final_state_unknown=*/false);
    } else {
      std::optional<Json> previous = store_.Upsert(options_.keep ? options_.keep(*obj) : *obj);
      if (previous) {
        DispatchUpdate(*previous, *obj);
      } else {
        DispatchAdd(*obj);
      }
    }
    // Under dispatch_mu_, so a relist cannot interleave between store and rv.
    SetResourceVersion(rv);
  }
  return true;
}

void Informer::Resync() {
  std::lock_guard<std::mutex> l(dispatch_mu_);
  if (!HasSynced()) return;
  for (const Json& obj : store_.List()) DispatchUpdate(obj, obj);
}

void Informer::Run(const std::stop_token& stop) {
  std::jthread resync;
  if (options_.resync_period > Clock::Duration::zero()) {
    // Periods count from Run()'s start, not from when the thread runs.
    const Clock::TimePoint first = clock_.Now() + options_.resync_period;
    resync = std::jthread([this, stop, first](const std::stop_token& own) {
      std::stop_source either;
      std::stop_callback on_run_stop(stop, [&] { either.request_stop(); });
      std::stop_callback on_own_stop(own, [&] { either.request_stop(); });
      for (Clock::TimePoint next = first; clock_.SleepUntil(next, either.get_token());
           next += options_.resync_period) {
        Resync();
      }
    });
  }

  Backoff backoff(options_.backoff_base, options_.backoff_max, /*jitter=*/0.2);
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      Status s = ListAndReplace(stop);
      if (stop.stop_requested()) break;
      if (!s.ok()) {
        Report(s);
        clock_.SleepFor(backoff.Next(), stop);
        continue;
      }
      need_list = false;
    }
    WatchOptions options;
    options.label_selector = selector_.label_selector;
    options.field_selector = selector_.field_selector;
    options.resource_version = LastResourceVersion();
    options.timeout_seconds = options_.watch_timeout_seconds;
    options.allow_bookmarks = true;
    bool delivered = false;
    Status event_error;
    Status s = client_.Watch(resource_, ns_, options, stop, [&](const WatchEvent& e) {
      return HandleEvent(e, &delivered, &event_error);
    });
    if (stop.stop_requested()) break;
    if (!event_error.ok()) s = event_error;
    if (IsGone(s)) {
      need_list = true;  // the resume point is compacted away: relist now
      continue;
    }
    if (delivered) backoff.Reset();
    if (s.ok() || s.code() == StatusCode::kDeadlineExceeded) {
      // The server ended the watch (timeoutSeconds) or the stream idled out:
      // normal; resume at once unless it keeps closing without events.
      if (delivered) continue;
    } else {
      Report(s.WithContext("watch " + resource_.resource + " from resourceVersion " +
                           options.resource_version));
    }
    clock_.SleepFor(backoff.Next(), stop);
  }
}

}  // namespace kc::kube
