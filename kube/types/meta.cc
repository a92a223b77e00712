#include "kube/types/meta.h"

#include "base/json_get.h"

namespace kc::kube {

using json_get::Field;
using json_get::Read;
using json_get::ReadList;

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const auto& r : owner_references) {
    if (r.controller) return &r;
  }
  return nullptr;
}

bool ObjectMeta::HasFinalizer(std::string_view f) const {
  for (const auto& x : finalizers) {
    if (x == f) return true;
  }
  return false;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const std::vector<Condition>& conditions, std::string_view type) {
  const Condition* c = FindCondition(conditions, type);
  return c != nullptr && c->status == "True";
}

void from_json(const nlohmann::json& j, OwnerReference& r) {
  r = OwnerReference();
  Read(j, "apiVersion", &r.api_version);
  Read(j, "kind", &r.kind);
  Read(j, "name", &r.name);
  Read(j, "uid", &r.uid);
  Read(j, "controller", &r.controller);
  Read(j, "blockOwnerDeletion", &r.block_owner_deletion);
}

void to_json(nlohmann::json& j, const OwnerReference& r) {
  j = {{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
  if (r.controller) j["controller"] = true;
  if (r.block_owner_deletion) j["blockOwnerDeletion"] = true;
}

void from_json(const nlohmann::json& j, ObjectMeta& m) {
  m = ObjectMeta();
  Read(j, "name", &m.name);
  Read(j, "namespace", &m.namespace_name);
  Read(j, "uid", &m.uid);
  Read(j, "resourceVersion", &m.resource_version);
  Read(j, "generation", &m.generation);
  Read(j, "labels", &m.labels);
  Read(j, "annotations", &m.annotations);
  ReadList(j, "ownerReferences", &m.owner_references,
           [](const nlohmann::json& item, OwnerReference* r) { from_json(item, *r); });
  Read(j, "finalizers", &m.finalizers);
  Read(j, "creationTimestamp", &m.creation_timestamp);
  const nlohmann::json* dt = Field(j, "deletionTimestamp");
  if (dt != nullptr && dt->is_string()) m.deletion_timestamp = dt->get<std::string>();
}

void to_json(nlohmann::json& j, const ObjectMeta& m) {
  j = nlohmann::json::object();
  if (!m.name.empty()) j["name"] = m.name;
  if (!m.namespace_name.empty()) j["namespace"] = m.namespace_name;
  if (!m.uid.empty()) j["uid"] = m.uid;
  if (!m.resource_version.empty()) j["resourceVersion"] = m.resource_version;
  if (m.generation != 0) j["generation"] = m.generation;
  if (!m.labels.empty()) j["labels"] = m.labels;
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
  if (!m.owner_references.empty()) j["ownerReferences"] = m.owner_references;
  if (!m.finalizers.empty()) j["finalizers"] = m.finalizers;
  if (!m.creation_timestamp.empty()) j["creationTimestamp"] = m.creation_timestamp;
  if (m.deletion_timestamp) j["deletionTimestamp"] = *m.deletion_timestamp;
}

void from_json(const nlohmann::json& j, Condition& c) {
  c = Condition();
  Read(j, "type", &c.type);
  Read(j, "status", &c.status);
  Read(j, "reason", &c.reason);
  Read(j, "message", &c.message);
  Read(j, "observedGeneration", &c.observed_generation);
  Read(j, "lastTransitionTime", &c.last_transition_time);
}

void to_json(nlohmann::json& j, const Condition& c) {
  j = {{"type", c.type}, {"status", c.status}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.message.empty()) j["message"] = c.message;
  if (c.observed_generation != 0) j["observedGeneration"] = c.observed_generation;
  if (!c.last_transition_time.empty()) j["lastTransitionTime"] = c.last_transition_time;
}

ObjectMeta MetaOf(const nlohmann::json& object) {
  ObjectMeta m;
  from_json(json_get::Object(object, "metadata"), m);
  return m;
}

}  // namespace kc::kube
