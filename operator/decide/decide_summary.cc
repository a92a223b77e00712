#include "operator/decide/decide_summary.h"

#include "base/strings.h"

namespace kc::op::decide {
namespace {

namespace st = core::fp_state;

std::optional<ConditionVerdict> Unschedulable(const Findings& f, const api::Condition* prev,
                                              Effects& effects) {
  if (f.unschedulable.empty()) {
    if (prev == nullptr) return std::nullopt;
    return ConditionVerdict{false, "Scheduled", "every warmup pod is scheduled"};
  }
  std::vector<std::string> what;
  for (const auto& [id, msg] : f.unschedulable) {
    what.push_back(msg);
    const bool said = prev != nullptr && prev->status == "True" &&
                      prev->message.find("fingerprint " + id + " (") != std::string::npos;
    if (!said) {
      effects.Event("Warning", "WarmupUnschedulable",
                    msg +
                        "; model pods waiting in their gate may hold every GPU of the pool: give "
                        "warmup pods a PriorityClass that may preempt them (the chart's "
                        "kernelcache-warmup, --warmup-priority-class) or free a GPU; onTimeout "
                        "StartCold pods start cold meanwhile");
    }
  }
  return ConditionVerdict{true, "Unschedulable",
                          std::to_string(what.size()) +
                              " warmup(s) cannot be scheduled: " + StrJoin(what, "; ") +
                              ". onTimeout StartCold pods start cold; Fail pods keep waiting"};
}

}  // namespace

std::string ReadyText(const Summary& s) {
  return std::to_string(s.ready) + "/" + std::to_string(s.total);
}

Summary Summarize(const core::KernelCache& kc,
                  const std::vector<core::FingerprintStatus>& fingerprints,
                  const Findings* findings, const api::Condition* prev_degraded,
                  const api::Condition* prev_unschedulable) {
  Summary s;
  std::vector<std::string> waiting, failed, quarantined;
  for (const auto& f : fingerprints) {
    if (!f.manifest_digest.empty()) s.bytes += f.bytes;
    if (f.nodes == 0) continue;
    ++s.total;
    if (f.state == st::kReady) {
      ++s.ready;
      continue;
    }
    std::string why = f.id + " " + f.state;
    if (f.state == st::kDegraded) {
      why += " (re-warming with Job " + f.job + ")";
      quarantined.push_back(f.id + ": " + f.last_failure);
    } else if (f.state == st::kFailed) {
      why += " (" + f.last_failure + ")";
      failed.push_back(f.id + ": " + f.last_failure);
    } else if (f.state == st::kWarming) {
      why += " (Job " + f.job + ")";
    } else if (findings == nullptr) {
      // the spec is invalid: nothing was grouped, and nothing is said
    } else if (auto g = findings->nodes->groups.find(f.id);
               g != findings->nodes->groups.end() && g->second.label_sets.empty()) {
      why += " (no eligible node: " + ListSome(g->second.ineligible) + ")";
    } else if (!findings->storage_usable) {
      why += " (storage not usable)";
    }
    waiting.push_back(why);
  }
  if (findings == nullptr) return s;

  const std::string ready = ReadyText(s);
  if (s.total == 0) {
    s.ready_condition = {false, "NoNodes",
                         "no node matching spec.nodeSelector carries complete GPU labels"};
  } else if (s.ready == s.total) {
    s.ready_condition = {true, "AllFingerprintsReady", ready + " fingerprints ready"};
  } else {
    s.ready_condition = {false, "FingerprintsNotReady",
                         ready + " fingerprints ready; waiting: " + ListSome(waiting)};
  }
  s.unschedulable = Unschedulable(*findings, prev_unschedulable, s.effects);
  if (!findings->running.empty()) {
    s.warming = {true, "WarmupRunning", "warmup Jobs: " + ListSome(findings->running)};
  } else {
    s.warming = {false, "Idle", "no warmup running"};
  }
  if (findings->max_bytes && s.bytes > *findings->max_bytes) {
    const std::string msg = "caches total " + api::FormatBytes(s.bytes) +
                            ", over spec.retention.maxBytes " + kc.spec.retention.max_bytes +
                            "; too many shapes? Reduce spec.warmup.shapes or raise the limit";
    if (Changed(prev_degraded, true, "ShapeExplosion")) {
      s.effects.Event("Warning", "ShapeExplosion", msg);
    }
    s.degraded = {true, "ShapeExplosion", msg};
  } else if (!quarantined.empty()) {
    s.degraded = {true, "CacheQuarantined",
                  "caches found bad by model pods, being re-warmed: " + ListSome(quarantined)};
  } else if (!failed.empty()) {
    s.degraded = {true, "WarmupFailed",
                  "failed warmups (retried with backoff): " + ListSome(failed)};
  } else if (!findings->storage_usable) {
    s.degraded = {true, "StorageNotReady", findings->storage_message};
  } else {
    s.degraded = {false, "AsExpected", "no problem found"};
  }
  return s;
}

}  // namespace kc::op::decide
