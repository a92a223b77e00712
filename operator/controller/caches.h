// Caches: read access to the informer stores the reconciler and the resolve
// endpoint work from (never the API server). With a namespace list there is
// one store per namespace for each namespaced kind; lookups search them all.
// Nodes are read as NodeViews from the NodeIndex the Node informer keeps.
// Tests fill kube::Store and NodeIndex objects directly.
// Thread-safe (the stores are).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kube/store.h"
#include "operator/controller/node_index.h"

namespace kc::op {

class MissLedger;

struct Caches {
  std::vector<const kube::Store*> kernelcaches;
  const NodeIndex* nodes = nullptr;
  std::vector<const kube::Store*> jobs;
  std::vector<const kube::Store*> pods;
  std::vector<const kube::Store*> pvcs;
  // Gated model pods (label kernelcache.io/consumer), for their gate reports.
  std::vector<const kube::Store*> gated_pods;
  // What gated pods' miss watchers reported (the miss channel); may be null.
  const MissLedger* misses = nullptr;
  // Deployments and StatefulSets (metadata and spec.template only): the
  // pod templates server warmups name in spec.warmup.server.workloadRef.
  std::vector<const kube::Store*> deployments{};
  std::vector<const kube::Store*> statefulsets{};

  // By "<ns>/<name>".
  static std::optional<kube::Json> Get(const std::vector<const kube::Store*>& stores,
                                       const std::string& key);
  static std::vector<kube::Json> All(const std::vector<const kube::Store*>& stores);
  // The label keys the stores index (kube::InformerOptions::indexed_labels):
  // a warmup Job's and pod's KernelCache, a gated pod's. ByLabel of another
  // key scans the stores.
  static std::vector<std::string> IndexedLabels();
  // Objects in namespace `ns` carrying label key=value (kube::kLabelIndex).
  static std::vector<kube::Json> ByLabel(const std::vector<const kube::Store*>& stores,
                                         const std::string& ns, const std::string& key,
                                         const std::string& value);
};

}  // namespace kc::op
