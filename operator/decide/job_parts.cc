#include "operator/decide/job_parts.h"

#include "core/api_types.h"
#include "core/fingerprint.h"
#include "core/security_context.h"
#include "operator/decide/warmup_job.h"

namespace kc::op {

Json Volumes(const core::KernelCache& kc, const VolumeNames& names) {
  return Json::array(
      {{{"name", names.cache}, {"persistentVolumeClaim", {{"claimName", core::ClaimName(kc)}}}},
       {{"name", names.run}, {"emptyDir", Json::object()}}});
}

Json Mounts(const VolumeNames& names) {
  return Json::array({{{"name", names.cache}, {"mountPath", kCacheMountPath}},
                      {{"name", names.run}, {"mountPath", kRunMountPath}}});
}

Json Labels(const core::KernelCache& kc, const std::string& component) {
  return {{kLabelName, kc.metadata.name},
          {kLabelComponent, component},
          {"app.kubernetes.io/managed-by", "kernelcache-operator"}};
}

Json DownwardEnv() {
  return Json::array(
      {{{"name", "KC_JOB_UID"},
        {"valueFrom",
         {{"fieldRef", {{"fieldPath", "metadata.labels['batch.kubernetes.io/controller-uid']"}}}}}},
       {{"name", "KC_NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
       {{"name", "KC_POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}});
}

Json InitwarmContainer(const std::string& name, const Settings& settings,
                       std::vector<std::string> args, const VolumeNames& names) {
  Json c = {
      {"name", name},
      {"image", settings.initwarm_image},
      {"imagePullPolicy", settings.image_pull_policy},
      {"command", Json::array({"initwarm"})},
      {"args", std::move(args)},
      {"env", DownwardEnv()},
      {"volumeMounts", Mounts(names)},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "1Gi"}}}}}};
  return c;
}

Json Affinity(const std::vector<std::map<std::string, std::string>>& label_sets) {
  const std::string upgrade(core::labels::kDriverUpgradeState);
  Json terms = Json::array();
  for (const auto& set : label_sets) {
    Json exprs = Json::array();
    for (const auto& [k, v] : set) {
      exprs.push_back({{"key", k}, {"operator", "In"}, {"values", Json::array({v})}});
    }
    Json absent = exprs;
    absent.push_back({{"key", upgrade}, {"operator", "DoesNotExist"}});
    Json done = exprs;
    done.push_back(
        {{"key", upgrade}, {"operator", "In"}, {"values", Json::array({"", "upgrade-done"})}});
    terms.push_back({{"matchExpressions", std::move(absent)}});
    terms.push_back({{"matchExpressions", std::move(done)}});
  }
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", std::move(terms)}}}}}};
}

// Every container non-root, no privilege escalation, no capabilities; the
// pod as the KernelCache's warmup uid with the cache group
// (core/security_context.h, docs/permissions.md).
void Secure(const core::KernelCache& kc, Json& pod) {
  const core::PodSecurity sec = core::WarmupPodSecurity(kc.spec);
  pod["securityContext"] = sec.pod;
  for (const char* list : {"initContainers", "containers"}) {
    if (!pod.contains(list)) continue;
    for (auto& c : pod[list]) c["securityContext"] = sec.container;
  }
}

Json JobShell(const core::KernelCache& kc, const std::string& name, Json labels, Json annotations,
              Json pod_spec, int64_t deadline, int32_t backoff) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", kc.metadata.namespace_},
            {"labels", labels},
            {"annotations", std::move(annotations)},
            {"ownerReferences", Json::array({OwnerReference(kc)})}}},
          {"spec",
           {{"backoffLimit", backoff},
            {"activeDeadlineSeconds", deadline},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", std::move(pod_spec)}}}}}};
}

// Warmup and GC pods need no API access (the operator reads their results
// from the pod status): the user's image gets no ServiceAccount token
// unless --warmup-service-account names an account for it on purpose.
void ServiceAccount(const Settings& settings, Json& pod) {
  if (settings.service_account.empty()) {
    pod["automountServiceAccountToken"] = false;
  } else {
    pod["serviceAccountName"] = settings.service_account;
  }
}

}  // namespace kc::op
