#include "operator/webhook/mutate_steps.h"

#include <algorithm>

#include "api/json_read.h"
#include "api/meta.h"
#include "base/strings.h"
#include "core/gate_report.h"
#include "operator/webhook/mutate.h"

namespace kc::webhook {
namespace {

using api::Field;
using api::Read;

// Index of the element of `list` whose `key` field equals `value`.
std::optional<size_t> FindBy(const Json& list, const char* key, const std::string& value) {
  if (!list.is_array()) return std::nullopt;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json* v = Field(list[i], key);
    if (v != nullptr && v->is_string() && v->get<std::string>() == value) return i;
  }
  return std::nullopt;
}

// j[key], made an empty `kind` (object or array) when absent or null.
Json& Ensure(Json& j, const char* key, const Json& empty) {
  if (!j.contains(key) || j[key].is_null()) j[key] = empty;
  return j[key];
}

// Adds `ours` to `list` (appended, or first) unless an element's `key`
// equals ours; one that does but does not cover ours is a conflict.
void AddUnlessPresent(Json& list, const char* key, const Json& ours, bool first,
                      const std::string& conflict, std::vector<std::string>& conflicts) {
  const std::string value = ours[key].get<std::string>();
  if (auto i = FindBy(list, key, value)) {
    if (!CoversItem(list[*i], ours)) conflicts.push_back(conflict);
  } else if (first) {
    list.insert(list.begin(), ours);
  } else {
    list.push_back(ours);
  }
}

bool OptedOut(const std::map<std::string, std::string>& m) {
  auto it = m.find(kAnnotationInject);
  return it != m.end() && it->second == "false";
}

}  // namespace

bool CoversItem(const Json& theirs, const Json& ours) {
  if (ours.is_object()) {
    if (!theirs.is_object()) return false;
    for (const auto& [k, v] : ours.items()) {
      auto it = theirs.find(k);
      if (it == theirs.end() || !CoversItem(*it, v)) return false;
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
        if (!CoversItem(theirs[i], ours[i])) return false;
      }
      return true;
    }
    size_t t = 0;  // ours in order within theirs, extra items of theirs between
    for (const Json& o : ours) {
      while (t < theirs.size() && !CoversItem(theirs[t], o)) ++t;
      if (t == theirs.size()) return false;
      ++t;
    }
    return true;
  }
  return theirs == ours;
}

std::string ContainerName(const Json& container, size_t index) {
  std::string name;
  Read(container, "name", &name);
  return name.empty() ? "#" + std::to_string(index) : name;
}

Selection SelectKernelCache(const Json& pod, const std::string& ns,
                            const std::vector<core::KernelCache>& kernelcaches,
                            const InjectSettings& settings) {
  Selection s;
  const api::ObjectMeta meta = api::MetaOf(pod);
  if (!settings.operator_namespace.empty() && ns == settings.operator_namespace) {
    s.skipped = "namespace " + ns + " is the operator's";
    return s;
  }
  if (OptedOut(meta.labels) || OptedOut(meta.annotations)) {
    s.skipped = "the pod says kernelcache.io/inject: \"false\"";
    return s;
  }
  std::vector<const core::KernelCache*> matches;
  for (const core::KernelCache& kc : kernelcaches) {
    if (kc.metadata.deletion_timestamp) continue;
    if (!kc.metadata.namespace_.empty() && kc.metadata.namespace_ != ns) continue;
    if (kc.spec.pod_selector.empty()) continue;
    if (api::SelectorMatches(kc.spec.pod_selector, meta.labels)) matches.push_back(&kc);
  }
  if (matches.empty()) {
    s.skipped = "no KernelCache selects this pod";
    return s;
  }
  if (matches.size() == 1) {
    s.kc = matches[0];
    return s;
  }
  std::vector<std::string> names;
  for (const auto* kc : matches) names.push_back(kc->metadata.name);
  std::sort(names.begin(), names.end());
  const std::string list = StrJoin(names, ", ");
  s.skipped = "KernelCaches " + list + " all select this pod";
  const std::string message = PodDisplayName(pod) + " in namespace " + ns +
                              " is selected by several KernelCaches (" + list +
                              "); it was admitted without the cache gate. Make their "
                              "spec.podSelector disjoint.";
  for (const auto* kc : matches) {
    s.events.push_back({kc->metadata.namespace_.empty() ? ns : kc->metadata.namespace_,
                        kc->metadata.name, kReasonAmbiguous, message});
  }
  s.warnings.push_back("kernelcache: not injected: KernelCaches " + list +
                       " all select this pod; make their podSelectors disjoint");
  return s;
}

void InjectVolumes(Json& spec, const std::vector<Json>& volumes,
                   std::vector<std::string>& conflicts) {
  Json& list = Ensure(spec, "volumes", Json::array());
  for (const Json& ours : volumes) {
    AddUnlessPresent(list, "name", ours, /*first=*/false,
                     "volume " + ours["name"].get<std::string>() +
                         " differs from the injected one (kept the pod's)",
                     conflicts);
  }
}

void InjectMounts(Json& container, const std::string& container_name,
                  const std::vector<Json>& mounts, std::vector<std::string>& conflicts) {
  Json& list = Ensure(container, "volumeMounts", Json::array());
  for (const Json& m : mounts) {
    AddUnlessPresent(list, "mountPath", m, /*first=*/false,
                     "container " + container_name + ": mount at " +
                         m["mountPath"].get<std::string>() +
                         " differs from the injected one (kept the container's)",
                     conflicts);
  }
}

void InjectEnv(Json& container, const std::string& container_name,
               const std::vector<std::pair<std::string, std::string>>& env,
               std::vector<std::string>& conflicts) {
  Json& list = Ensure(container, "env", Json::array());
  for (const auto& [name, value] : env) {
    AddUnlessPresent(list, "name", {{"name", name}, {"value", value}}, /*first=*/false,
                     "container " + container_name + ": env " + name +
                         " differs from the cache view's (kept the container's)",
                     conflicts);
  }
}

void InjectSupplementalGroups(Json& spec, const std::vector<int64_t>& groups) {
  if (groups.empty()) return;
  if (!spec.contains("securityContext") || !spec["securityContext"].is_object()) {
    spec["securityContext"] = Json::object();
  }
  spec["securityContext"]["supplementalGroups"] = groups;
}

void InjectGate(Json& spec, const Json& gate, std::vector<std::string>& conflicts) {
  AddUnlessPresent(Ensure(spec, "initContainers", Json::array()), "name", gate, /*first=*/true,
                   "init container " + gate["name"].get<std::string>() +
                       " differs from the injected one (kept the pod's)",
                   conflicts);
}

void InjectMissWatcher(Json& spec, const Json& watcher, std::vector<std::string>& conflicts) {
  AddUnlessPresent(Ensure(spec, "initContainers", Json::array()), "name", watcher, /*first=*/false,
                   "init container " + watcher["name"].get<std::string>() +
                       " differs from the injected one (kept the pod's)",
                   conflicts);
}

void InjectConsumerLabel(Json& metadata, const std::string& kc_name,
                         std::vector<std::string>& conflicts) {
  Json& labels = Ensure(metadata, "labels", Json::object());
  if (const Json* v = Field(labels, core::kConsumerLabel); v == nullptr) {
    labels[core::kConsumerLabel] = kc_name;
  } else if (!v->is_string() || v->get<std::string>() != kc_name) {
    conflicts.push_back(std::string("label ") + core::kConsumerLabel +
                        " differs from the KernelCache's name (kept the pod's)");
  }
}

void InjectAnnotations(Json& metadata, const std::string& kc_name, const std::string& mode,
                       const std::string& version, const std::vector<std::string>& conflicts) {
  Json& a = Ensure(metadata, "annotations", Json::object());
  a[kAnnotationInjected] = kc_name;
  a[kAnnotationMode] = mode;
  a[kAnnotationVersion] = version;
  if (conflicts.empty()) {
    a.erase(kAnnotationConflicts);
  } else {
    a[kAnnotationConflicts] = StrJoin(conflicts, "; ");
  }
}

void DropCreatedEmptyLists(const Json& before, Json& spec) {
  const Json& before_spec = before["spec"];
  for (const char* key : {"volumes", "initContainers"}) {
    if (!before_spec.contains(key) && spec.contains(key) && spec[key].empty()) spec.erase(key);
  }
  Json& containers = spec["containers"];
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const Json& c = before_spec["containers"][ci];
    for (const char* key : {"env", "volumeMounts"}) {
      if (!c.contains(key) && containers[ci].contains(key) && containers[ci][key].empty()) {
        containers[ci].erase(key);
      }
    }
  }
}

}  // namespace kc::webhook
