#include "operator/views.h"

#include <limits>

#include "base/numbers.h"
#include "base/utf8.h"

namespace kc::op {
namespace {

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// An integer field that fits int32 (counts, exit codes); 0 otherwise.
int32_t Int32(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    return v <= INT32_MAX ? static_cast<int32_t>(v) : 0;
  }
  const int64_t v = it->get<int64_t>();
  return v >= INT32_MIN && v <= INT32_MAX ? static_cast<int32_t>(v) : 0;
}

const Json& Obj(const Json& j, const char* key) {
  static const Json kEmpty = Json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

const Json& Arr(const Json& j, const char* key) {
  static const Json kEmpty = Json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}

std::map<std::string, std::string> StrMap(const Json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

std::optional<Time> TimeOf(const Json& j, const char* key) {
  std::string s = Str(j, key);
  if (s.empty()) return std::nullopt;
  auto t = core::ParseTime(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// "1.5", "2k" are not GPU counts; a plain non-negative integer is.
int64_t Count(const Json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>() <= INT64_MAX ? j.get<int64_t>() : 0;
  if (j.is_number_integer()) return std::max<int64_t>(0, j.get<int64_t>());
  if (!j.is_string()) return 0;
  auto v = ParseInt64(j.get<std::string>(), "nvidia.com/gpu", 0);
  return v.ok() ? *v : 0;
}

}  // namespace

NodeView NodeViewFromJson(const Json& node) {
  NodeView v;
  const Json& meta = Obj(node, "metadata");
  v.name = Str(meta, "name");
  v.labels = StrMap(Obj(meta, "labels"));
  const Json& spec = Obj(node, "spec");
  v.unschedulable = spec.contains("unschedulable") && spec["unschedulable"].is_boolean() &&
                    spec["unschedulable"].get<bool>();
  const Json& status = Obj(node, "status");
  v.ready = false;
  for (const auto& c : Arr(status, "conditions")) {
    if (Str(c, "type") == "Ready") v.ready = Str(c, "status") == "True";
  }
  const Json& alloc = Obj(status, "allocatable");
  if (auto it = alloc.find("nvidia.com/gpu"); it != alloc.end()) v.gpu_allocatable = Count(*it);
  return v;
}

JobView JobViewFromJson(const Json& job) {
  JobView v;
  const Json& meta = Obj(job, "metadata");
  v.name = Str(meta, "name");
  v.uid = Str(meta, "uid");
  v.labels = StrMap(Obj(meta, "labels"));
  v.annotations = StrMap(Obj(meta, "annotations"));
  v.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto t = TimeOf(meta, "creationTimestamp")) v.created = *t;
  const Json& status = Obj(job, "status");
  v.active = Int32(status, "active");
  v.succeeded = Int32(status, "succeeded");
  v.failed = Int32(status, "failed");
  v.finished = TimeOf(status, "completionTime");
  for (const auto& c : Arr(status, "conditions")) {
    if (Str(c, "status") != "True") continue;
    const std::string type = Str(c, "type");
    if (type == "Complete") {
      v.complete = true;
    } else if (type == "Failed") {
      v.failed_condition = true;
      v.failure_reason = Str(c, "reason");
      v.failure_message = Str(c, "message");
      if (!v.finished) v.finished = TimeOf(c, "lastTransitionTime");
    }
  }
  return v;
}

PodView PodViewFromJson(const Json& pod) {
  PodView v;
  const Json& meta = Obj(pod, "metadata");
  v.name = Str(meta, "name");
  v.labels = StrMap(Obj(meta, "labels"));
  v.job_name = v.labels.count("batch.kubernetes.io/job-name") > 0
                   ? v.labels["batch.kubernetes.io/job-name"]
                   : v.labels["job-name"];
  if (auto t = TimeOf(meta, "creationTimestamp")) v.created = *t;
  v.node_name = Str(Obj(pod, "spec"), "nodeName");
  const Json& status = Obj(pod, "status");
  v.phase = Str(status, "phase");
  for (const auto& c : Arr(status, "conditions")) {
    if (Str(c, "type") != "PodScheduled" || Str(c, "status") != "False" ||
        Str(c, "reason") != "Unschedulable") {
      continue;
    }
    // No time: since the pod was created (never in the future of it).
    v.unschedulable_since = TimeOf(c, "lastTransitionTime").value_or(v.created);
    v.unschedulable_message = TruncateUtf8(Str(c, "message"), 512);
  }
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    for (const auto& cs : Arr(status, list)) {
      const Json& term = Obj(Obj(cs, "state"), "terminated");
      if (term.empty()) continue;
      const std::string name = Str(cs, "name");
      const int32_t code = Int32(term, "exitCode");
      if (name == kSealContainer) {
        v.seal_exit_code = code;
        v.seal_message = Str(term, "message");
      }
      if (code != 0 && v.failure_summary.empty()) {
        std::string msg = Str(term, "message");
        msg = TruncateUtf8(msg, 303);  // never cut a character: the status must stay UTF-8
        v.failure_summary = name + ": " + Str(term, "reason") + " (exit " + std::to_string(code) +
                            ")" + (msg.empty() ? "" : ": " + msg);
      }
    }
  }
  return v;
}

PvcView PvcViewFromJson(const Json& pvc, const std::string& owner_uid) {
  PvcView v;
  const Json& meta = Obj(pvc, "metadata");
  v.name = Str(meta, "name");
  v.uid = Str(meta, "uid");
  v.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto t = TimeOf(meta, "creationTimestamp")) v.created = *t;
  for (const auto& ref : Arr(meta, "ownerReferences")) {
    if (!owner_uid.empty() && Str(ref, "uid") == owner_uid) v.owned_by_us = true;
  }
  const Json& status = Obj(pvc, "status");
  v.phase = Str(status, "phase");
  const Json& modes = Arr(status, "accessModes").empty() ? Arr(Obj(pvc, "spec"), "accessModes")
                                                         : Arr(status, "accessModes");
  for (const auto& m : modes) {
    if (m.is_string()) v.access_modes.push_back(m.get<std::string>());
  }
  return v;
}

}  // namespace kc::op
