// What the /validate-kernelcaches webhook checks beyond the CRD's schema
// and CEL rules, which see one object at a time:
//   - spec.podSelector must not overlap another KernelCache's in the same
//     namespace (denied, naming the other): a pod both select would get no
//     gate at all (see mutate.h);
//   - the claim (core::ClaimName: spec.storage.existingClaim, or the
//     "<name>-cache" the operator creates) must not be another
//     KernelCache's, unless both use existingClaim and both set
//     spec.storage.shareExistingClaim: true;
//   - spec.storage.storageClassName that no StorageClass and no
//     PersistentVolume has: allowed, with a warning (the claim stays Pending
//     until one does; StorageClassWarning).
// KernelCaches being deleted, and the object's own earlier version (same
// name: an update), are not "another KernelCache".
//
// Overlap is exact: two selectors overlap when some label set satisfies
// both. Requirements on different keys are independent, so they overlap
// unless one key's requirements, pooled from both selectors, contradict:
// the key must exist (matchLabels, In, Exists) and must not (DoesNotExist),
// or the values it may take (matchLabels and each In, intersected) are
// empty once NotIn's values are removed. A key constrained only by NotIn
// (or Exists with NotIn) can always take a fresh value. A selector with an
// unknown operator matches no pod (api::SelectorMatches) and overlaps
// nothing; neither does an empty selector (the CRD forbids it).
// Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "operator/webhook/review.h"

namespace kc::webhook {

// A label set both selectors match, or nullopt when they are disjoint.
std::optional<std::map<std::string, std::string>> SelectorOverlap(const api::LabelSelector& a,
                                                                  const api::LabelSelector& b);

struct KernelCacheVerdict {
  bool allowed = true;
  std::vector<std::string> denials;  // each names the field and the fix
  std::vector<std::string> warnings;
};

// The warning for spec.storage.storageClassName `name`, or nullopt. Only
// where the API server said both that the StorageClass does not exist and
// that no PersistentVolume names it: a static volume of the class binds the
// claim without one, and an unanswered question warns of nothing.
std::optional<std::string> StorageClassWarning(const std::string& name,
                                               const StorageClassFacts& facts);

// `storage_class` is asked only when spec.storage.storageClassName is set.
KernelCacheVerdict ValidateKernelCache(const core::KernelCache& kc,
                                       const std::vector<core::KernelCache>& in_namespace,
                                       const StorageClassLookup& storage_class);

}  // namespace kc::webhook
