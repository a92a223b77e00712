// Which nodes a KernelCache keeps a cache for and which of them may run a
// warmup now: the one answer Decide (warmup placement), resolve (what a
// gate is told) and the reconciler/controller (which nodes to observe) use,
// so pods and warmups can never disagree about a node.
// Pure.
#pragma once

#include <map>
#include <string>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op {

// True when `labels` carry every key=value of `node_selector` (a Pod's
// spec.nodeSelector semantics: an empty selector matches every node). The
// one nodeSelector match of the tree.
bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const std::map<std::string, std::string>& labels);
bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const LabelSet& labels);

struct NodeEligibility {
  bool selected = false;  // the node matches spec.nodeSelector
  // Why a selected node may not run a warmup now ("cordoned", "NotReady",
  // "GPU driver upgrade: <state>", "no allocatable nvidia.com/gpu", "2
  // allocatable nvidia.com/gpu, the warmup needs 4"); "" when
  // it may. Empty when not selected.
  std::string reason;
  bool too_few_gpus = false;  // the reason is the GPU count alone
  bool eligible() const { return selected && reason.empty(); }
};

// `gpus_needed`: core::WarmupGpus(spec), computed once by the caller (a
// server form's template is parsed for it); a node with fewer allocatable
// GPUs cannot host the warmup ("2 allocatable nvidia.com/gpu, the warmup
// needs 4").
NodeEligibility EligibilityOf(const NodeView& node, const core::KernelCacheSpec& spec,
                              int64_t gpus_needed);

// Whether an update of a node (before -> after) can change the decision of
// a KernelCache with this nodeSelector: the node enters or leaves the
// selection, or, selected, a thing Decide reads changed: Ready, cordon,
// allocatable GPUs, a fingerprint label (core::FingerprintLabels) or the
// driver-upgrade state. Other labels (the beta.kubernetes.io/* the node
// controller adds, GFD's timestamp, NFD's features) concern no KernelCache
// that does not select on them; at 1,000 nodes the node controller's label
// pass alone queued every KernelCache of a pool 9 times a second.
bool NodeChangeConcerns(const std::map<std::string, std::string>& node_selector,
                        const NodeView& before, const NodeView& after);

}  // namespace kc::op
