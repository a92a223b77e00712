#include "operator/decide/server_identity.h"

#include "api/json_read.h"

namespace kc::op::decide {

std::optional<std::string> ServerIdentityProblem(const core::KernelCacheSpec& spec,
                                                 std::string_view kc_namespace,
                                                 const Settings& settings) {
  if (!spec.warmup.server) return std::nullopt;
  const std::string& ns = settings.operator_namespace;
  if (!ns.empty() && kc_namespace == ns) {
    return "spec.warmup.server: a server-form warmup does not run in the operator's own "
           "namespace \"" +
           ns +
           "\" (its pod could run as the operator's ServiceAccount); create this KernelCache "
           "in the namespace of the workload it warms";
  }
  const std::string& sa = settings.operator_service_account;
  const nlohmann::json& tmpl = spec.warmup.server->pod_template;
  const nlohmann::json* pod_spec = tmpl.is_object() ? api::Field(tmpl, "spec") : nullptr;
  const nlohmann::json* name = pod_spec != nullptr && pod_spec->is_object()
                                   ? api::Field(*pod_spec, "serviceAccountName")
                                   : nullptr;
  if (!sa.empty() && name != nullptr && name->is_string() && *name == sa) {
    return "spec.warmup.server template spec.serviceAccountName: \"" + sa +
           "\" is the operator's ServiceAccount's name; a warmup runs as the server's own "
           "account (name another, or none)";
  }
  return std::nullopt;
}

}  // namespace kc::op::decide
