#include "operator/decide/warmup_job.h"

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "core/cache_env.h"
#include "core/fingerprint.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "core/security_context.h"
#include "operator/decide/job_parts.h"
#include "operator/decide/names.h"
#include "operator/decide/server_warmup_job.h"

namespace kc::op {
namespace {

Json GpuResources(const Json& user) {
  Json r = user.is_object() ? user : Json::object();
  if (!r.contains("limits") || !r["limits"].is_object()) r["limits"] = Json::object();
  r["limits"]["nvidia.com/gpu"] = "1";
  if (r.contains("requests") && r["requests"].is_object() &&
      r["requests"].contains("nvidia.com/gpu")) {
    r["requests"]["nvidia.com/gpu"] = "1";
  }
  return r;
}

// The warmup container's command: the user's, or with convergence passes
// the static runner that prepare installed in the run volume running it
// (kc-converge; the user's args still follow, after "--").
std::vector<std::string> WarmupCommand(const core::WarmupSpec& w) {
  if (w.convergence.max_passes <= 0) return w.command;
  core::ConvergeArgs a;
  a.max_passes = w.convergence.max_passes;
  a.view = kViewPath;
  a.command = w.command;
  return core::ConvergeArgv(a);
}

// The command form's pod: prepare, the user's warmup in spec.image, seal.
Json CommandWarmupPod(const core::KernelCache& kc, const std::string& fp_id,
                      const std::vector<std::string>& prepare_args,
                      const std::vector<std::string>& seal_args, const std::string& node_facts,
                      const std::string& runtime_facts,
                      const std::vector<std::map<std::string, std::string>>& label_sets,
                      const Settings& settings) {
  const auto& spec = kc.spec;
  // The user's warmup container.
  std::set<std::string> reserved;
  for (const auto& [k, v] : core::CacheViewEnv()) reserved.insert(k);
  reserved.insert({"KC_WARMUP_SHAPES", "KC_FINGERPRINT", "KC_NODE_NAME"});
  Json env = Json::array();
  for (const auto& e : spec.warmup.env) {
    if (e.contains("name") && e["name"].is_string() &&
        reserved.count(e["name"].get<std::string>()) > 0) {
      continue;
    }
    env.push_back(e);
  }
  for (const auto& [k, v] : core::CacheViewEnv()) env.push_back({{"name", k}, {"value", v}});
  env.push_back({{"name", "KC_WARMUP_SHAPES"}, {"value", Json(spec.warmup.shapes).dump()}});
  env.push_back({{"name", "KC_FINGERPRINT"}, {"value", fp_id}});
  env.push_back(
      {{"name", "KC_NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}});
  Json warmup = {{"name", kWarmupContainer},
                 {"image", spec.image},
                 {"imagePullPolicy", settings.image_pull_policy},
                 {"command", WarmupCommand(spec.warmup)},
                 {"env", std::move(env)},
                 {"volumeMounts", Mounts()},
                 {"resources", GpuResources(spec.warmup.resources)}};
  if (!spec.warmup.args.empty()) warmup["args"] = spec.warmup.args;

  Json seal = InitwarmContainer("seal", settings, seal_args);
  seal["env"].push_back({{"name", "KC_NODE_FACTS"}, {"value", node_facts}});
  seal["env"].push_back({{"name", "KC_RUNTIME_FACTS"}, {"value", runtime_facts}});
  seal["resources"]["limits"]["nvidia.com/gpu"] = "1";

  Json pod = {{"restartPolicy", "Never"},
              {"affinity", Affinity(label_sets)},
              {"initContainers", Json::array({InitwarmContainer("prepare", settings, prepare_args),
                                              std::move(warmup)})},
              {"containers", Json::array({std::move(seal)})},
              {"volumes", Volumes(kc)}};
  if (!spec.node_selector.empty()) pod["nodeSelector"] = spec.node_selector;
  if (!spec.tolerations.empty()) pod["tolerations"] = spec.tolerations;
  ServiceAccount(settings, pod);
  // The chart's PriorityClass: on a full pool the warmup may preempt a model
  // pod (which waits in its gate for this very cache) instead of staying
  // Pending.
  if (!settings.warmup_priority_class.empty()) {
    pod["priorityClassName"] = settings.warmup_priority_class;
  }
  Secure(kc, pod);
  return pod;
}

}  // namespace

Json OwnerReference(const core::KernelCache& kc) {
  return {{"apiVersion", core::kApiVersion}, {"kind", core::kKind}, {"name", kc.metadata.name},
          {"uid", kc.metadata.uid},          {"controller", true},  {"blockOwnerDeletion", true}};
}

Json BuildWarmupJob(const core::KernelCache& kc, const std::string& fp_id,
                    const core::NodeFacts& node, int32_t warm_generation,
                    const std::vector<std::map<std::string, std::string>>& label_sets,
                    const Settings& settings, const std::vector<std::string>& break_lock_of) {
  const auto& spec = kc.spec;
  const bool passes = spec.warmup.convergence.max_passes > 0;
  core::PrepareArgs prepare;
  prepare.root = kCacheMountPath;
  prepare.view = kViewPath;
  prepare.fingerprint = fp_id;
  prepare.staging_id = "$(KC_JOB_UID)";
  if (!spec.warmup.server && passes) prepare.install_runner = core::kDefaultRunner;
  prepare.break_lock_of = break_lock_of;
  core::SealArgs seal;
  seal.root = kCacheMountPath;
  seal.fingerprint = fp_id;
  seal.staging_id = "$(KC_JOB_UID)";
  seal.replace = true;
  if (passes) {
    seal.convergence_record = core::kDefaultConvergenceRecord;
    seal.on_not_converged = spec.warmup.convergence.on_not_converged;
  }
  const std::vector<std::string> prepare_args = core::PrepareArgv(prepare);
  const std::vector<std::string> seal_args = core::SealArgv(seal);
  const std::string node_facts = core::NodeFactsToJson(node);
  const std::string runtime_facts = core::RuntimeFactsToJson(core::RuntimeFactsFor(spec));
  Json pod = spec.warmup.server ? BuildServerWarmupPod(kc, fp_id, prepare_args, seal, node_facts,
                                                       runtime_facts, label_sets, settings)
                                : CommandWarmupPod(kc, fp_id, prepare_args, seal_args, node_facts,
                                                   runtime_facts, label_sets, settings);

  Json labels = Labels(kc, "warmup");
  labels[kLabelFingerprint] = fp_id;
  Json annotations = {{kAnnotationFingerprint, fp_id},
                      {"kernelcache.io/warm-generation", std::to_string(warm_generation)}};
  Json job = JobShell(kc, WarmupJobName(kc.metadata.name, fp_id, warm_generation),
                      std::move(labels), std::move(annotations), std::move(pod),
                      spec.warmup.active_deadline_seconds, spec.warmup.backoff_limit);
  if (!spec.warmup.pod_annotations.empty()) {
    job["spec"]["template"]["metadata"]["annotations"] = spec.warmup.pod_annotations;
  }
  return job;
}

Json BuildGcJob(const core::KernelCache& kc, const std::map<std::string, std::string>& remove,
                const Settings& settings, const std::vector<std::string>& break_lock_of) {
  std::vector<std::string> ids;  // sorted: std::map order
  core::GcArgs gc_args;
  gc_args.root = kCacheMountPath;
  for (const auto& [id, digest] : remove) {
    ids.push_back(id);
    gc_args.remove.push_back({id, digest});
  }
  gc_args.break_lock_of = break_lock_of;
  std::vector<std::string> args = core::GcArgv(gc_args);
  Json gc = InitwarmContainer("gc", settings, std::move(args));
  gc["volumeMounts"] = Json::array({{{"name", "cache"}, {"mountPath", kCacheMountPath}}});
  Json pod = {{"restartPolicy", "Never"},
              {"containers", Json::array({std::move(gc)})},
              {"volumes", Json::array({Volumes(kc)[0]})}};
  if (!kc.spec.tolerations.empty()) pod["tolerations"] = kc.spec.tolerations;
  ServiceAccount(settings, pod);
  Secure(kc, pod);
  Json annotations = {{kAnnotationGcIds, StrJoin(ids, ",")}};
  return JobShell(kc, GcJobName(kc.metadata.name, ids), Labels(kc, "gc"), std::move(annotations),
                  std::move(pod), 600, 3);
}

Json BuildHarvestJob(const core::KernelCache& kc, const std::string& fp_id,
                     const std::string& base_digest, const std::string& accept_json,
                     const core::HarvestCaps& caps, const Settings& settings) {
  core::HarvestArgs a;
  a.root = kCacheMountPath;
  a.fingerprint = fp_id;
  a.base_digest = base_digest;
  a.caps = caps;
  std::vector<std::string> args = core::HarvestArgv(a);
  Json c = InitwarmContainer("harvest", settings, std::move(args));
  c["env"].push_back({{"name", "KC_HARVEST_ACCEPT"}, {"value", accept_json}});
  c["volumeMounts"] = Json::array({{{"name", "cache"}, {"mountPath", kCacheMountPath}}});
  Json pod = {{"restartPolicy", "Never"},
              {"containers", Json::array({std::move(c)})},
              {"volumes", Json::array({Volumes(kc)[0]})}};
  if (!kc.spec.tolerations.empty()) pod["tolerations"] = kc.spec.tolerations;
  if (!kc.spec.node_selector.empty()) pod["nodeSelector"] = kc.spec.node_selector;
  ServiceAccount(settings, pod);
  Secure(kc, pod);
  Json labels = Labels(kc, "harvest");
  labels[kLabelFingerprint] = fp_id;
  Json annotations = {{kAnnotationFingerprint, fp_id}};
  return JobShell(kc, HarvestJobName(kc.metadata.name, fp_id, base_digest, accept_json),
                  std::move(labels), std::move(annotations), std::move(pod), 1800, 0);
}

Json BuildPvc(const core::KernelCache& kc) {
  Json spec = {{"accessModes", Json::array({"ReadWriteMany"})},
               {"resources", {{"requests", {{"storage", kc.spec.storage.size}}}}}};
  if (!kc.spec.storage.storage_class_name.empty()) {
    spec["storageClassName"] = kc.spec.storage.storage_class_name;
  }
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", PvcName(kc.metadata.name)},
            {"namespace", kc.metadata.namespace_},
            {"labels", Labels(kc, "cache")},
            {"ownerReferences", Json::array({OwnerReference(kc)})}}},
          {"spec", std::move(spec)}};
}

}  // namespace kc::op
