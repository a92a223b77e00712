#include "kube/testing/fake_client.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "api/meta.h"
#include "api/time.h"

namespace kc::kube {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// Splits on commas outside parentheses.
std::vector<std::string> SplitRequirements(const std::string& selector) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty()) out.push_back(Trim(cur));
  return out;
}

std::set<std::string> ParseSet(std::string_view s) {
  std::set<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      out.insert(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.insert(Trim(cur));
  return out;
}

std::string LabelOf(const Json& labels, const std::string& key, bool* present) {
  *present = false;
  if (!labels.is_object()) return "";
  auto it = labels.find(key);
  if (it == labels.end() || !it->is_string()) return "";
  *present = true;
  return it->get<std::string>();
}

const Json& Labels(const Json& obj) {
  static const Json kNull;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return kNull;
  auto l = m->find("labels");
  return l == m->end() ? kNull : *l;
}

std::string Meta(const Json& obj, const char* field) { return api::MetaString(obj, field); }

StatusOr<bool> MatchesFieldSelector(const std::string& selector, const Json& obj) {
  for (const std::string& req : SplitRequirements(selector)) {
    const bool negate = req.find("!=") != std::string::npos;
    const size_t op = negate ? req.find("!=") : req.find('=');
    if (op == std::string::npos) {
      return InvalidArgumentError("fake: field selector \"" + selector + "\" not understood");
    }
    const std::string field = Trim(std::string_view(req).substr(0, op));
    std::string value = req.substr(op + (negate ? 2 : 1));
    if (!value.empty() && value.front() == '=') value.erase(0, 1);
    value = Trim(value);
    std::string actual;
    if (field == "metadata.name") {
      actual = Meta(obj, "name");
    } else if (field == "metadata.namespace") {
      actual = Meta(obj, "namespace");
    } else {
      return InvalidArgumentError("fake: field selector on \"" + field +
                                  "\" is not supported (metadata.name, metadata.namespace)");
    }
    if ((actual == value) == negate) return false;
  }
  return true;
}

bool Matches(const std::string& label_selector, const std::string& field_selector,
             const Json& obj) {
  auto l = MatchesLabelSelector(label_selector, Labels(obj));
  if (!l.ok() || !*l) return false;
  auto f = MatchesFieldSelector(field_selector, obj);
  return f.ok() && *f;
}

// Built-in resources that have no status subresource (their status, if
// any, is written with the object). Every other resource has one: pods,
// nodes, claims, Jobs, namespaces, and custom resources such as KernelCache
// (FakeClient::SetStatusSubresource changes that per resource).
bool BuiltinWithoutStatus(const std::string& resource_id) {
  static const std::set<std::string> kIds = {
      "configmaps",
      "secrets",
      "events",
      "events.events.k8s.io",
      "serviceaccounts",
      "endpoints",
      "leases.coordination.k8s.io",
      "mutatingwebhookconfigurations.admissionregistration.k8s.io",
      "validatingwebhookconfigurations.admissionregistration.k8s.io",
      "storageclasses.storage.k8s.io",
      "priorityclasses.scheduling.k8s.io",
      "roles.rbac.authorization.k8s.io",
      "rolebindings.rbac.authorization.k8s.io",
      "clusterroles.rbac.authorization.k8s.io",
      "clusterrolebindings.rbac.authorization.k8s.io",
  };
  return kIds.count(resource_id) != 0;
}

// The raw metadata of `obj` (null when absent). Read straight from the JSON
// so the fake does not depend on the typed ObjectMeta.
const Json& RawMeta(const Json& obj) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto m = obj.find("metadata");
  return m == obj.end() || !m->is_object() ? kNull : *m;
}

bool Deleting(const Json& obj) {
  const Json& m = RawMeta(obj);
  return m.is_object() && m.contains("deletionTimestamp") && !m["deletionTimestamp"].is_null();
}

Json Finalizers(const Json& obj) {
  const Json& m = RawMeta(obj);
  if (!m.is_object()) return Json::array();
  auto f = m.find("finalizers");
  return f != m.end() && f->is_array() ? *f : Json::array();
}

// What metadata.generation follows: everything but metadata (and status,
// when the resource has a status subresource), as the API server counts it.
Json GenerationTracked(Json obj, bool status_subresource) {
  if (!obj.is_object()) return obj;
  obj.erase("metadata");
  obj.erase("apiVersion");
  obj.erase("kind");
  if (status_subresource) obj.erase("status");
  return obj;
}

int64_t ParseRv(const std::string& s) {
  try {
    return std::stoll(s);
  } catch (...) {
    return -1;
  }
}

}  // namespace

StatusOr<bool> MatchesLabelSelector(const std::string& selector, const Json& labels) {
  for (const std::string& req : SplitRequirements(selector)) {
    if (req.empty()) continue;
    const size_t in_pos = req.find(" in ");
    const size_t notin_pos = req.find(" notin ");
    if (in_pos != std::string::npos || notin_pos != std::string::npos) {
      const bool notin = notin_pos != std::string::npos;
      const size_t pos = notin ? notin_pos : in_pos;
      const std::string key = Trim(std::string_view(req).substr(0, pos));
      const size_t open = req.find('(', pos);
      const size_t close = req.rfind(')');
      if (open == std::string::npos || close == std::string::npos || close < open) {
        std::string msg = "label selector \"" + selector;
        msg += "\": bad set in \"" + req + "\"";
        return InvalidArgumentError(msg);
      }
      const auto values = ParseSet(std::string_view(req).substr(open + 1, close - open - 1));
      bool present = false;
      const std::string v = LabelOf(labels, key, &present);
      const bool in = present && values.count(v) != 0;
      if (notin ? in : !in) return false;
      continue;
    }
    if (req.find("!=") != std::string::npos) {
      const size_t op = req.find("!=");
      bool present = false;
      const std::string v = LabelOf(labels, Trim(std::string_view(req).substr(0, op)), &present);
      if (present && v == Trim(std::string_view(req).substr(op + 2))) return false;
      continue;
    }
    if (req.find('=') != std::string::npos) {
      const size_t op = req.find('=');
      std::string value = req.substr(op + 1);
      if (!value.empty() && value.front() == '=') value.erase(0, 1);
      bool present = false;
      const std::string v = LabelOf(labels, Trim(std::string_view(req).substr(0, op)), &present);
      if (!present || v != Trim(value)) return false;
      continue;
    }
    if (req.front() == '!') {
      bool present = false;
      LabelOf(labels, Trim(std::string_view(req).substr(1)), &present);
      if (present) return false;
      continue;
    }
    bool present = false;
    LabelOf(labels, req, &present);
    if (!present) return false;
  }
  return true;
}

Status FakeClient::NoStatusSubresource(const Resource& r) {
  return NotFoundError("the server could not find the requested resource (" + r.resource +
                       " has no status subresource)");
}

FakeClient::FakeClient(Clock* clock) : clock_(clock != nullptr ? *clock : RealClock()) {}

std::string FakeClient::ResourceId(const Resource& r) {
  return r.group.empty() ? r.resource : r.resource + "." + r.group;
}

Status FakeClient::RecordLocked(const FakeAction& action) {
  actions_.push_back(action);
  if (reactor_) return reactor_(actions_.back());
  return OkStatus();
}

void FakeClient::AppendLocked(WatchEvent::Type type, const std::string& resource_id,
                              const std::string& ns, const Json& object, const Json& previous) {
  history_.push_back(HistoryEntry{rv_, type, resource_id, ns, object, previous});
  cv_.notify_all();
}

StatusOr<Json> FakeClient::Get(const Resource& r, const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  KC_RETURN_IF_ERROR(RecordLocked({"get", ResourceId(r), ns, name, nullptr}));
  auto it = objects_.find({ResourceId(r), r.namespaced ? ns : "", name});
  if (it == objects_.end()) {
    return NotFoundError(r.resource + " \"" + name + "\" not found");
  }
  return it->second;
}

StatusOr<ListResult> FakeClient::List(const Resource& r, const std::string& ns,
                                      const ListOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  KC_RETURN_IF_ERROR(RecordLocked({"list", ResourceId(r), ns, "", nullptr}));
  KC_RETURN_IF_ERROR(MatchesLabelSelector(options.label_selector, Json()).status());
  KC_RETURN_IF_ERROR(MatchesFieldSelector(options.field_selector, Json::object()).status());
  size_t start = 0;
  if (!options.continue_token.empty()) {
    const size_t colon = options.continue_token.find(':');
    const int64_t token_rv = ParseRv(options.continue_token.substr(0, colon));
    if (colon == std::string::npos || token_rv < 0) {
      return InvalidArgumentError("fake: bad continue token");
    }
    if (token_rv < compacted_rv_) {
      return GoneError("The provided continue parameter is too old");
    }
    start = static_cast<size_t>(ParseRv(options.continue_token.substr(colon + 1)));
  }
  const std::string id = ResourceId(r);
  std::vector<Json> matching;
  for (const auto& [key, obj] : objects_) {
    if (std::get<0>(key) != id) continue;
    if (r.namespaced && !ns.empty() && std::get<1>(key) != ns) continue;
    if (!Matches(options.label_selector, options.field_selector, obj)) continue;
    matching.push_back(obj);
  }
  ListResult result;
  result.resource_version = std::to_string(rv_);
  size_t end = matching.size();
  if (options.limit > 0 && start + static_cast<size_t>(options.limit) < matching.size()) {
    end = start + static_cast<size_t>(options.limit);
    result.continue_token = std::to_string(rv_) + ":" + std::to_string(end);
  }
  for (size_t i = start; i < end && i < matching.size(); ++i) result.items.push_back(matching[i]);
  return result;
}

bool FakeClient::HasStatusSubresourceLocked(const Resource& r) const {
  auto it = status_subresource_.find(ResourceId(r));
  if (it != status_subresource_.end()) return it->second;
  return !BuiltinWithoutStatus(ResourceId(r));
}

StatusOr<Json> FakeClient::WriteLocked(const Resource& r, const std::string& ns, Json object,
                                       const Json& previous, bool to_status) {
  const bool status_subresource = HasStatusSubresourceLocked(r);
  if (to_status) {
    // The status subresource changes status and nothing else.
    Json next = previous;
    if (object.contains("status")) {
      next["status"] = object["status"];
    } else {
      next.erase("status");
    }
    object = std::move(next);
  } else if (status_subresource) {
    // The main resource ignores changes to status.
    if (previous.contains("status")) {
      object["status"] = previous["status"];
    } else {
      object.erase("status");
    }
  }
  // Once deleting, deletionTimestamp stays and no finalizer may be added.
  Json& meta = object["metadata"];
  const Json& before = RawMeta(previous);
  for (const char* f : {"deletionTimestamp", "deletionGracePeriodSeconds"}) {
    if (before.is_object() && before.contains(f)) {
      meta[f] = before[f];
    } else {
      meta.erase(f);
    }
  }
  if (Deleting(previous)) {
    const Json had = Finalizers(previous);
    for (const Json& f : Finalizers(object)) {
      if (std::find(had.begin(), had.end(), f) == had.end()) {
        return InvalidArgumentError(
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
            "being deleted, found new finalizers [" +
            f.dump() + "]");
      }
    }
  }
  return PutLocked(r, ns, std::move(object), previous);
}

StatusOr<Json> FakeClient::PutLocked(const Resource& r, const std::string& ns, Json object,
                                     const Json& previous) {
  ++rv_;
  object["apiVersion"] = r.ApiVersion();
  object["kind"] = r.kind;
  Json& meta = object["metadata"];
  meta["resourceVersion"] = std::to_string(rv_);
  if (r.namespaced) meta["namespace"] = ns;
  const std::string name = meta["name"].get<std::string>();
  if (previous.is_null()) {
    meta["uid"] = "fake-uid-" + std::to_string(next_uid_++);
    meta["creationTimestamp"] = api::FormatTime(clock_.WallNow());
    meta["generation"] = 1;
    meta.erase("deletionTimestamp");
    meta.erase("deletionGracePeriodSeconds");
  } else {
    meta["uid"] = previous["metadata"]["uid"];
    meta["creationTimestamp"] = previous["metadata"]["creationTimestamp"];
    int64_t generation = previous["metadata"].value("generation", int64_t{1});
    const bool status_subresource = HasStatusSubresourceLocked(r);
    if (GenerationTracked(object, status_subresource) !=
            GenerationTracked(previous, status_subresource) ||
        (Deleting(object) && !Deleting(previous))) {
      ++generation;
    }
    meta["generation"] = generation;
  }
  const Key key{ResourceId(r), r.namespaced ? ns : "", name};
  if (Deleting(object) && Finalizers(object).empty()) {
    // The last finalizer is gone: the object goes.
    objects_.erase(key);
    AppendLocked(WatchEvent::Type::kDeleted, ResourceId(r), r.namespaced ? ns : "", object, Json());
    return object;
  }
  objects_[key] = object;
  AppendLocked(previous.is_null() ? WatchEvent::Type::kAdded : WatchEvent::Type::kModified,
               ResourceId(r), r.namespaced ? ns : "", object, previous);
  return object;
}

StatusOr<Json> FakeClient::Create(const Resource& r, const std::string& ns, const Json& object) {
  std::lock_guard<std::mutex> l(mu_);
  KC_RETURN_IF_ERROR(RecordLocked({"create", ResourceId(r), ns, Meta(object, "name"), object}));
  if (!object.is_object()) return InvalidArgumentError("fake: object must be a JSON object");
  Json obj = object;
  std::string name = Meta(obj, "name");
  if (name.empty()) {
    const std::string generate = Meta(obj, "generateName");
    if (generate.empty()) {
      return InvalidArgumentError(
          "metadata.name: Required value: name or generateName is required");
    }
    name = generate + std::to_string(next_uid_);
    obj["metadata"]["name"] = name;
  }
  if (r.namespaced && ns.empty()) {
    return InvalidArgumentError("fake: create of namespaced " + r.resource + " needs a namespace");
  }
  if (objects_.count({ResourceId(r), r.namespaced ? ns : "", name}) != 0) {
    return AlreadyExistsError(r.resource + " \"" + name + "\" already exists");
  }
  return PutLocked(r, ns, std::move(obj), Json());
}

StatusOr<Json> FakeClient::Update(const Resource& r, const std::string& ns, const Json& object) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string name = Meta(object, "name");
  KC_RETURN_IF_ERROR(RecordLocked({"update", ResourceId(r), ns, name, object}));
  auto it = objects_.find({ResourceId(r), r.namespaced ? ns : "", name});
  if (it == objects_.end()) return NotFoundError(r.resource + " \"" + name + "\" not found");
  const std::string rv = Meta(object, "resourceVersion");
  if (!rv.empty() && rv != Meta(it->second, "resourceVersion")) {
    return ConflictError("Operation cannot be fulfilled on " + r.resource + " \"" + name +
                         "\": the object has been modified; please apply your changes to the "
                         "latest version and try again");
  }
  const Json previous = it->second;
  return WriteLocked(r, ns, object, previous, /*to_status=*/false);
}

StatusOr<Json> FakeClient::UpdateStatus(const Resource& r, const std::string& ns,
                                        const Json& object) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string name = Meta(object, "name");
  KC_RETURN_IF_ERROR(RecordLocked({"updatestatus", ResourceId(r), ns, name, object}));
  if (!HasStatusSubresourceLocked(r)) return NoStatusSubresource(r);
  auto it = objects_.find({ResourceId(r), r.namespaced ? ns : "", name});
  if (it == objects_.end()) return NotFoundError(r.resource + " \"" + name + "\" not found");
  const std::string rv = Meta(object, "resourceVersion");
  if (!rv.empty() && rv != Meta(it->second, "resourceVersion")) {
    return ConflictError("Operation cannot be fulfilled on " + r.resource + " \"" + name + "\"");
  }
  const Json previous = it->second;
  Json with_status = object;
  if (!with_status.contains("status")) with_status["status"] = Json::object();
  return WriteLocked(r, ns, std::move(with_status), previous, /*to_status=*/true);
}

StatusOr<Json> FakeClient::Patch(const Resource& r, const std::string& ns, const std::string& name,
                                 PatchType type, const Json& patch, const PatchOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  KC_RETURN_IF_ERROR(RecordLocked({"patch", ResourceId(r), ns, name, patch}));
  const bool to_status = options.subresource == "status";
  if (to_status && !HasStatusSubresourceLocked(r)) return NoStatusSubresource(r);
  auto it = objects_.find({ResourceId(r), r.namespaced ? ns : "", name});
  if (it == objects_.end()) {
    if (type != PatchType::kApply || to_status) {
      return NotFoundError(r.resource + " \"" + name + "\" not found");
    }
    Json obj = patch;
    obj["metadata"]["name"] = name;
    return PutLocked(r, ns, std::move(obj), Json());
  }
  const Json previous = it->second;
  Json patched = previous;
  if (type == PatchType::kJsonPatch) {
    try {
      patched = previous.patch(patch);
    } catch (const std::exception& e) {
      return InvalidArgumentError(std::string("fake: json patch failed: ") + e.what());
    }
  } else {
    if (!patch.is_object()) return InvalidArgumentError("fake: merge patch must be an object");
    const std::string rv = Meta(patch, "resourceVersion");
    if (!rv.empty() && rv != Meta(previous, "resourceVersion")) {
      return ConflictError("Operation cannot be fulfilled on " + r.resource + " \"" + name + "\"");
    }
    patched.merge_patch(patch);
  }
  patched["metadata"]["name"] = name;
  return WriteLocked(r, ns, std::move(patched), previous, to_status);
}

Status FakeClient::Delete(const Resource& r, const std::string& ns, const std::string& name,
                          const DeleteOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  KC_RETURN_IF_ERROR(RecordLocked({"delete", ResourceId(r), ns, name, nullptr}));
  auto it = objects_.find({ResourceId(r), r.namespaced ? ns : "", name});
  if (it == objects_.end()) return NotFoundError(r.resource + " \"" + name + "\" not found");
  if (options.precondition_uid && *options.precondition_uid != Meta(it->second, "uid")) {
    return ConflictError("Precondition failed: UID in precondition: " + *options.precondition_uid);
  }
  if (options.precondition_resource_version &&
      *options.precondition_resource_version != Meta(it->second, "resourceVersion")) {
    return ConflictError("Precondition failed: ResourceVersion in precondition: " +
                         *options.precondition_resource_version);
  }
  if (!Finalizers(it->second).empty()) {
    // Finalizers hold the object: it is marked (watchers see MODIFIED) and
    // goes when an update or patch removes the last of them.
    if (Deleting(it->second)) return OkStatus();
    const Json previous = it->second;
    Json marked = previous;
    marked["metadata"]["deletionTimestamp"] = api::FormatTime(clock_.WallNow());
    marked["metadata"]["deletionGracePeriodSeconds"] = 0;
    return PutLocked(r, ns, std::move(marked), previous).status();
  }
  Json last = it->second;
  objects_.erase(it);
  ++rv_;
  last["metadata"]["resourceVersion"] = std::to_string(rv_);
  AppendLocked(WatchEvent::Type::kDeleted, ResourceId(r), r.namespaced ? ns : "", last, Json());
  return OkStatus();
}

Status FakeClient::Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
                         std::stop_token stop,
                         const std::function<bool(const WatchEvent&)>& handler) {
  const std::string id = ResourceId(r);
  const std::string watch_ns = r.namespaced ? ns : "";
  std::vector<WatchEvent> pending;
  size_t pos = 0;
  uint64_t my_disconnect = 0;
  uint64_t my_bookmark = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    KC_RETURN_IF_ERROR(RecordLocked({"watch", id, ns, options.resource_version, nullptr}));
    ++watch_calls_;
    watch_rvs_.push_back(options.resource_version);
    cv_.notify_all();
    if (fail_next_watches_ > 0) {
      --fail_next_watches_;
      return fail_watch_status_;
    }
    KC_RETURN_IF_ERROR(MatchesLabelSelector(options.label_selector, Json()).status());
    const std::string& from = options.resource_version;
    if (from.empty() || from == "0") {
      for (const auto& [key, obj] : objects_) {
        if (std::get<0>(key) != id || (!watch_ns.empty() && std::get<1>(key) != watch_ns)) continue;
        if (!Matches(options.label_selector, options.field_selector, obj)) continue;
        pending.push_back(WatchEvent{WatchEvent::Type::kAdded, obj});
      }
      pos = history_.size();
    } else {
      const int64_t since = ParseRv(from);
      if (since < 0) return InvalidArgumentError("fake: bad resourceVersion \"" + from + "\"");
      if (since < compacted_rv_) {
        return GoneError("too old resource version: " + from + " (" +
                         std::to_string(compacted_rv_) + ")");
      }
      pos = static_cast<size_t>(
          std::partition_point(history_.begin(), history_.end(),
                               [&](const HistoryEntry& e) { return e.rv <= since; }) -
          history_.begin());
    }
    my_disconnect = disconnect_epoch_;
    my_bookmark = bookmark_epoch_;
    ++open_watches_;
    cv_.notify_all();
  }
  struct OpenGuard {
    FakeClient* self;
    ~OpenGuard() {
      std::lock_guard<std::mutex> l(self->mu_);
      --self->open_watches_;
      self->cv_.notify_all();
    }
  } guard{this};

  while (true) {
    for (const WatchEvent& e : pending) {
      if (!handler(e)) return OkStatus();
    }
    pending.clear();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, stop, [&] {
      return pos < history_.size() || disconnect_epoch_ != my_disconnect ||
             bookmark_epoch_ != my_bookmark;
    });
    if (stop.stop_requested()) return CancelledError("fake: watch stopped");
    const bool disconnected = disconnect_epoch_ != my_disconnect;
    for (; pos < history_.size(); ++pos) {
      const HistoryEntry& e = history_[pos];
      if (e.resource_id != id || (!watch_ns.empty() && e.ns != watch_ns)) continue;
      const bool now_matches = Matches(options.label_selector, options.field_selector, e.object);
      if (e.type == WatchEvent::Type::kModified) {
        const bool before = Matches(options.label_selector, options.field_selector, e.previous);
        if (before && now_matches) {
          pending.push_back(WatchEvent{WatchEvent::Type::kModified, e.object});
        } else if (now_matches) {
          pending.push_back(WatchEvent{WatchEvent::Type::kAdded, e.object});
        } else if (before) {
          pending.push_back(WatchEvent{WatchEvent::Type::kDeleted, e.object});
        }
      } else if (now_matches) {
        pending.push_back(WatchEvent{e.type, e.object});
      }
    }
    if (bookmark_epoch_ != my_bookmark) {
      my_bookmark = bookmark_epoch_;
      if (options.allow_bookmarks) {
        Json obj = {{"kind", r.kind},
                    {"apiVersion", r.ApiVersion()},
                    {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
        pending.push_back(WatchEvent{WatchEvent::Type::kBookmark, std::move(obj)});
      }
    }
    if (disconnected) {
      // What the server had sent before the connection dropped still arrives.
      Status result = disconnect_status_;
      lock.unlock();
      for (const WatchEvent& e : pending) {
        if (!handler(e)) return OkStatus();
      }
      return result;
    }
  }
}

void FakeClient::SetReactor(Reactor reactor) {
  std::lock_guard<std::mutex> l(mu_);
  reactor_ = std::move(reactor);
}

void FakeClient::SetStatusSubresource(const Resource& r, bool enabled) {
  std::lock_guard<std::mutex> l(mu_);
  status_subresource_[ResourceId(r)] = enabled;
}

void FakeClient::DisconnectWatches(Status status) {
  std::lock_guard<std::mutex> l(mu_);
  disconnect_status_ = std::move(status);
  ++disconnect_epoch_;
  cv_.notify_all();
}

void FakeClient::FailNextWatches(int n, Status status) {
  std::lock_guard<std::mutex> l(mu_);
  fail_next_watches_ = n;
  fail_watch_status_ = std::move(status);
}

void FakeClient::Compact() {
  std::lock_guard<std::mutex> l(mu_);
  compacted_rv_ = rv_;
}

void FakeClient::SendBookmark() {
  std::lock_guard<std::mutex> l(mu_);
  ++bookmark_epoch_;
  cv_.notify_all();
}

int64_t FakeClient::resource_version() const {
  std::lock_guard<std::mutex> l(mu_);
  return rv_;
}

std::vector<FakeAction> FakeClient::Actions() const {
  std::lock_guard<std::mutex> l(mu_);
  return actions_;
}

void FakeClient::ClearActions() {
  std::lock_guard<std::mutex> l(mu_);
  actions_.clear();
}

int FakeClient::OpenWatches() const {
  std::lock_guard<std::mutex> l(mu_);
  return open_watches_;
}

int FakeClient::WatchCalls() const {
  std::lock_guard<std::mutex> l(mu_);
  return watch_calls_;
}

std::vector<std::string> FakeClient::WatchResourceVersions() const {
  std::lock_guard<std::mutex> l(mu_);
  return watch_rvs_;
}

bool FakeClient::WaitForOpenWatches(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return open_watches_ >= n; });
}

bool FakeClient::WaitForWatchCalls(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return watch_calls_ >= n; });
}

}  // namespace kc::kube
