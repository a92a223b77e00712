#include "kube/event_recorder.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include "api/meta.h"
#include "api/time.h"

namespace kc::kube {
namespace {

constexpr size_t kMaxMessage = 1024;

std::string TypeName(EventType t) { return t == EventType::kWarning ? "Warning" : "Normal"; }

}  // namespace

ObjectReference ReferenceTo(const Json& object) {
  ObjectReference ref;
  ref.api_version = object.value("apiVersion", "");
  ref.kind = object.value("kind", "");
  api::ObjectMeta meta = api::MetaOf(object);
  ref.ns = std::move(meta.namespace_);
  ref.name = std::move(meta.name);
  ref.uid = std::move(meta.uid);
  ref.resource_version = std::move(meta.resource_version);
  return ref;
}

Json ObjectReferenceToJson(const ObjectReference& ref) {
  Json j = Json::object();
  auto put = [&](const char* k, const std::string& v) {
    if (!v.empty()) j[k] = v;
  };
  put("apiVersion", ref.api_version);
  put("kind", ref.kind);
  put("namespace", ref.ns);
  put("name", ref.name);
  put("uid", ref.uid);
  put("resourceVersion", ref.resource_version);
  put("fieldPath", ref.field_path);
  return j;
}

EventRecorder::EventRecorder(Client& client, EventRecorderOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock()) {
  if (!options_.on_error) {
    options_.on_error = [](const Status& s) { std::cerr << "event recorder: " << s << std::endl; };
  }
  if (options_.cache_size == 0) options_.cache_size = 1;
  if (options_.queue > 0) {
    async_ = true;
    writer_ = std::jthread([this](const std::stop_token& stop) { WriterLoop(stop); });
  }
}

EventRecorder::~EventRecorder() {
  if (!writer_.joinable()) return;
  if (async_) Flush();
  writer_.request_stop();
  writer_.join();
}

void EventRecorder::Stop() {
  // Events from now on are written inline (async_ false), none is queued.
  if (!async_.exchange(false)) return;
  {
    std::lock_guard<std::mutex> l(queue_mu_);
    pending_.clear();
  }
  writer_.request_stop();
  writer_.join();
}

size_t EventRecorder::Queued() {
  std::lock_guard<std::mutex> l(queue_mu_);
  return pending_.size();
}

void EventRecorder::Flush() {
  if (!async_) return;
  std::unique_lock<std::mutex> l(queue_mu_);
  queue_cv_.wait(l, [this] { return pending_.empty() && writing_ == 0; });
}

void EventRecorder::WriterLoop(const std::stop_token& stop) {
  std::unique_lock<std::mutex> l(queue_mu_);
  while (true) {
    if (!queue_cv_.wait(l, stop, [this] { return !pending_.empty(); })) break;
    Pending e = std::move(pending_.front());
    pending_.pop_front();
    ++writing_;
    l.unlock();
    {
      std::lock_guard<std::mutex> w(mu_);
      Write(e);
    }
    l.lock();
    --writing_;
    queue_cv_.notify_all();
  }
  // Stopped: nothing more is written; Flush() callers are released.
  pending_.clear();
  queue_cv_.notify_all();
}

EventRecorder::Key EventRecorder::KeyOf(const std::string& text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md.data(), &len, EVP_sha256(), nullptr);
  Key key{};
  std::copy_n(md.begin(), key.size(), key.begin());
  return key;
}

void EventRecorder::Remember(const Key& key, Seen seen) {
  auto it = seen_.find(key);
  if (it != seen_.end()) {
    lru_.erase(it->second.lru);
    seen_.erase(it);
  }
  lru_.push_front(key);
  seen.lru = lru_.begin();
  seen_.emplace(key, std::move(seen));
  while (seen_.size() > options_.cache_size) {
    seen_.erase(lru_.back());
    lru_.pop_back();
  }
}

bool EventRecorder::CreateLocked(const Key& key, const ObjectReference& ref, EventType type,
                                 const std::string& reason, const std::string& message) {
  const api::Time now = clock_.WallNow();
  const std::string ns = ref.ns.empty() ? "default" : ref.ns;
  // client-go's "<name>.<unix nanos in hex>", kept unique per recorder.
  int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  if (nanos <= last_nanos_) nanos = last_nanos_ + 1;
  last_nanos_ = nanos;
  std::ostringstream name;
  name << ref.name << "." << std::hex << nanos;
  const std::string ts = api::FormatTime(now);
  Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name.str()}, {"namespace", ns}}},
      {"involvedObject", ObjectReferenceToJson(ref)},
      {"reason", reason},
      {"message", message},
      {"type", TypeName(type)},
      {"source", {{"component", options_.component}}},
      {"firstTimestamp", ts},
      {"lastTimestamp", ts},
      {"count", 1},
      {"reportingComponent", options_.component},
      {"reportingInstance", options_.host},
  };
  if (!options_.host.empty()) event["source"]["host"] = options_.host;
  StatusOr<Json> created = client_.Create(resources::kEvents, ns, event);
  if (!created.ok()) {
    options_.on_error(created.status().WithContext("create event " + reason + " for " + ref.kind +
                                                   " " + ns + "/" + ref.name));
    return false;
  }
  Remember(key, Seen{ns, api::MetaOf(*created).name, 1, clock_.Now(), {}});
  return true;
}

void EventRecorder::Event(const ObjectReference& ref, EventType type, const std::string& reason,
                          const std::string& message_in) {
  std::string message = message_in;
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  const std::string text = ref.kind + "\x1f" + ref.ns + "\x1f" + ref.name + "\x1f" + ref.uid +
                           "\x1f" + TypeName(type) + "\x1f" + reason + "\x1f" + message;
  Pending e{KeyOf(text), ref, type, reason, std::move(message)};
  if (!async_) {
    std::lock_guard<std::mutex> l(mu_);
    Write(e);
    return;
  }
  {
    std::lock_guard<std::mutex> l(queue_mu_);
    if (!async_) {  // stopped meanwhile: dropped like the rest of the queue
      return;
    }
    if (pending_.size() < options_.queue) {
      pending_.push_back(std::move(e));
      queue_cv_.notify_all();
      return;
    }
  }
  options_.on_error(ResourceExhaustedError("event queue full (" + std::to_string(options_.queue) +
                                           " waiting): dropped " + reason + " for " + ref.kind +
                                           " " + ref.ns + "/" + ref.name));
}

void EventRecorder::Write(const Pending& e) {
  const Key& key = e.key;
  auto it = seen_.find(key);
  if (it != seen_.end() && clock_.Now() - it->second.first < options_.aggregation_window) {
    Seen& s = it->second;
    Json patch = {{"count", s.count + 1}, {"lastTimestamp", api::FormatTime(clock_.WallNow())}};
    StatusOr<Json> patched =
        client_.Patch(resources::kEvents, s.ns, s.name, PatchType::kMerge, patch);
    if (patched.ok()) {
      ++s.count;
      lru_.erase(s.lru);
      lru_.push_front(key);
      s.lru = lru_.begin();
      return;
    }
    if (!IsNotFound(patched.status())) {
      options_.on_error(patched.status().WithContext("update event " + s.ns + "/" + s.name));
      return;
    }
    // The Event expired or was deleted: start a new one.
  }
  CreateLocked(key, e.ref, e.type, e.reason, e.message);
}

void EventRecorder::Eventf(const ObjectReference& ref, EventType type, const std::string& reason,
                           const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string message;
  if (n > 0) {
    std::vector<char> buf(static_cast<size_t>(n) + 1);
    std::vsnprintf(buf.data(), buf.size(), format, args);
    message.assign(buf.data(), static_cast<size_t>(n));
  }
  va_end(args);
  Event(ref, type, reason, message);
}

}  // namespace kc::kube
