#include "operator/webhook/mutate.h"

#include <algorithm>
#include <map>
#include <optional>

#include "api/json_read.h"
#include "api/meta.h"
#include "base/strings.h"
#include "core/cache_env.h"
#include "core/gate_args.h"
#include "core/gate_report.h"
#include "core/layout.h"
#include "core/security_context.h"
#include "core/spec_sections.h"
#include "core/validate.h"
#include "operator/webhook/json_patch.h"
#include "operator/webhook/miss_watcher.h"
#include "operator/webhook/mutate_steps.h"
#include "operator/webhook/parity.h"

namespace kc::webhook {
namespace {

using api::Field;
using api::Object;
using api::Read;

// Whether an optional list field holds a list (absent and null count as an
// empty list).
bool ListOrAbsent(const Json& j, const char* key) {
  const Json* v = Field(j, key);
  return v == nullptr || v->is_null() || v->is_array();
}

// Why the pod's shape cannot take the injection; "" when it can.
std::string ShapeProblem(const Json& pod) {
  if (const Json* m = Field(pod, "metadata"); m != nullptr && !m->is_null()) {
    if (!m->is_object()) return "metadata is not an object";
    if (const Json* a = Field(*m, "annotations"); a != nullptr && !a->is_null() && !a->is_object())
      return "metadata.annotations is not an object";
    if (const Json* l = Field(*m, "labels"); l != nullptr && !l->is_null() && !l->is_object())
      return "metadata.labels is not an object";
  }
  const Json* spec = Field(pod, "spec");
  if (spec == nullptr || !spec->is_object()) return "the pod has no spec";
  const Json* containers = Field(*spec, "containers");
  if (containers == nullptr || !containers->is_array() || containers->empty()) {
    return "spec.containers is not a non-empty list";
  }
  if (!ListOrAbsent(*spec, "volumes")) return "spec.volumes is not a list";
  if (!ListOrAbsent(*spec, "initContainers")) return "spec.initContainers is not a list";
  if (const Json* ic = Field(*spec, "initContainers"); ic != nullptr && ic->is_array()) {
    for (const Json& c : *ic) {
      if (!c.is_object()) return "spec.initContainers has an entry that is not an object";
    }
  }
  for (const Json& c : *containers) {
    if (!c.is_object()) return "spec.containers has an entry that is not an object";
    if (!ListOrAbsent(c, "env")) return "a container's env is not a list";
    if (!ListOrAbsent(c, "volumeMounts")) return "a container's volumeMounts is not a list";
  }
  return "";
}

// The gate's arguments for `kc`: its consume settings (the pod's namespace
// and node are left to the kubelet, core::EnvRef). InvalidArgument names the
// field when the spec did not decode (its values would be defaults, not what
// the user wrote) or cannot be handed to `initwarm wait`.
StatusOr<core::GateArgs> GateArgsOf(const core::KernelCache& kc, const std::string& resolve_url) {
  if (!kc.decode_errors.empty()) {
    return InvalidArgumentError(kc.decode_errors.front() + "; fix the KernelCache's spec");
  }
  const core::ConsumeSpec& c = kc.spec.consume;
  core::GateArgs gate;
  if (c.wait_timeout_seconds < 1) {
    return InvalidArgumentError("spec.consume.waitTimeoutSeconds is below 1");
  }
  gate.root = std::string(core::kDefaultRoot);
  gate.view = std::string(core::kDefaultView);
  gate.mode = c.mode;
  gate.verify = c.verify;
  gate.timeout_seconds = c.wait_timeout_seconds;
  gate.on_timeout = c.on_timeout;
  gate.kernelcache = kc.metadata.name;
  gate.ns = core::EnvRef(core::gate_env::kNamespace);
  gate.node = core::EnvRef(core::gate_env::kNodeName);
  gate.resolve_url = resolve_url;
  return gate;
}

// Read-only in every mode: a serving pod never writes a published cache
// (SharedReadWrite is deprecated and behaves as Shared; the gate builds a
// local view that takes new entries).
bool ReadOnlyCache(core::ConsumeMode /*mode*/) { return true; }

// Fields are written as the API server stores them (false booleans
// omitted), so a reinvocation finds them equal.
Json CacheMount(core::ConsumeMode mode) {
  Json m = {{"name", kCacheVolume}, {"mountPath", std::string(core::kDefaultRoot)}};
  if (ReadOnlyCache(mode)) m["readOnly"] = true;
  return m;
}

Json RunMount() { return {{"name", kRunVolume}, {"mountPath", std::string(core::kRunDir)}}; }

// `writable_for_harvest`: the miss watcher mounts it writable for the
// inbox (spec.harvest Merge); every other mount of it stays read-only.
Json CacheVolume(const core::KernelCache& kc, core::ConsumeMode mode, bool writable_for_harvest) {
  Json pvc = {{"claimName", core::ClaimName(kc)}};
  if (ReadOnlyCache(mode) && !writable_for_harvest) pvc["readOnly"] = true;
  return {{"name", kCacheVolume}, {"persistentVolumeClaim", std::move(pvc)}};
}

Json RunVolume() { return {{"name", kRunVolume}, {"emptyDir", Json::object()}}; }

// nvidia.com/gpu of one container (limits, else requests) as a count, with
// the value as written; 0 when absent or unreadable.
std::pair<int64_t, Json> GpuCount(const Json& container) {
  const Json& res = Object(container, "resources");
  for (const char* part : {"limits", "requests"}) {
    const Json* v = Field(Object(res, part), "nvidia.com/gpu");
    if (v == nullptr) continue;
    if (v->is_number_integer() && !v->is_number_unsigned() && v->get<int64_t>() > 0) {
      return {v->get<int64_t>(), *v};
    }
    if (v->is_number_unsigned() && v->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      return {static_cast<int64_t>(v->get<uint64_t>()), *v};
    }
    if (v->is_string()) {
      auto n = api::ParseQuantityBytes(v->get<std::string>());
      if (n.ok() && *n > 0) return {*n, *v};
    }
  }
  return {0, Json()};
}

MutationResult Unchanged(const Json& pod, std::string why) {
  MutationResult r;
  r.pod = pod;
  r.skipped = std::move(why);
  return r;
}

}  // namespace

std::string PodDisplayName(const Json& pod) {
  const api::ObjectMeta meta = api::MetaOf(pod);
  if (!meta.name.empty()) return "pod " + meta.name;
  if (!meta.generate_name.empty()) return "pod " + meta.generate_name + " (generateName)";
  return "pod (unnamed)";
}

// The downward API path of the parity annotation (KC_PARITY of the gate).
constexpr char kParityFieldPath[] = "metadata.annotations['kernelcache.io/parity-mismatch']";
static_assert(std::string_view(kParityFieldPath).find(kAnnotationParity) != std::string_view::npos);

Json BuildGateContainer(const Json& pod, const core::KernelCache& kc, const core::GateArgs& gate,
                        const InjectSettings& settings) {
  auto field_ref = [](const char* name, const char* path) {
    return Json{{"name", name},
                {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", path}}}}}};
  };
  Json env = Json::array({field_ref(core::gate_env::kNamespace, "metadata.namespace"),
                          field_ref(core::gate_env::kNodeName, "spec.nodeName"),
                          field_ref(core::gate_env::kParity, kParityFieldPath)});
  Json resources = {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}},
                    {"limits", {{"memory", "1Gi"}}}};
  if (gate.verify == core::Level::kLoadTest) {
    int64_t best = 0;
    Json best_value;
    const Json* containers = Field(Object(pod, "spec"), "containers");
    if (containers != nullptr && containers->is_array()) {
      for (const Json& app : *containers) {
        auto [n, value] = GpuCount(app);
        if (n > best) {
          best = n;
          best_value = value;
        }
      }
    }
    if (best > 0) {
      resources["limits"]["nvidia.com/gpu"] = best_value;
      resources["requests"]["nvidia.com/gpu"] = best_value;
    }
  }
  return {{"name", kGateName},
          {"image", settings.initwarm_image},
          {"imagePullPolicy", settings.image_pull_policy},
          {"command", Json::array({"initwarm"})},
          {"args", core::GateArgv(gate)},
          {"env", std::move(env)},
          {"resources", std::move(resources)},
          {"volumeMounts", Json::array({CacheMount(gate.mode), RunMount()})},
          {"securityContext", core::ModelPodSecurity(kc.spec, Object(pod, "spec")).container},
          {"terminationMessagePath", "/dev/termination-log"},
          {"terminationMessagePolicy", "FallbackToLogsOnError"}};
}

MutationResult Mutate(const Json& pod, const std::string& ns,
                      const std::vector<core::KernelCache>& kernelcaches,
                      const InjectSettings& settings) {
  if (!pod.is_object()) return Unchanged(pod, "the object is not a JSON object");
  Selection selection = SelectKernelCache(pod, ns, kernelcaches, settings);
  if (selection.kc == nullptr) {
    MutationResult r = Unchanged(pod, std::move(selection.skipped));
    r.events = std::move(selection.events);
    r.warnings = std::move(selection.warnings);
    return r;
  }
  const core::KernelCache& kc = *selection.kc;
  const std::string pod_name = PodDisplayName(pod);
  const std::string kc_ns = kc.metadata.namespace_.empty() ? ns : kc.metadata.namespace_;
  if (std::string why = ShapeProblem(pod); !why.empty()) {
    return Unchanged(pod, "cannot inject into this pod: " + why);
  }
  const auto gate_args = GateArgsOf(kc, settings.resolve_url);
  if (!gate_args.ok()) {
    const std::string why = gate_args.status().message();
    MutationResult r = Unchanged(pod, "KernelCache " + kc.metadata.name + ": " + why);
    r.events.push_back({kc_ns, kc.metadata.name, "InvalidSpec",
                        pod_name + " was admitted without the cache gate: " + why});
    r.warnings.push_back("kernelcache: not injected: " + why);
    return r;
  }

  MutationResult r;
  r.kernelcache = kc.metadata.name;
  Json out = pod;
  Json& spec = out["spec"];
  std::vector<std::string>& conflicts = r.conflicts;
  // The miss watcher, when the pod asks for one; under spec.harvest Merge
  // (with a resolve URL to report to) it harvests into the inbox.
  const auto watch = MissWatchInterval(pod);
  const bool merge = watch.ok() && watch->has_value() && !gate_args->resolve_url.empty() &&
                     kc.spec.harvest.mode == core::HarvestMode::kMerge;
  const std::string refused =
      merge ? HarvestRefusal(Object(pod, "spec"), settings.miss_watcher_uid) : "";
  const bool harvest = merge && refused.empty();
  if (!refused.empty()) {
    r.warnings.push_back("kernelcache: the miss watcher reports but does not harvest: " + refused);
    r.events.push_back({kc_ns, kc.metadata.name, kReasonHarvestRefused,
                        pod_name + " in namespace " + ns +
                            ": the miss watcher reports but does not harvest: " + refused});
  }
  InjectVolumes(spec, {CacheVolume(kc, gate_args->mode, harvest), RunVolume()}, conflicts);
  // App containers: mounts and the cache-view environment.
  Json& containers = spec["containers"];
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const std::string cname = ContainerName(containers[ci], ci);
    InjectMounts(containers[ci], cname, {CacheMount(gate_args->mode), RunMount()}, conflicts);
    InjectEnv(containers[ci], cname, core::CacheViewEnv(), conflicts);
  }
  // The cache group as a supplemental group of the pod (docs/permissions.md),
  // so every container, whatever its uid, may read the cache; the pod's own
  // groups are kept.
  InjectSupplementalGroups(
      spec, core::ModelPodSecurity(kc.spec, Object(pod, "spec")).supplemental_groups);
  const Json gate = BuildGateContainer(pod, kc, *gate_args, settings);
  InjectGate(spec, gate, conflicts);
  if (!watch.ok()) {
    r.warnings.push_back("kernelcache: " + watch.status().message() +
                         "; the miss watcher was not added");
  } else if (watch->has_value()) {
    std::optional<WatcherHarvest> inbox;
    if (!gate_args->resolve_url.empty()) InjectVolumes(spec, {MissTokenVolume()}, conflicts);
    if (harvest) {
      const core::HarvestCaps caps = core::HarvestCapsOf(kc.spec.harvest);
      inbox = WatcherHarvest{kCacheVolume, caps.max_files_per_pod,
                             std::to_string(caps.max_bytes_per_pod)};
    }
    const std::string report_url = gate_args->resolve_url.empty() ? ""
                                   : settings.misses_url.empty()  ? gate_args->resolve_url
                                                                  : settings.misses_url;
    InjectMissWatcher(
        spec,
        BuildMissWatcher(gate, core::MissWatcherSecurity(kc.spec, settings.miss_watcher_uid),
                         **watch, report_url, inbox),
        conflicts);
  }
  // The consumer label: the operator's gate reports select pods by it.
  if (!out.contains("metadata") || out["metadata"].is_null()) out["metadata"] = Json::object();
  Json& metadata = out["metadata"];
  InjectConsumerLabel(metadata, kc.metadata.name, conflicts);
  InjectAnnotations(metadata, kc.metadata.name, std::string(core::ConsumeModeName(gate_args->mode)),
                    settings.injector_version, conflicts);
  // Parity: a pod that runs another image or cache-affecting env than the
  // warmup compiles what the cache lacks; say so instead of staying silent.
  std::optional<core::ServingContainer> server;
  if (kc.spec.warmup.server) {
    if (auto c = core::ServingContainerOf(*kc.spec.warmup.server); c.ok()) server = *c;
  }
  const auto gaps =
      ParityGaps(Object(pod, "spec"), core::RuntimeFactsFor(kc.spec), server ? &*server : nullptr);
  if (gaps.empty()) {
    metadata["annotations"].erase(kAnnotationParity);
  } else {
    const std::string text = ParityText(gaps);
    metadata["annotations"][kAnnotationParity] = text;
    r.warnings.push_back("kernelcache: the pod differs from what KernelCache " + kc.metadata.name +
                         " warmed, so it compiles what the cache lacks: " + text);
    r.events.push_back(
        {kc_ns, kc.metadata.name, kReasonParity,
         pod_name + " in namespace " + ns + " differs from what was warmed: " + text});
  }
  for (const std::string& conflict : conflicts) {
    r.events.push_back({kc_ns, kc.metadata.name, kReasonConflict,
                        pod_name + " in namespace " + ns + ": " + conflict});
  }
  if (!conflicts.empty()) {
    r.warnings.push_back("kernelcache: " + std::to_string(conflicts.size()) +
                         " injection conflict(s), see annotation " + kAnnotationConflicts);
  }
  DropCreatedEmptyLists(pod, out["spec"]);
  r.patch = Diff(pod, out);
  r.pod = std::move(out);
  return r;
}

}  // namespace kc::webhook
