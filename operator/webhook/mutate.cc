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
#include "core/validate.h"
#include "operator/webhook/json_patch.h"

namespace kc::webhook {
namespace {

using api::Field;
using api::Object;
using api::Read;

std::string NameOf(const Json& item, size_t index) {
  std::string name;
  Read(item, "name", &name);
  return name.empty() ? "#" + std::to_string(index) : name;
}

// True when every field of `ours` is in `theirs` with the same value
// (objects: a subset of keys; arrays of objects: each of ours covered by a
// distinct element of theirs, in order; other arrays: same length, element
// by element). The API server adds to what a webhook injected before it
// reinvokes it: defaults (terminationMessagePath, fieldRef apiVersion, ...)
// and, through the ServiceAccount admission plugin run again, the token
// mount in every container, our gate included. None of these may make our
// own item look like the user's.
bool Covers(const Json& theirs, const Json& ours) {
  if (ours.is_object()) {
    if (!theirs.is_object()) return false;
    for (const auto& [k, v] : ours.items()) {
      auto it = theirs.find(k);
      if (it == theirs.end() || !Covers(*it, v)) return false;
    }
    return true;
  }
  if (ours.is_array()) {
    if (!theirs.is_array()) return false;
    const bool objects =
        std::all_of(ours.begin(), ours.end(), [](const Json& e) { return e.is_object(); });
    if (!objects || ours.empty()) {
      if (theirs.size() != ours.size()) return false;
      for (size_t i = 0; i < ours.size(); ++i) {
        if (!Covers(theirs[i], ours[i])) return false;
      }
      return true;
    }
    size_t t = 0;  // ours in order within theirs, extra items of theirs between
    for (const Json& o : ours) {
      while (t < theirs.size() && !Covers(theirs[t], o)) ++t;
      if (t == theirs.size()) return false;
      ++t;
    }
    return true;
  }
  return theirs == ours;
}

// Index of the element of `list` whose `key` field equals `value`.
std::optional<size_t> FindBy(const Json& list, const char* key, const std::string& value) {
  if (!list.is_array()) return std::nullopt;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json* v = Field(list[i], key);
    if (v != nullptr && v->is_string() && v->get<std::string>() == value) return i;
  }
  return std::nullopt;
}

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

// Why a KernelCache's consume settings cannot be handed to `initwarm
// wait`; "" when they can.
std::string ConsumeProblem(const core::ConsumeSpec& c) {
  if (c.mode != core::consume_mode::kCopy && c.mode != core::consume_mode::kShared &&
      c.mode != core::consume_mode::kSharedReadWrite) {
    return "spec.consume.mode \"" + c.mode + "\" is not Copy, Shared or SharedReadWrite";
  }
  if (!core::ParseLevel(c.verify).ok()) {
    return "spec.consume.verify \"" + c.verify + "\" is not a validation level";
  }
  if (c.on_timeout != "Fail" && c.on_timeout != "StartCold") {
    return "spec.consume.onTimeout \"" + c.on_timeout + "\" is not Fail or StartCold";
  }
  if (c.wait_timeout_seconds < 1) return "spec.consume.waitTimeoutSeconds is below 1";
  return "";
}

// Read-only in every mode: a serving pod never writes a published cache
// (SharedReadWrite is deprecated and behaves as Shared; the gate builds a
// local view that takes new entries).
bool ReadOnlyCache(const core::KernelCache&) { return true; }

// Fields are written as the API server stores them (false booleans
// omitted), so a reinvocation finds them equal.
Json CacheMount(const core::KernelCache& kc) {
  Json m = {{"name", kCacheVolume}, {"mountPath", std::string(core::kDefaultRoot)}};
  if (ReadOnlyCache(kc)) m["readOnly"] = true;
  return m;
}

Json RunMount() { return {{"name", kRunVolume}, {"mountPath", std::string(core::kRunDir)}}; }

Json CacheVolume(const core::KernelCache& kc) {
  Json pvc = {{"claimName", core::ClaimName(kc)}};
  if (ReadOnlyCache(kc)) pvc["readOnly"] = true;
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

Json BuildGateContainer(const Json& pod, const core::KernelCache& kc, const std::string& ns,
                        const InjectSettings& settings) {
  const core::ConsumeSpec& c = kc.spec.consume;
  core::GateArgs gate;
  gate.root = std::string(core::kDefaultRoot);
  gate.view = std::string(core::kDefaultView);
  gate.mode = c.mode;
  gate.verify = c.verify;
  gate.timeout_seconds = c.wait_timeout_seconds;
  gate.on_timeout = c.on_timeout;
  gate.kernelcache = kc.metadata.name;
  gate.ns = core::EnvRef(core::gate_env::kNamespace);
  gate.node = core::EnvRef(core::gate_env::kNodeName);
  gate.resolve_url = settings.resolve_url;
  auto field_ref = [](const char* name, const char* path) {
    return Json{{"name", name},
                {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", path}}}}}};
  };
  Json env = Json::array({field_ref(core::gate_env::kNamespace, "metadata.namespace"),
                          field_ref(core::gate_env::kNodeName, "spec.nodeName")});
  Json resources = {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}},
                    {"limits", {{"memory", "1Gi"}}}};
  if (c.verify == "LoadTest") {
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
          {"volumeMounts", Json::array({CacheMount(kc), RunMount()})},
          {"securityContext", core::ModelPodSecurity(kc.spec, Object(pod, "spec")).container},
          {"terminationMessagePath", "/dev/termination-log"},
          {"terminationMessagePolicy", "FallbackToLogsOnError"}};
}

MutationResult Mutate(const Json& pod, const std::string& ns,
                      const std::vector<core::KernelCache>& kernelcaches,
                      const InjectSettings& settings) {
  if (!pod.is_object()) return Unchanged(pod, "the object is not a JSON object");
  const api::ObjectMeta meta = api::MetaOf(pod);
  const auto& labels = meta.labels;
  const auto& annotations = meta.annotations;
  if (!settings.operator_namespace.empty() && ns == settings.operator_namespace) {
    return Unchanged(pod, "namespace " + ns + " is the operator's");
  }
  auto opted_out = [](const std::map<std::string, std::string>& m) {
    auto it = m.find(kAnnotationInject);
    return it != m.end() && it->second == "false";
  };
  if (opted_out(labels) || opted_out(annotations)) {
    return Unchanged(pod, "the pod says kernelcache.io/inject: \"false\"");
  }

  std::vector<const core::KernelCache*> matches;
  for (const core::KernelCache& kc : kernelcaches) {
    if (kc.metadata.deletion_timestamp) continue;
    if (!kc.metadata.namespace_.empty() && kc.metadata.namespace_ != ns) continue;
    if (kc.spec.pod_selector.empty()) continue;
    if (api::SelectorMatches(kc.spec.pod_selector, labels)) matches.push_back(&kc);
  }
  const std::string pod_name = PodDisplayName(pod);
  if (matches.empty()) return Unchanged(pod, "no KernelCache selects this pod");
  if (matches.size() > 1) {
    std::vector<std::string> names;
    for (const auto* kc : matches) names.push_back(kc->metadata.name);
    std::sort(names.begin(), names.end());
    const std::string list = StrJoin(names, ", ");
    MutationResult r = Unchanged(pod, "KernelCaches " + list + " all select this pod");
    const std::string message = pod_name + " in namespace " + ns +
                                " is selected by several KernelCaches (" + list +
                                "); it was admitted without the cache gate. Make their "
                                "spec.podSelector disjoint.";
    for (const auto* kc : matches) {
      r.events.push_back({kc->metadata.namespace_.empty() ? ns : kc->metadata.namespace_,
                          kc->metadata.name, kReasonAmbiguous, message});
    }
    r.warnings.push_back("kernelcache: not injected: KernelCaches " + list +
                         " all select this pod; make their podSelectors disjoint");
    return r;
  }
  const core::KernelCache& kc = *matches[0];
  const std::string kc_ns = kc.metadata.namespace_.empty() ? ns : kc.metadata.namespace_;
  if (std::string why = ShapeProblem(pod); !why.empty()) {
    return Unchanged(pod, "cannot inject into this pod: " + why);
  }
  if (std::string why = ConsumeProblem(kc.spec.consume); !why.empty()) {
    MutationResult r = Unchanged(pod, "KernelCache " + kc.metadata.name + ": " + why);
    r.events.push_back({kc_ns, kc.metadata.name, "InvalidConsumeSpec",
                        pod_name + " was admitted without the cache gate: " + why});
    r.warnings.push_back("kernelcache: not injected: " + why);
    return r;
  }

  MutationResult r;
  r.kernelcache = kc.metadata.name;
  Json out = pod;
  Json& spec = out["spec"];
  std::vector<std::string>& conflicts = r.conflicts;

  // Volumes.
  if (!spec.contains("volumes") || spec["volumes"].is_null()) spec["volumes"] = Json::array();
  for (const Json& ours : {CacheVolume(kc), RunVolume()}) {
    const std::string name = ours["name"].get<std::string>();
    if (auto i = FindBy(spec["volumes"], "name", name)) {
      if (!Covers(spec["volumes"][*i], ours)) {
        conflicts.push_back("volume " + name + " differs from the injected one (kept the pod's)");
      }
    } else {
      spec["volumes"].push_back(ours);
    }
  }

  // App containers: mounts and the cache-view environment.
  const Json mounts = Json::array({CacheMount(kc), RunMount()});
  Json& containers = spec["containers"];
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    Json& c = containers[ci];
    const std::string cname = NameOf(c, ci);
    if (!c.contains("volumeMounts") || c["volumeMounts"].is_null()) {
      c["volumeMounts"] = Json::array();
    }
    for (const Json& m : mounts) {
      const std::string path = m["mountPath"].get<std::string>();
      if (auto i = FindBy(c["volumeMounts"], "mountPath", path)) {
        if (!Covers(c["volumeMounts"][*i], m)) {
          conflicts.push_back("container " + cname + ": mount at " + path +
                              " differs from the injected one (kept the container's)");
        }
      } else {
        c["volumeMounts"].push_back(m);
      }
    }
    if (!c.contains("env") || c["env"].is_null()) c["env"] = Json::array();
    for (const auto& [name, value] : core::CacheViewEnv()) {
      const Json ours = {{"name", name}, {"value", value}};
      if (auto i = FindBy(c["env"], "name", name)) {
        if (!Covers(c["env"][*i], ours)) {
          conflicts.push_back("container " + cname + ": env " + name +
                              " differs from the cache view's (kept the container's)");
        }
      } else {
        c["env"].push_back(ours);
      }
    }
  }

  // The cache group as a supplemental group of the pod (docs/permissions.md),
  // so every container, whatever its uid, may read the cache; the pod's own
  // groups are kept.
  const std::vector<int64_t> groups =
      core::ModelPodSecurity(kc.spec, Object(pod, "spec")).supplemental_groups;
  if (!groups.empty()) {
    if (!spec.contains("securityContext") || !spec["securityContext"].is_object()) {
      spec["securityContext"] = Json::object();
    }
    spec["securityContext"]["supplementalGroups"] = groups;
  }

  // The gate, first.
  const Json gate = BuildGateContainer(pod, kc, ns, settings);
  if (!spec.contains("initContainers") || spec["initContainers"].is_null()) {
    spec["initContainers"] = Json::array();
  }
  Json& inits = spec["initContainers"];
  if (auto i = FindBy(inits, "name", kGateName)) {
    if (!Covers(inits[*i], gate)) {
      conflicts.push_back(std::string("init container ") + kGateName +
                          " differs from the injected one (kept the pod's)");
    }
  } else {
    inits.insert(inits.begin(), gate);
  }

  // The consumer label: the operator's gate reports select pods by it.
  // A different value the pod already has is kept, as a conflict.
  if (!out.contains("metadata") || out["metadata"].is_null()) out["metadata"] = Json::object();
  Json& m = out["metadata"];
  if (!m.contains("labels") || m["labels"].is_null()) m["labels"] = Json::object();
  Json& l = m["labels"];
  if (const Json* v = Field(l, core::kConsumerLabel); v == nullptr) {
    l[core::kConsumerLabel] = kc.metadata.name;
  } else if (!v->is_string() || v->get<std::string>() != kc.metadata.name) {
    conflicts.push_back(std::string("label ") + core::kConsumerLabel +
                        " differs from the KernelCache's name (kept the pod's)");
  }

  // Annotations.
  if (!m.contains("annotations") || m["annotations"].is_null()) m["annotations"] = Json::object();
  Json& a = m["annotations"];
  a[kAnnotationInjected] = kc.metadata.name;
  a[kAnnotationMode] = kc.spec.consume.mode;
  a[kAnnotationVersion] = settings.injector_version;
  if (conflicts.empty()) {
    a.erase(kAnnotationConflicts);
  } else {
    a[kAnnotationConflicts] = StrJoin(conflicts, "; ");
    for (const std::string& conflict : conflicts) {
      r.events.push_back({kc_ns, kc.metadata.name, kReasonConflict,
                          pod_name + " in namespace " + ns + ": " + conflict});
    }
    r.warnings.push_back("kernelcache: " + std::to_string(conflicts.size()) +
                         " injection conflict(s), see annotation " + kAnnotationConflicts);
  }
  // Lists we created but left empty (a conflict kept everything) go again.
  for (const char* key : {"volumes", "initContainers"}) {
    if (!pod["spec"].contains(key) && spec[key].empty()) spec.erase(key);
  }
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const Json& before = pod["spec"]["containers"][ci];
    for (const char* key : {"env", "volumeMounts"}) {
      if (!before.contains(key) && containers[ci][key].empty()) containers[ci].erase(key);
    }
  }
  r.patch = Diff(pod, out);
  r.pod = std::move(out);
  return r;
}

}  // namespace kc::webhook
