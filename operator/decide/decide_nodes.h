// Decide's node step: the nodes spec.nodeSelector selects, grouped by the
// fingerprint they carry (core::ComputeFingerprint of their GPU Feature
// Discovery labels and the spec's runtime), each split into nodes that may
// run a warmup now and those that may not (operator/decide/eligibility.h), and
// condition NodesMissingLabels for selected nodes without complete labels.
// Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/fingerprint.h"
#include "operator/decide/decide_step.h"

namespace kc::op::decide {

// The nodes carrying one fingerprint.
struct Group {
  core::NodeFacts facts;
  int32_t nodes = 0;
  std::vector<std::map<std::string, std::string>> label_sets;  // eligible nodes', distinct
  std::vector<std::string> eligible;
  std::vector<std::string> ineligible;  // "gpu-07 (cordoned)"
  std::vector<std::string> names;       // every node carrying it
  std::vector<std::string> too_small;   // nodes with fewer allocatable GPUs than a warmup needs
  int64_t most_gpus = 0;                // the most allocatable GPUs of one of its nodes
};

struct NodeGroups {
  std::map<std::string, Group> groups;         // fingerprint id -> its nodes
  std::map<std::string, std::string> node_fp;  // node name -> the fingerprint it carries
  ConditionVerdict missing_labels;             // NodesMissingLabels
  ConditionVerdict warmup_fits;                // WarmupFits
  Effects effects;                             // NodeMissingLabels, WarmupDoesNotFit Events
};

// `prev_missing`: the previous NodesMissingLabels (a node it named already
// gets no second Event). `prev_fits`: the previous WarmupFits (a Warning
// Event WarmupDoesNotFit when its message changes to name nodes too small
// for the warmup).
// WarmupFits: True Fits (every node has the GPUs), True SomeNodesTooSmall
// (each fingerprint still has one that does; the rest are named), False
// NoNodeFits (a fingerprint none of whose nodes can host its warmup: its
// pods wait, StartCold ones start cold as for any warmup that cannot run).
NodeGroups GroupNodes(const core::KernelCacheSpec& spec, const std::vector<NodeView>& nodes,
                      const api::Condition* prev_missing, const api::Condition* prev_fits);

}  // namespace kc::op::decide
