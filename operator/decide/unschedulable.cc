#include "operator/decide/unschedulable.h"

namespace kc::op {

std::optional<UnschedulableWarmup> FindUnschedulableWarmup(const std::string& job,
                                                           const std::vector<PodView>& pods,
                                                           Time now, std::chrono::seconds grace,
                                                           std::optional<Time>* wake) {
  if (job.empty()) return std::nullopt;
  const PodView* newest = nullptr;
  for (const PodView& p : pods) {
    if (p.job_name != job) continue;
    if (newest == nullptr || p.created > newest->created) newest = &p;
  }
  if (newest == nullptr || !newest->node_name.empty() || !newest->unschedulable_since) {
    return std::nullopt;
  }
  if (newest->phase == "Succeeded" || newest->phase == "Failed") return std::nullopt;
  const Time since = *newest->unschedulable_since;
  if (now < since + grace) {
    if (wake != nullptr) *wake = since + grace;
    return std::nullopt;
  }
  UnschedulableWarmup u;
  u.pod = newest->name;
  u.for_how_long = std::chrono::duration_cast<std::chrono::seconds>(now - since);
  u.message = newest->unschedulable_message;
  return u;
}

}  // namespace kc::op
