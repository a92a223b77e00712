#include "kube/types/pvc.h"

#include <algorithm>

#include "base/json_get.h"

namespace kc::kube {

using json_get::Object;
using json_get::Read;

bool PersistentVolumeClaim::HasAccessMode(const std::string& mode) const {
  return std::find(access_modes.begin(), access_modes.end(), mode) != access_modes.end();
}

void from_json(const nlohmann::json& j, PersistentVolumeClaim& pvc) {
  pvc = PersistentVolumeClaim();
  from_json(Object(j, "metadata"), pvc.metadata);
  const auto& spec = Object(j, "spec");
  Read(spec, "accessModes", &pvc.access_modes);
  Read(spec, "storageClassName", &pvc.storage_class_name);
  Read(spec, "volumeName", &pvc.volume_name);
  std::map<std::string, std::string> requests;
  Read(Object(spec, "resources"), "requests", &requests);
  if (auto it = requests.find("storage"); it != requests.end()) pvc.requested_storage = it->second;
  const auto& status = Object(j, "status");
  Read(status, "phase", &pvc.phase);
  Read(status, "capacity", &pvc.capacity);
}

}  // namespace kc::kube
