// Which nodes a KernelCache keeps a cache for and which of them may run a
// warmup now: the one answer Decide (warmup placement), resolve (what a
// gate is told) and the reconciler/controller (which nodes to observe) use,
// so pods and warmups can never disagree about a node.
// Pure.
#pragma once

#include <map>
#include <string>

#include "core/api_types.h"
#include "operator/decide.h"

namespace kc::op {

// True when `labels` carry every key=value of `node_selector` (a Pod's
// spec.nodeSelector semantics: an empty selector matches every node). The
// one nodeSelector match of the tree.
bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const std::map<std::string, std::string>& labels);

struct NodeEligibility {
  bool selected = false;  // the node matches spec.nodeSelector
  // Why a selected node may not run a warmup now ("cordoned", "NotReady",
  // "GPU driver upgrade: <state>", "no allocatable nvidia.com/gpu"); "" when
  // it may. Empty when not selected.
  std::string reason;
  bool eligible() const { return selected && reason.empty(); }
};

NodeEligibility EligibilityOf(const NodeView& node, const core::KernelCacheSpec& spec);

}  // namespace kc::op
