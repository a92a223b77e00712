#include "operator/decide/server_warmup_job.h"

#include <set>

#include "core/cache_env.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/server_warmup.h"
#include "core/spec_validation.h"
#include "core/warmup_plan.h"
#include "operator/decide/job_parts.h"
#include "operator/decide/warmup_job.h"

namespace kc::op {
namespace {

// Pod fields of the template the warmup pod keeps as they are.
constexpr const char* kKeptPodFields[] = {"volumes",          "imagePullSecrets",
                                          "runtimeClassName", "schedulerName",
                                          "dnsPolicy",        "dnsConfig",
                                          "hostAliases",      "enableServiceLinks",
                                          "resourceClaims",   "terminationGracePeriodSeconds"};

// The template's container as a native sidecar of the warmup pod; with
// convergence passes it carries the marker `initwarm drive` restarts it by.
Json Sidecar(Json c, const std::string& fp_id, bool passes) {
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) c.erase(probe);
  if (c.contains("ports") && c["ports"].is_array()) {
    for (auto& p : c["ports"]) {
      if (!p.is_object()) continue;
      p.erase("hostPort");
      p.erase("hostIP");
    }
  }
  const auto& reserved = core::ReservedEnvNames();
  const std::set<std::string> drop(reserved.begin(), reserved.end());
  Json env = Json::array();
  if (c.contains("env") && c["env"].is_array()) {
    for (const auto& e : c["env"]) {
      if (e.is_object() && e.contains("name") && e["name"].is_string() &&
          drop.count(e["name"].get<std::string>()) > 0) {
        continue;
      }
      env.push_back(e);
    }
  }
  for (const auto& [k, v] : core::CacheViewEnv()) env.push_back({{"name", k}, {"value", v}});
  env.push_back({{"name", "KC_FINGERPRINT"}, {"value", fp_id}});
  env.push_back(
      {{"name", "KC_NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}});
  if (passes) env.push_back({{"name", std::string(core::kWarmupServerMarkerEnv)}, {"value", "1"}});
  c["env"] = std::move(env);
  Json mounts = c.contains("volumeMounts") && c["volumeMounts"].is_array() ? c["volumeMounts"]
                                                                           : Json::array();
  for (const auto& m : Mounts(kServerVolumes)) mounts.push_back(m);
  c["volumeMounts"] = std::move(mounts);
  c["restartPolicy"] = "Always";
  return c;
}

const Json& ListOf(const Json& spec, const char* key) {
  static const Json kEmpty = Json::array();
  return spec.contains(key) && spec[key].is_array() ? spec[key] : kEmpty;
}

}  // namespace

Json BuildServerWarmupPod(const core::KernelCache& kc, const std::string& fp_id,
                          const std::vector<std::string>& prepare_args,
                          const core::SealArgs& seal_args, const std::string& node_facts,
                          const std::string& runtime_facts,
                          const std::vector<std::map<std::string, std::string>>& label_sets,
                          const Settings& settings) {
  const core::ServerSpec& server = *kc.spec.warmup.server;
  const Json& tmpl = server.pod_template;
  const Json& tspec =
      tmpl.is_object() && tmpl.contains("spec") && tmpl["spec"].is_object() ? tmpl["spec"] : Json();
  auto serving = core::ServingContainerOf(server);
  const int32_t passes = kc.spec.warmup.convergence.max_passes;

  Json inits = Json::array({InitwarmContainer("prepare", settings, prepare_args, kServerVolumes)});
  // Entries that are not objects are left out (CheckServerTemplate refuses
  // such a template before any Job is built).
  for (const auto& c : ListOf(tspec, "initContainers")) {
    if (c.is_object()) inits.push_back(c);
  }
  for (const auto& c : ListOf(tspec, "containers")) {
    if (c.is_object()) inits.push_back(Sidecar(c, fp_id, passes > 0));
  }

  // The driver gives up a tenth before the Job's deadline, so a server that
  // never gets ready fails with the driver's reason, not DeadlineExceeded.
  const int64_t deadline = kc.spec.warmup.active_deadline_seconds;
  core::DriveArgs drive;
  drive.port = serving.ok() ? serving->port : 0;
  if (serving.ok()) drive.ready_path = serving->readiness_path;
  drive.timeout = std::chrono::seconds(deadline - deadline / 10);
  drive.request_timeout = std::chrono::seconds(server.request_timeout_seconds);
  drive.view = kViewPath;
  if (passes > 0) {
    drive.max_passes = passes;
    drive.convergence_record = core::kDefaultConvergenceRecord;
  }
  drive.seal = seal_args;
  Json seal = InitwarmContainer("seal", settings, core::DriveArgv(drive), kServerVolumes);
  seal["env"].push_back({{"name", std::string(core::kWarmupRequestsEnv)},
                         {"value", core::WarmupCallsToJson(core::PlanWarmupCalls(server))}});
  seal["env"].push_back({{"name", "KC_NODE_FACTS"}, {"value", node_facts}});
  seal["env"].push_back({{"name", "KC_RUNTIME_FACTS"}, {"value", runtime_facts}});

  Json pod = {{"restartPolicy", "Never"},
              {"affinity", Affinity(label_sets)},
              {"initContainers", std::move(inits)},
              {"containers", Json::array({std::move(seal)})}};
  // The driver restarts the server for a convergence pass by ending its
  // processes (initwarm/warmup/server_restart.h): it must see them.
  if (passes > 0) pod["shareProcessNamespace"] = true;
  for (const char* field : kKeptPodFields) {
    if (tspec.contains(field)) pod[field] = tspec[field];
  }
  Json volumes =
      pod.contains("volumes") && pod["volumes"].is_array() ? pod["volumes"] : Json::array();
  for (const auto& v : Volumes(kc, kServerVolumes)) volumes.push_back(v);
  pod["volumes"] = std::move(volumes);

  Json node_selector = tspec.contains("nodeSelector") && tspec["nodeSelector"].is_object()
                           ? tspec["nodeSelector"]
                           : Json::object();
  for (const auto& [k, v] : kc.spec.node_selector) node_selector[k] = v;
  if (!node_selector.empty()) pod["nodeSelector"] = std::move(node_selector);
  Json tolerations = ListOf(tspec, "tolerations");
  for (const auto& t : kc.spec.tolerations) tolerations.push_back(t);
  if (!tolerations.empty()) pod["tolerations"] = std::move(tolerations);

  if (tspec.contains("serviceAccountName") && tspec["serviceAccountName"].is_string()) {
    pod["serviceAccountName"] = tspec["serviceAccountName"];
    if (tspec.contains("automountServiceAccountToken")) {
      pod["automountServiceAccountToken"] = tspec["automountServiceAccountToken"];
    }
  } else {
    ServiceAccount(settings, pod);
  }
  if (!settings.warmup_priority_class.empty()) {
    pod["priorityClassName"] = settings.warmup_priority_class;
  }
  Secure(kc, pod);
  return pod;
}

}  // namespace kc::op
