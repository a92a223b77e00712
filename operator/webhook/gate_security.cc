#include "operator/webhook/gate_security.h"

#include <optional>

#include "base/json_get.h"

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

std::optional<int64_t> IntField(const Json& j, const char* key) {
  const Json* v = json_get::Field(j, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  return v->get<int64_t>();
}

}  // namespace

Json GateSecurityContext(const Json& pod) {
  const Json& spec = json_get::Object(pod, "spec");
  const Json& pod_sc = json_get::Object(spec, "securityContext");
  const Json* containers = json_get::Field(spec, "containers");
  const Json* first = (containers != nullptr && containers->is_array() && !containers->empty() &&
                       (*containers)[0].is_object())
                          ? &(*containers)[0]
                          : nullptr;
  static const Json kEmpty = Json::object();
  const Json& app_sc = first != nullptr ? json_get::Object(*first, "securityContext") : kEmpty;

  Json sc = Json::object();
  std::optional<int64_t> user = IntField(app_sc, "runAsUser");
  if (!user) user = IntField(pod_sc, "runAsUser");
  std::optional<int64_t> group = IntField(app_sc, "runAsGroup");
  if (!group) group = IntField(pod_sc, "runAsGroup");
  if (user) sc["runAsUser"] = *user;
  if (group) sc["runAsGroup"] = *group;
  sc["runAsNonRoot"] = !(user && *user == 0);
  sc["allowPrivilegeEscalation"] = false;
  sc["capabilities"] = {{"drop", Json::array({"ALL"})}};
  sc["readOnlyRootFilesystem"] = true;
  sc["seccompProfile"] = {{"type", "RuntimeDefault"}};
  return sc;
}

}  // namespace kc::webhook
