#include "operator/decide/pod_parts.h"

#include <set>
#include <string>
#include <vector>

#include "core/fingerprint.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

constexpr char kServiceAccountMount[] = "/var/run/secrets/kubernetes.io/serviceaccount";

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Digest(const Json& j) {
  return core::Sha256Hex(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace

PodParts PodPartsOf(const Json& pod_spec) {
  PodParts parts;
  if (!pod_spec.is_object()) return parts;
  std::map<std::string, std::set<std::string>> mounted;  // volume -> containers mounting it
  for (const char* list : {"initContainers", "containers"}) {
    const Json& cs = Field(pod_spec, list);
    if (!cs.is_array()) continue;
    for (const Json& c : cs) {
      const Json& name = Field(c, "name");
      if (!name.is_string()) continue;
      Json mounts = Json::array();
      const Json& ms = Field(c, "volumeMounts");
      for (const Json& m : ms.is_array() ? ms : Json::array()) {
        if (Field(m, "mountPath") == kServiceAccountMount) continue;
        mounts.push_back(m);
        if (Field(m, "name").is_string()) {
          mounted[Field(m, "name").get<std::string>()].insert(name.get<std::string>());
        }
      }
      const Json part = {{"list", list},
                         {"image", Field(c, "image")},
                         {"command", Field(c, "command")},
                         {"args", Field(c, "args")},
                         {"env", Field(c, "env")},
                         {"mounts", mounts}};
      parts["c/" + name.get<std::string>()] = Digest(part);
    }
  }
  const Json& vs = Field(pod_spec, "volumes");
  for (const Json& v : vs.is_array() ? vs : Json::array()) {
    const Json& name = Field(v, "name");
    if (!name.is_string() || !mounted.count(name.get<std::string>())) continue;
    const auto& by = mounted[name.get<std::string>()];
    parts["v/" + name.get<std::string>()] = Digest(
        {{"volume", v}, {"mountedBy", Json(std::vector<std::string>(by.begin(), by.end()))}});
  }
  return parts;
}

std::string TemplateMismatch(const PodParts& pod, const PodParts& job_template) {
  // Views built by hand (no containers on either side: no pod the API
  // server admits, nor any Job's template, is so) match; an unknown
  // template never matches a pod that runs something.
  if (job_template.empty()) return pod.empty() ? "" : "the Job's pod template is not known";
  for (const auto& [key, digest] : job_template) {
    const std::string what = (key.rfind("c/", 0) == 0 ? "container " : "volume ") + key.substr(2);
    auto it = pod.find(key);
    if (it == pod.end()) return what + " of the Job's template is missing";
    // A volume's part names the containers that mount it: a container the
    // template lacks that mounts a template volume makes it differ.
    if (it->second != digest) return what + " differs from the Job's template";
  }
  return "";
}

PodParts KeptPodParts(const Json& spec, const Json& pod_spec) {
  const Json& kept = Field(spec, kPodPartsKey);
  if (kept.is_object()) {
    PodParts parts;
    for (const auto& [k, v] : kept.items()) {
      if (v.is_string()) parts[k] = v.get<std::string>();
    }
    return parts;
  }
  return PodPartsOf(pod_spec);
}

}  // namespace kc::op
