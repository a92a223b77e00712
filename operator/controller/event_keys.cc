#include "operator/controller/event_keys.h"

#include "api/meta.h"
#include "core/api_types.h"
#include "core/gate_report.h"
#include "operator/decide/types.h"

namespace kc::op {
namespace {

using Json = kube::Json;

// j[key] when `j` is an object holding one, else null: never throws, never
// reads past a missing key (const operator[] would).
const Json& At(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string StrAt(const Json& j, const char* key) {
  const Json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::optional<std::string> KeyByLabel(const Json& obj, const std::string& label, bool allow_empty) {
  const api::ObjectMeta meta = api::MetaOf(obj);
  auto it = meta.labels.find(label);
  if (it == meta.labels.end() || (!allow_empty && it->second.empty())) return std::nullopt;
  return meta.namespace_ + "/" + it->second;
}

}  // namespace

std::optional<std::string> OwnerKey(const Json& obj) {
  return KeyByLabel(obj, kLabelName, /*allow_empty=*/true);
}

std::optional<std::string> ConsumerKey(const Json& pod) {
  return KeyByLabel(pod, core::kConsumerLabel, /*allow_empty=*/false);
}

std::vector<std::string> PvcKeys(const Json& pvc, const std::vector<Json>& kernelcaches) {
  std::vector<std::string> keys;
  const api::ObjectMeta meta = api::MetaOf(pvc);
  for (const api::OwnerReference& ref : meta.owner_references) {
    if (ref.kind == core::kKind && ref.api_version == core::kApiVersion) {
      keys.push_back(meta.namespace_ + "/" + ref.name);
    }
  }
  for (const Json& kc : kernelcaches) {
    if (api::MetaOf(kc).namespace_ != meta.namespace_) continue;
    if (StrAt(At(At(kc, "spec"), "storage"), "existingClaim") == meta.name) {
      keys.push_back(kube::ObjectKey(kc));
    }
  }
  return keys;
}

std::map<std::string, std::string> NodeSelectorOf(const Json& kc) {
  std::map<std::string, std::string> out;
  const Json& j = At(At(kc, "spec"), "nodeSelector");
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace kc::op
