// Typed views of metav1 ObjectMeta, OwnerReference and Condition.
//
// Decoding is tolerant (base/json_get.h): missing or mistyped fields
// keep their defaults; nothing throws. Unknown fields are not kept: these
// structs are for reading. To change an object you do not own, patch it
// (Client::Patch); to_json here writes only the fields that are set, for
// building patches and new objects.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kc::kube {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // "namespace"
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  std::string creation_timestamp;                 // RFC 3339; see kube/wall_time.h
  std::optional<std::string> deletion_timestamp;  // set while being deleted

  // The controller owner reference (controller: true), if any.
  const OwnerReference* ControllerRef() const;
  bool HasFinalizer(std::string_view f) const;
  bool BeingDeleted() const { return deletion_timestamp.has_value(); }
};

// metav1.Condition (and the shape of node/pod/job conditions, which lack
// observedGeneration and may carry lastHeartbeatTime/lastProbeTime).
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  int64_t observed_generation = 0;
  std::string last_transition_time;

  friend bool operator==(const Condition&, const Condition&) = default;
};

// The condition of `type`, or nullptr.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);
bool IsConditionTrue(const std::vector<Condition>& conditions, std::string_view type);

void from_json(const nlohmann::json& j,
               OwnerReference& r);  // NOLINT(readability-identifier-naming)
void to_json(nlohmann::json& j, const OwnerReference& r);
void from_json(const nlohmann::json& j, ObjectMeta& m);
void to_json(nlohmann::json& j, const ObjectMeta& m);
void from_json(const nlohmann::json& j, Condition& c);
void to_json(nlohmann::json& j, const Condition& c);

// Reads object.metadata (tolerant).
ObjectMeta MetaOf(const nlohmann::json& object);

}  // namespace kc::kube
