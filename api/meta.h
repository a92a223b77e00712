// metav1 ObjectMeta, OwnerReference and Condition: the one definition that
// the KernelCache resource (core/api_types.h), the typed built-in objects
// (api/node.h, ...), the operator and the webhook share.
//
// Decoding is tolerant (api/json_read.h): a missing or mistyped field keeps
// its default; the *FromJson functions report what they could not read to
// `errors` when non-null; from_json (for Json::get<T>) is the silent face.
// Unknown fields are not kept: these structs are for reading. To change an
// object you do not own, patch it (kube::Client::Patch); the *ToJson
// writers write only the fields that are set, for new objects and patches.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_read.h"
#include "api/time.h"

namespace kc::api {

struct OwnerReference {
  std::string api_version;  // "apiVersion"
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;  // "blockOwnerDeletion"

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;  // "generateName"
  std::string namespace_;     // "namespace"
  std::string uid;
  std::string resource_version;  // "resourceVersion"
  int64_t generation = 0;
  std::optional<Time> creation_timestamp;  // "creationTimestamp"
  std::optional<Time> deletion_timestamp;  // "deletionTimestamp": set while being deleted
  std::vector<std::string> finalizers;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;  // "ownerReferences"

  // The controller owner reference (controller: true), if any.
  const OwnerReference* ControllerRef() const;
  bool HasFinalizer(std::string_view f) const;
  bool BeingDeleted() const { return deletion_timestamp.has_value(); }
};

// metav1.Condition (and the shape of node/pod/job conditions, which lack
// observedGeneration and may carry lastHeartbeatTime/lastProbeTime).
struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;  // CamelCase
  std::string message;
  int64_t observed_generation = 0;
  Time last_transition_time{};  // "lastTransitionTime"; the epoch when absent

  friend bool operator==(const Condition&, const Condition&) = default;
};

// The condition of `type` (the first, should there be several), or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);
bool IsConditionTrue(const std::vector<Condition>& conditions, std::string_view type);

// Decoders: `path` names the object for errors ("metadata",
// "status.conditions[0]").
ObjectMeta MetadataFromJson(const Json& meta, FieldErrors* errors = nullptr);
OwnerReference OwnerReferenceFromJson(const Json& ref, const std::string& path = "",
                                      FieldErrors* errors = nullptr);
Condition ConditionFromJson(const Json& c, const std::string& path = "",
                            FieldErrors* errors = nullptr);
// A list of conditions at `key` of `j` (e.g. a status).
std::vector<Condition> ConditionsFromJson(const Json& j, std::string_view key,
                                          const std::string& path = "",
                                          FieldErrors* errors = nullptr);
// Reads object.metadata (silent).
ObjectMeta MetaOf(const Json& object);
// One string field of object.metadata ("name", "namespace",
// "resourceVersion"), "" when absent or not a string: the cheap read for
// stores, indexes and clients that hold raw objects.
std::string MetaString(const Json& object, std::string_view field);

// Encoders. A condition is written whole (metav1.Condition requires type,
// status, reason, message and lastTransitionTime).
Json MetadataToJson(const ObjectMeta& meta);
Json OwnerReferenceToJson(const OwnerReference& r);
Json ConditionToJson(const Condition& c);

// For Json::get<T>() and Json(T): the silent decoders and the encoders above.
void from_json(const Json& j, OwnerReference& r);  // NOLINT(readability-identifier-naming)
void to_json(Json& j, const OwnerReference& r);    // NOLINT(readability-identifier-naming)
void from_json(const Json& j, ObjectMeta& m);      // NOLINT(readability-identifier-naming)
void to_json(Json& j, const ObjectMeta& m);        // NOLINT(readability-identifier-naming)
void from_json(const Json& j, Condition& c);       // NOLINT(readability-identifier-naming)
void to_json(Json& j, const Condition& c);         // NOLINT(readability-identifier-naming)

}  // namespace kc::api
