#include "api/pvc.h"

#include <algorithm>

namespace kc::api {

bool PersistentVolumeClaim::HasAccessMode(const std::string& mode) const {
  return std::find(access_modes.begin(), access_modes.end(), mode) != access_modes.end();
}

void from_json(const Json& j, PersistentVolumeClaim& pvc) {
  pvc = PersistentVolumeClaim();
  pvc.metadata = MetaOf(j);
  const Json& spec = Object(j, "spec");
  Read(spec, "accessModes", &pvc.access_modes);
  Read(spec, "storageClassName", &pvc.storage_class_name);
  Read(spec, "volumeName", &pvc.volume_name);
  std::map<std::string, std::string> requests;
  Read(Object(spec, "resources"), "requests", &requests);
  if (auto it = requests.find("storage"); it != requests.end()) pvc.requested_storage = it->second;
  const Json& status = Object(j, "status");
  Read(status, "phase", &pvc.phase);
  Read(status, "accessModes", &pvc.status_access_modes);
  Read(status, "capacity", &pvc.capacity);
}

}  // namespace kc::api
