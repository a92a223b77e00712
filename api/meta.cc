#include "api/meta.h"

namespace kc::api {

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

OwnerReference OwnerReferenceFromJson(const Json& j, const std::string& p, FieldErrors* errors) {
  OwnerReference r;
  ReadString(j, "apiVersion", p, errors, &r.api_version);
  ReadString(j, "kind", p, errors, &r.kind);
  ReadString(j, "name", p, errors, &r.name);
  ReadString(j, "uid", p, errors, &r.uid);
  ReadBool(j, "controller", p, errors, &r.controller);
  ReadBool(j, "blockOwnerDeletion", p, errors, &r.block_owner_deletion);
  return r;
}

ObjectMeta MetadataFromJson(const Json& m, FieldErrors* errors) {
  ObjectMeta meta;
  if (!m.is_object()) return meta;
  const std::string p = "metadata";
  ReadString(m, "name", p, errors, &meta.name);
  ReadString(m, "generateName", p, errors, &meta.generate_name);
  ReadString(m, "namespace", p, errors, &meta.namespace_);
  ReadString(m, "uid", p, errors, &meta.uid);
  ReadString(m, "resourceVersion", p, errors, &meta.resource_version);
  ReadInt(m, "generation", p, errors, &meta.generation);
  ReadTime(m, "creationTimestamp", p, errors, &meta.creation_timestamp);
  ReadTime(m, "deletionTimestamp", p, errors, &meta.deletion_timestamp);
  ReadStringList(m, "finalizers", p, errors, &meta.finalizers);
  ReadStringMap(m, "labels", p, errors, &meta.labels);
  ReadStringMap(m, "annotations", p, errors, &meta.annotations);
  std::vector<Json> refs;
  ReadObjectList(m, "ownerReferences", p, errors, &refs);
  for (size_t i = 0; i < refs.size(); ++i) {
    meta.owner_references.push_back(
        OwnerReferenceFromJson(refs[i], p + ".ownerReferences[" + std::to_string(i) + "]", errors));
  }
  return meta;
}

Condition ConditionFromJson(const Json& j, const std::string& p, FieldErrors* errors) {
  Condition c;
  ReadString(j, "type", p, errors, &c.type);
  ReadString(j, "status", p, errors, &c.status);
  ReadString(j, "reason", p, errors, &c.reason);
  ReadString(j, "message", p, errors, &c.message);
  ReadInt(j, "observedGeneration", p, errors, &c.observed_generation);
  std::optional<Time> t;
  ReadTime(j, "lastTransitionTime", p, errors, &t);
  if (t) c.last_transition_time = *t;
  return c;
}

std::vector<Condition> ConditionsFromJson(const Json& j, std::string_view key,
                                          const std::string& path, FieldErrors* errors) {
  std::vector<Json> items;
  ReadObjectList(j, key, path, errors, &items);
  std::vector<Condition> out;
  const std::string p = JoinPath(path, key);
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(ConditionFromJson(items[i], p + "[" + std::to_string(i) + "]", errors));
  }
  return out;
}

ObjectMeta MetaOf(const Json& object) { return MetadataFromJson(Object(object, "metadata")); }

std::string MetaString(const Json& object, std::string_view field) {
  std::string out;
  Read(Object(object, "metadata"), field, &out);
  return out;
}

Json OwnerReferenceToJson(const OwnerReference& r) {
  Json j = {{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
  if (r.controller) j["controller"] = true;
  if (r.block_owner_deletion) j["blockOwnerDeletion"] = true;
  return j;
}

Json MetadataToJson(const ObjectMeta& meta) {
  Json m = Json::object();
  if (!meta.name.empty()) m["name"] = meta.name;
  if (!meta.generate_name.empty()) m["generateName"] = meta.generate_name;
  if (!meta.namespace_.empty()) m["namespace"] = meta.namespace_;
  if (!meta.uid.empty()) m["uid"] = meta.uid;
  if (!meta.resource_version.empty()) m["resourceVersion"] = meta.resource_version;
  if (meta.generation != 0) m["generation"] = meta.generation;
  if (meta.creation_timestamp) m["creationTimestamp"] = FormatTime(*meta.creation_timestamp);
  if (meta.deletion_timestamp) m["deletionTimestamp"] = FormatTime(*meta.deletion_timestamp);
  if (!meta.finalizers.empty()) m["finalizers"] = meta.finalizers;
  if (!meta.labels.empty()) m["labels"] = meta.labels;
  if (!meta.annotations.empty()) m["annotations"] = meta.annotations;
  if (!meta.owner_references.empty()) {
    Json refs = Json::array();
    for (const auto& r : meta.owner_references) refs.push_back(OwnerReferenceToJson(r));
    m["ownerReferences"] = std::move(refs);
  }
  return m;
}

Json ConditionToJson(const Condition& c) {
  return {{"type", c.type},
          {"status", c.status},
          {"reason", c.reason},
          {"message", c.message},
          {"observedGeneration", c.observed_generation},
          {"lastTransitionTime", FormatTime(c.last_transition_time)}};
}

void from_json(const Json& j, OwnerReference& r) { r = OwnerReferenceFromJson(j); }
void to_json(Json& j, const OwnerReference& r) { j = OwnerReferenceToJson(r); }
void from_json(const Json& j, ObjectMeta& m) { m = MetadataFromJson(j); }
void to_json(Json& j, const ObjectMeta& m) { j = MetadataToJson(m); }
void from_json(const Json& j, Condition& c) { c = ConditionFromJson(j); }
void to_json(Json& j, const Condition& c) { j = ConditionToJson(c); }

}  // namespace kc::api
