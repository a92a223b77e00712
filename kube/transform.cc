#include "kube/transform.h"

namespace kc::kube {

using Json = nlohmann::json;

Json Project(const Json& object, const Json& mask) {
  if (!object.is_object() || !mask.is_object()) return object;
  Json out = Json::object();
  for (const auto& [key, sub] : mask.items()) {
    auto it = object.find(key);
    if (it == object.end()) continue;
    if (!sub.is_object()) {
      out[key] = *it;
    } else if (it->is_array()) {
      Json list = Json::array();
      for (const Json& element : *it) list.push_back(Project(element, sub));
      out[key] = std::move(list);
    } else {
      out[key] = Project(*it, sub);
    }
  }
  return out;
}

Json WithoutManagedFields(const Json& object) {
  Json out = object;
  if (out.is_object()) {
    auto meta = out.find("metadata");
    if (meta != out.end() && meta->is_object()) meta->erase("managedFields");
  }
  return out;
}

}  // namespace kc::kube
