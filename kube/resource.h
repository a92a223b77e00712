// Resource: where a kind of object lives in the API (group/version/resource).
//
// Generic: any custom resource is described the same way as the built-in
// ones below. Paths are built by ResourcePath(); the client uses nothing else.
#pragma once

#include <string>
#include <string_view>

namespace kc::kube {

struct Resource {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "configmaps"
  std::string kind;      // "ConfigMap"
  bool namespaced = true;

  // "v1" or "batch/v1": the apiVersion field of objects of this resource.
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// "/api/v1/namespaces/<ns>/configmaps[/<name>[/<subresource>]]". An empty
// namespace on a namespaced resource means all namespaces (list/watch only).
std::string ResourcePath(const Resource& r, std::string_view ns, std::string_view name = {},
                         std::string_view subresource = {});

namespace resources {
extern const Resource kNodes;
extern const Resource kPods;
extern const Resource kPersistentVolumeClaims;
extern const Resource kPersistentVolumes;
extern const Resource kJobs;
extern const Resource kDeployments;
extern const Resource kStatefulSets;
extern const Resource kSecrets;
extern const Resource kConfigMaps;
extern const Resource kEvents;
extern const Resource kLeases;
extern const Resource kNamespaces;
extern const Resource kMutatingWebhookConfigurations;
extern const Resource kValidatingWebhookConfigurations;
extern const Resource kStorageClasses;
extern const Resource kTokenReviews;
extern const Resource kCustomResourceDefinitions;
}  // namespace resources

}  // namespace kc::kube
