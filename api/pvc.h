// Typed view of a core/v1 PersistentVolumeClaim.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/meta.h"

namespace kc::api {

struct PersistentVolumeClaim {
  ObjectMeta metadata;
  std::vector<std::string> access_modes;  // spec.accessModes: ReadWriteMany, ...
  std::string storage_class_name;         // "" when unset
  std::string requested_storage;          // spec.resources.requests.storage, e.g. "20Gi"
  std::string volume_name;
  std::string phase;                             // Pending, Bound, Lost
  std::vector<std::string> status_access_modes;  // status.accessModes: what the volume gives
  std::map<std::string, std::string> capacity;   // status.capacity

  bool Bound() const { return phase == "Bound"; }
  bool HasAccessMode(const std::string& mode) const;
};

void from_json(const Json& j, PersistentVolumeClaim& pvc);  // NOLINT

}  // namespace kc::api
