#include "operator/controller/cache_transforms.h"

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "operator/decide/pod_parts.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

Json Metadata(bool annotations) {
  Json m = {{"name", true},
            {"namespace", true},
            {"uid", true},
            {"resourceVersion", true},
            {"generation", true},
            {"creationTimestamp", true},
            {"deletionTimestamp", true},
            {"finalizers", true},
            {"labels", true},
            {"ownerReferences", true}};
  if (annotations) m["annotations"] = true;
  return m;
}

Json Mask(Json metadata, Json spec, Json status) {
  Json m = {{"apiVersion", true}, {"kind", true}, {"metadata", std::move(metadata)}};
  if (!spec.is_null()) m["spec"] = std::move(spec);
  if (!status.is_null()) m["status"] = std::move(status);
  return m;
}

kube::ObjectTransform Projection(Json mask) {
  return [mask = std::move(mask)](const Json& object) { return kube::Project(object, mask); };
}

// Whether `object` has an owner reference of kind Job (only such pods' parts
// are read: PodViewFromJson).
bool OwnedByAJob(const Json& object) {
  const Json* refs = nullptr;
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object()) {
    auto it = object["metadata"].find("ownerReferences");
    if (it != object["metadata"].end() && it->is_array()) refs = &*it;
  }
  if (refs == nullptr) return false;
  for (const Json& r : *refs) {
    if (r.is_object() && r.value("kind", Json()) == "Job") return true;
  }
  return false;
}

// The projection, plus the parts of `pod_spec_of(object)` kept under
// spec[kPodPartsKey] (pod_parts.h) when `keep_parts(object)`.
template <typename PodSpecOf, typename KeepParts>
kube::ObjectTransform ProjectionWithParts(Json mask, PodSpecOf pod_spec_of, KeepParts keep_parts) {
  return [mask = std::move(mask), pod_spec_of, keep_parts](const Json& object) {
    Json out = kube::Project(object, mask);
    if (!keep_parts(object) || !out.is_object()) return out;
    // Kept parts stay (a transform applied twice gives what once does).
    Json parts = Json::object();
    static const Json kNone;
    const Json& spec = object.is_object() ? object.value("spec", kNone) : kNone;
    for (const auto& [k, v] : KeptPodParts(spec, pod_spec_of(object))) parts[k] = v;
    if (!out["spec"].is_object()) out["spec"] = Json::object();
    out["spec"][kPodPartsKey] = std::move(parts);
    return out;
  };
}

const Json& Path(const Json& j, std::initializer_list<const char*> keys) {
  static const Json kNull;
  const Json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object()) return kNull;
    auto it = at->find(k);
    if (it == at->end()) return kNull;
    at = &*it;
  }
  return *at;
}

}  // namespace

kube::ObjectTransform CacheTransformFor(const kube::Resource& r) {
  if (r.group.empty() && r.resource == "nodes") {
    return Projection(
        Mask(Metadata(false), {{"unschedulable", true}, {"taints", true}},
             {{"allocatable", true}, {"conditions", {{"type", true}, {"status", true}}}}));
  }
  if (r.group.empty() && r.resource == "pods") {
    return ProjectionWithParts(
        Mask(Metadata(false), {{"nodeName", true}, {"shareProcessNamespace", true}},
             {{"phase", true},
              {"conditions", true},
              {"initContainerStatuses", true},
              {"containerStatuses", true}}),
        [](const Json& pod) -> const Json& { return Path(pod, {"spec"}); }, OwnedByAJob);
  }
  if (r.group == "batch" && r.resource == "jobs") {
    return ProjectionWithParts(
        Mask(Metadata(true), Json(), true),
        [](const Json& job) -> const Json& {
          return Path(job, {"spec", "template", "spec"});
        },
        [](const Json&) { return true; });
  }
  if (r.group.empty() && r.resource == "persistentvolumeclaims") {
    return Projection(Mask(Metadata(false),
                           {{"accessModes", true},
                            {"storageClassName", true},
                            {"volumeName", true},
                            {"resources", true}},
                           {{"phase", true}, {"accessModes", true}, {"capacity", true}}));
  }
  if (r.group == "apps" && (r.resource == "deployments" || r.resource == "statefulsets")) {
    return Projection(Mask(Metadata(false), {{"template", true}}, Json()));
  }
  return kube::WithoutManagedFields;
}

kube::ObjectTransform CacheKeepFor(const kube::Resource& r) {
  if (r.group.empty() && r.resource == "nodes") {
    return Projection({{"metadata", {{"name", true}, {"resourceVersion", true}}}});
  }
  return {};
}

}  // namespace kc::op
