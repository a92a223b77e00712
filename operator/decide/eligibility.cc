#include "operator/decide/eligibility.h"

#include <algorithm>
#include <string>

#include "core/fingerprint.h"

namespace kc::op {

bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const std::map<std::string, std::string>& labels) {
  return std::all_of(node_selector.begin(), node_selector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

bool NodeSelectorMatches(const std::map<std::string, std::string>& node_selector,
                         const LabelSet& labels) {
  return std::all_of(node_selector.begin(), node_selector.end(),
                     [&](const auto& kv) { return labels.Has(kv.first, kv.second); });
}

NodeEligibility EligibilityOf(const NodeView& n, const core::KernelCacheSpec& spec,
                              int64_t gpus_needed) {
  NodeEligibility e;
  e.selected = NodeSelectorMatches(spec.node_selector, n.labels);
  if (!e.selected) return e;
  if (n.unschedulable) {
    e.reason = "cordoned";
  } else if (!n.ready) {
    e.reason = "NotReady";
  } else if (const std::string* state = n.labels.Find(core::labels::kDriverUpgradeState);
             state != nullptr && !state->empty() && *state != "upgrade-done") {
    e.reason = "GPU driver upgrade: " + *state;
  } else if (n.gpu_allocatable <= 0) {
    e.reason = "no allocatable nvidia.com/gpu";
  } else if (n.gpu_allocatable < gpus_needed) {
    e.reason = std::to_string(n.gpu_allocatable) +
               " allocatable nvidia.com/gpu, the warmup needs " + std::to_string(gpus_needed);
    e.too_few_gpus = true;
  }
  return e;
}

namespace {
// The labels Decide reads from a selected node: its fingerprint's; on a
// node whose GPU labels are incomplete (no fingerprint yet), every
// nvidia.com/ label and the arch, since any of them may complete it.
std::map<std::string, std::string> DecisionLabels(const LabelSet& labels) {
  std::map<std::string, std::string> out = labels.FingerprintLabels().ToMap();
  if (out.empty()) {
    for (const auto& [k, v] : labels) {
      if (k.starts_with("nvidia.com/") || k == core::labels::kArch) out.emplace(k, v);
    }
  }
  if (const std::string* state = labels.Find(core::labels::kDriverUpgradeState); state != nullptr) {
    out.emplace(core::labels::kDriverUpgradeState, *state);
  }
  return out;
}
}  // namespace

bool NodeChangeConcerns(const std::map<std::string, std::string>& node_selector,
                        const NodeView& before, const NodeView& after) {
  const bool was = NodeSelectorMatches(node_selector, before.labels);
  const bool is = NodeSelectorMatches(node_selector, after.labels);
  if (was != is) return true;
  if (!is) return false;
  return before.ready != after.ready || before.unschedulable != after.unschedulable ||
         before.gpu_allocatable != after.gpu_allocatable ||
         DecisionLabels(before.labels) != DecisionLabels(after.labels);
}

}  // namespace kc::op
