// Decide's summary: the counts and sizes of status and the conditions that
// sum the pass up (Ready, Warming, Degraded, WarmupUnschedulable).
// Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/decide/decide_nodes.h"
#include "operator/decide/decide_step.h"

namespace kc::op::decide {

// What the earlier steps found.
struct Findings {
  bool storage_usable = false;
  std::string storage_message;  // StorageReady's message
  const NodeGroups* nodes = nullptr;
  std::vector<std::string> running;                                // warmup Jobs running
  std::vector<std::pair<std::string, std::string>> unschedulable;  // (fingerprint, what)
  std::optional<int64_t> max_bytes;                                // spec.retention.maxBytes
};

struct Summary {
  int32_t total = 0;  // fingerprints some node carries
  int32_t ready = 0;  // of those, Ready
  int64_t bytes = 0;  // every sealed cache
  // Decided only when the spec is valid (findings given); otherwise they
  // keep their last value.
  std::optional<ConditionVerdict> ready_condition, warming, degraded, unschedulable;
  Effects effects;  // ShapeExplosion, WarmupUnschedulable Events
};

// `findings` null: the spec is invalid, counts only. `prev_degraded`,
// `prev_unschedulable`: the last Degraded and WarmupUnschedulable.
Summary Summarize(const core::KernelCache& kc,
                  const std::vector<core::FingerprintStatus>& fingerprints,
                  const Findings* findings, const api::Condition* prev_degraded,
                  const api::Condition* prev_unschedulable);

// "<ready>/<total>"
std::string ReadyText(const Summary& s);

}  // namespace kc::op::decide
