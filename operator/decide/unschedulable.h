// Is a fingerprint's warmup stuck unschedulable? The one decision both
// Decide (condition WarmupUnschedulable, Event) and /v1/resolve (startCold
// for onTimeout StartCold pods) make, from the warmup Job's pods. Pure.
//
// A warmup is unschedulable when the newest pod of its Job is not bound to
// a node, is not finished, and has carried PodScheduled=False with reason
// Unschedulable (the scheduler found no node: every GPU of the pool taken,
// e.g. by model pods waiting in their gate) for at least `grace`. Before
// that, *wake is set to when it will be (so the caller requeues then).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "operator/decide/types.h"

namespace kc::op {

struct UnschedulableWarmup {
  std::string pod;
  std::chrono::seconds for_how_long{0};
  std::string
      message;  // the scheduler's ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")
};

std::optional<UnschedulableWarmup> FindUnschedulableWarmup(const std::string& job,
                                                           const std::vector<PodView>& pods,
                                                           Time now, std::chrono::seconds grace,
                                                           std::optional<Time>* wake = nullptr);

}  // namespace kc::op
