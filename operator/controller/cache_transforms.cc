#include "operator/controller/cache_transforms.h"

#include <nlohmann/json.hpp>

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

}  // namespace

kube::ObjectTransform CacheTransformFor(const kube::Resource& r) {
  if (r.group.empty() && r.resource == "nodes") {
    return Projection(
        Mask(Metadata(false), {{"unschedulable", true}, {"taints", true}},
             {{"allocatable", true}, {"conditions", {{"type", true}, {"status", true}}}}));
  }
  if (r.group.empty() && r.resource == "pods") {
    return Projection(Mask(Metadata(false), {{"nodeName", true}, {"shareProcessNamespace", true}},
                           {{"phase", true},
                            {"conditions", true},
                            {"initContainerStatuses", true},
                            {"containerStatuses", true}}));
  }
  if (r.group == "batch" && r.resource == "jobs") {
    return Projection(Mask(Metadata(true), Json(), true));
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
