#include "operator/decide/decide_nodes.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "operator/decide/eligibility.h"

namespace kc::op::decide {

NodeGroups GroupNodes(const core::KernelCacheSpec& spec, const std::vector<NodeView>& nodes,
                      const api::Condition* prev_missing) {
  NodeGroups out;
  const core::RuntimeFacts runtime = core::RuntimeFactsFor(spec);
  std::vector<std::string> missing;                          // "gpu-07 (missing label ...)"
  std::vector<std::pair<core::NodeFacts, std::string>> ids;  // facts -> fingerprint id
  for (const auto& n : nodes) {
    const NodeEligibility eligibility = EligibilityOf(n, spec);
    if (!eligibility.selected) continue;
    auto facts = core::NodeFactsFromLabels(n.labels);
    if (!facts.ok()) {
      missing.push_back(n.name + " (" + facts.status().message() + ")");
      // One Event per node the condition names (the first kMaxListed; the
      // rest are counted there), once: not when the last status named it.
      if (missing.size() <= kMaxListed &&
          (prev_missing == nullptr || prev_missing->status != "True" ||
           prev_missing->message.find(n.name + " (") == std::string::npos)) {
        out.effects.Event("Warning", "NodeMissingLabels",
                          "node " + n.name + " is not warmed: " + facts.status().message() +
                              "; is GPU Feature Discovery running on it?");
      }
      continue;
    }
    // A pool's nodes share a few fingerprints: hash each distinct NodeFacts
    // once (sha256 of the canonical JSON was most of a reconcile's CPU at
    // 1,000 nodes), not once per node.
    auto known =
        std::find_if(ids.begin(), ids.end(), [&](const auto& fid) { return fid.first == *facts; });
    if (known == ids.end()) {
      ids.emplace_back(*facts, core::ComputeFingerprint(*facts, runtime).id);
      known = std::prev(ids.end());
    }
    const std::string& id = known->second;
    Group& g = out.groups[id];
    g.facts = *facts;
    ++g.nodes;
    g.names.push_back(n.name);
    out.node_fp[n.name] = id;
    if (eligibility.eligible()) {
      g.eligible.push_back(n.name);
      auto labels = core::FingerprintLabels(n.labels);
      if (std::find(g.label_sets.begin(), g.label_sets.end(), labels) == g.label_sets.end()) {
        g.label_sets.push_back(std::move(labels));
      }
    } else {
      g.ineligible.push_back(n.name + " (" + eligibility.reason + ")");
    }
  }
  if (missing.empty()) {
    out.missing_labels = {false, "AllLabelled",
                          "every matching node carries the GPU Feature Discovery labels"};
  } else {
    out.missing_labels = {
        true, "MissingGpuLabels",
        std::to_string(missing.size()) +
            " node(s) lack GPU Feature Discovery labels and get no cache: " + ListSome(missing)};
  }
  return out;
}

}  // namespace kc::op::decide
