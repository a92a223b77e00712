#include "operator/controller/workloads.h"

#include "api/json_read.h"
#include "api/meta.h"
#include "core/server_warmup.h"
#include "kube/store.h"

namespace kc::op {

void ResolveWorkload(core::KernelCache* kc, const Caches& caches,
                     std::vector<std::string>* errors) {
  if (!kc->spec.warmup.server || kc->spec.warmup.server->workload_ref.empty()) return;
  core::ServerSpec& s = *kc->spec.warmup.server;
  const auto kind = core::ParseWorkloadKind(s.workload_ref.kind);
  if (!kind) return;  // CheckServer names the kind
  const auto& stores =
      *kind == core::WorkloadKind::kDeployment ? caches.deployments : caches.statefulsets;
  const std::string what = s.workload_ref.kind + " " + s.workload_ref.name;
  auto workload = Caches::Get(stores, kc->metadata.namespace_ + "/" + s.workload_ref.name);
  const kube::Json* tmpl =
      workload ? api::Field(api::Object(*workload, "spec"), "template") : nullptr;
  if (tmpl == nullptr || !tmpl->is_object()) {
    errors->push_back("spec.warmup.server.workloadRef: " + what + " not found in namespace " +
                      kc->metadata.namespace_ +
                      "; create it, or name the workload whose pods this KernelCache gates");
    return;
  }
  s.pod_template = *tmpl;
  s.from_workload = true;
  for (auto& e : core::CheckServerTemplate(s, what + "'s spec.template")) {
    errors->push_back("spec.warmup.server.workloadRef: " + e);
  }
}

std::vector<std::string> KeysNamingWorkload(const std::string& kind, const kube::Json& workload,
                                            const std::vector<kube::Json>& kcs) {
  std::vector<std::string> out;
  const std::string ns = api::MetaString(workload, "namespace");
  const std::string name = api::MetaString(workload, "name");
  for (const auto& kc : kcs) {
    if (api::MetaString(kc, "namespace") != ns) continue;
    const kube::Json& ref = api::Object(
        api::Object(api::Object(api::Object(kc, "spec"), "warmup"), "server"), "workloadRef");
    std::string k, n;
    api::Read(ref, "kind", &k);
    api::Read(ref, "name", &n);
    if (k == kind && n == name) out.push_back(kube::ObjectKey(kc));
  }
  return out;
}

}  // namespace kc::op
