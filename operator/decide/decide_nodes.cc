#include "operator/decide/decide_nodes.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "operator/decide/eligibility.h"

namespace kc::op::decide {

namespace {

ConditionVerdict WarmupFits(const NodeGroups& out, int64_t gpus_needed) {
  std::vector<std::string> too_small, unhostable;
  for (const auto& [id, g] : out.groups) {
    too_small.insert(too_small.end(), g.too_small.begin(), g.too_small.end());
    if (g.eligible.empty() && !g.too_small.empty()) {
      unhostable.push_back(id + " (" + std::to_string(g.nodes) + " node(s), at most " +
                           std::to_string(g.most_gpus) + " allocatable GPU(s))");
    }
  }
  const std::string needs = "a warmup needs " + std::to_string(gpus_needed) + " GPU(s) on one node";
  if (too_small.empty()) return {true, "Fits", needs + "; every node has them"};
  if (!unhostable.empty()) {
    return {false, "NoNodeFits",
            needs + "; no node of fingerprint(s) " + ListSome(unhostable) +
                " has them: their pods wait for a cache (onTimeout StartCold pods start "
                "cold); add nodes with enough GPUs or lower the template's GPU count"};
  }
  return {true, "SomeNodesTooSmall",
          needs + "; warmups avoid " + std::to_string(too_small.size()) +
              " node(s) with fewer: " + ListSome(too_small)};
}

}  // namespace

NodeGroups GroupNodes(const core::KernelCacheSpec& spec, const std::vector<NodeView>& nodes,
                      const api::Condition* prev_missing, const api::Condition* prev_fits) {
  NodeGroups out;
  const core::RuntimeFacts runtime = core::RuntimeFactsFor(spec);
  std::vector<std::string> missing;                          // "gpu-07 (missing label ...)"
  std::vector<std::pair<core::NodeFacts, std::string>> ids;  // facts -> fingerprint id
  const int64_t gpus_needed = core::WarmupGpus(spec);
  std::vector<LabelSet> seen_label_sets;  // eligible nodes' fingerprint labels, any group
  for (const auto& n : nodes) {
    const NodeEligibility eligibility = EligibilityOf(n, spec, gpus_needed);
    if (!eligibility.selected) continue;
    const StatusOr<core::NodeFacts>& facts = n.labels.Facts();
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
      // Interned strings: a pool's nodes share a few sets, compared cheaply.
      // Equal fingerprint labels mean equal facts, so a set not seen in any
      // group is new to this one.
      const LabelSet& labels = n.labels.FingerprintLabels();
      if (std::find(seen_label_sets.begin(), seen_label_sets.end(), labels) ==
          seen_label_sets.end()) {
        seen_label_sets.push_back(labels);
        g.label_sets.push_back(labels.ToMap());
      }
    } else {
      g.ineligible.push_back(n.name + " (" + eligibility.reason + ")");
      if (eligibility.too_few_gpus) g.too_small.push_back(n.name);
    }
    g.most_gpus = std::max(g.most_gpus, n.gpu_allocatable);
  }
  out.warmup_fits = WarmupFits(out, gpus_needed);
  if (out.warmup_fits.reason != "Fits" &&
      (prev_fits == nullptr || prev_fits->message != out.warmup_fits.message)) {
    out.effects.Event("Warning", "WarmupDoesNotFit", out.warmup_fits.message);
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
