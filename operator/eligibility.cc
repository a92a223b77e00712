#include "operator/eligibility.h"

#include <algorithm>

#include "core/fingerprint.h"

namespace kc::op {

bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const std::map<std::string, std::string>& labels) {
  return std::all_of(node_selector.begin(), node_selector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

NodeEligibility EligibilityOf(const NodeView& n, const core::KernelCacheSpec& spec) {
  NodeEligibility e;
  e.selected = NodeSelectorMatches(spec.node_selector, n.labels);
  if (!e.selected) return e;
  if (n.unschedulable) {
    e.reason = "cordoned";
  } else if (!n.ready) {
    e.reason = "NotReady";
  } else if (auto it = n.labels.find(std::string(core::labels::kDriverUpgradeState));
             it != n.labels.end() && !it->second.empty() && it->second != "upgrade-done") {
    e.reason = "GPU driver upgrade: " + it->second;
  } else if (n.gpu_allocatable <= 0) {
    e.reason = "no allocatable nvidia.com/gpu";
  }
  return e;
}

}  // namespace kc::op
