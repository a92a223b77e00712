// Which KernelCache(s) an informer event concerns: the controller's
// mapping from a watched object to the work-queue keys ("<ns>/<name>") it
// enqueues. Pure: objects in, keys out; missing or ill-typed fields give no
// key, never an exception.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/store.h"

namespace kc::op {

// A Job or warmup Pod: its label kernelcache.io/name, in its namespace.
std::optional<std::string> OwnerKey(const kube::Json& obj);
// A gated model Pod: its label kernelcache.io/consumer, in its namespace;
// none when the label is empty.
std::optional<std::string> ConsumerKey(const kube::Json& pod);
// A PersistentVolumeClaim: its KernelCache ownerReferences, then every
// KernelCache of `kernelcaches` in its namespace whose
// spec.storage.existingClaim names it.
std::vector<std::string> PvcKeys(const kube::Json& pvc,
                                 const std::vector<kube::Json>& kernelcaches);
// A KernelCache's spec.nodeSelector (string values only).
std::map<std::string, std::string> NodeSelectorOf(const kube::Json& kc);

}  // namespace kc::op
