#include "kube/resource.h"

#include <string>

namespace kc::kube {

std::string ResourcePath(const Resource& r, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string path = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += ns;
  }
  path += "/";
  path += r.resource;
  if (!name.empty()) {
    path += "/";
    path += name;
    if (!subresource.empty()) {
      path += "/";
      path += subresource;
    }
  }
  return path;
}

namespace resources {
const Resource kNodes{"", "v1", "nodes", "Node", false};
const Resource kPods{"", "v1", "pods", "Pod", true};
const Resource kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                                       true};
const Resource kPersistentVolumes{"", "v1", "persistentvolumes", "PersistentVolume", false};
const Resource kJobs{"batch", "v1", "jobs", "Job", true};
const Resource kDeployments{"apps", "v1", "deployments", "Deployment", true};
const Resource kStatefulSets{"apps", "v1", "statefulsets", "StatefulSet", true};
const Resource kSecrets{"", "v1", "secrets", "Secret", true};
const Resource kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const Resource kEvents{"", "v1", "events", "Event", true};
const Resource kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
const Resource kNamespaces{"", "v1", "namespaces", "Namespace", false};
const Resource kMutatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                              "mutatingwebhookconfigurations",
                                              "MutatingWebhookConfiguration", false};
const Resource kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                "validatingwebhookconfigurations",
                                                "ValidatingWebhookConfiguration", false};
const Resource kStorageClasses{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};
const Resource kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false};
const Resource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                          "CustomResourceDefinition", false};
}  // namespace resources

}  // namespace kc::kube
