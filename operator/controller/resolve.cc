#include "operator/controller/resolve.h"

#include <algorithm>

#include "base/duration.h"
#include "core/fingerprint.h"
#include "core/gate_report.h"
#include "core/resolve_answer.h"
#include "operator/decide/eligibility.h"
#include "operator/decide/unschedulable.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

ResolveResponse Error(int code, std::string msg) { return {code, Json{{"error", std::move(msg)}}}; }

std::string SelectorText(const std::map<std::string, std::string>& sel) {
  std::string s;
  for (const auto& [k, v] : sel) {
    if (!s.empty()) s += ",";
    s.append(k).append("=").append(v);
  }
  return s;
}

std::string ListSome(const std::vector<std::string>& items, size_t max = 3) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < max; ++i) {
    if (i) s += ", ";
    s += items[i];
  }
  if (items.size() > max) s += " and " + std::to_string(items.size() - max) + " more";
  return s;
}

// The newest pod of `job`.
const PodView* NewestPod(const std::vector<PodView>& pods, const std::string& job) {
  const PodView* best = nullptr;
  for (const PodView& p : pods) {
    if (p.job_name != job) continue;
    if (best == nullptr || p.created > best->created) best = &p;
  }
  return best;
}

std::chrono::seconds Since(Time now, Time then) {
  return std::chrono::duration_cast<std::chrono::seconds>(now - then);
}

// Why nothing warms `fp` now, from the nodes carrying it.
std::string NoWarmupReason(const std::string& fp, const std::vector<NodeView>& nodes,
                           const core::KernelCacheSpec& spec) {
  const core::RuntimeFacts runtime = core::RuntimeFactsFor(spec);
  std::vector<std::string> ineligible;
  bool any_eligible = false;
  const int64_t gpus_needed = core::WarmupGpus(spec);
  for (const NodeView& n : nodes) {
    const StatusOr<core::NodeFacts>& facts = n.labels.Facts();
    if (!facts.ok() || core::ComputeFingerprint(*facts, runtime).id != fp) continue;
    const NodeEligibility e = EligibilityOf(n, spec, gpus_needed);
    if (!e.selected) continue;
    if (e.eligible()) {
      any_eligible = true;
    } else {
      ineligible.push_back(n.name + " (" + e.reason + ")");
    }
  }
  if (any_eligible) return "";
  if (ineligible.empty()) return "no eligible node";
  return "no eligible node: " + ListSome(ineligible);
}

std::string WarmingMessage(const core::FingerprintStatus& fs, const ResolveInputs& in, Time now) {
  const std::string job = fs.job;
  if (job.empty()) return "warmup for fingerprint " + fs.id + " starting";
  const JobView* jv = nullptr;
  for (const JobView& j : in.jobs) {
    if (j.name == job) jv = &j;
  }
  const PodView* pod = NewestPod(in.pods, job);
  if (pod != nullptr && !pod->node_name.empty()) {
    return "warmup Job " + job + " running for " +
           FormatDuration(Since(now, pod->created), /*days=*/true) + " on node " + pod->node_name;
  }
  if (pod != nullptr) {
    return "warmup Job " + job + " waiting " +
           FormatDuration(Since(now, pod->created), /*days=*/true) +
           " for a free GPU of this fingerprint";
  }
  if (jv != nullptr) {
    return "warmup Job " + job + " created " +
           FormatDuration(Since(now, jv->created), /*days=*/true) + " ago, no pod yet";
  }
  return "warmup Job " + job + " starting";
}

// What the gate is told of fingerprint `fs` in each state; an Absent one
// with a kept cache is said as Ready (else Pending) in `state`.
std::string StateMessage(const core::FingerprintStatus& fs, const core::KernelCacheSpec& spec,
                         const ResolveInputs& in, Time now, core::ResolveState* state) {
  const std::string& fp = fs.id;
  std::string msg;
  if (fs.state == core::fp_state::kAbsent) {
    // This node carries it, so its nodes are back and the operator has not
    // reconciled yet. The sealed cache was kept: serve it (the gate checks
    // READY against the digest). Said as Ready or Pending, the states every
    // gate version knows.
    const bool sealed = !fs.manifest_digest.empty();
    *state = sealed ? core::ResolveState::kReady : core::ResolveState::kPending;
    msg = "fingerprint " + fp + " was absent";
    if (fs.absent_since) msg += " since " + api::FormatTime(*fs.absent_since);
    msg += sealed ? " (its nodes went away); its kept cache is ready"
                  : " (its nodes went away) and has no cache yet; the operator warms it";
  } else if (fs.state == core::fp_state::kReady) {
    msg = "cache ready";
    if (fs.ready_at) msg += " since " + api::FormatTime(*fs.ready_at);
    msg += " (" + std::to_string(fs.files) + " files, " + api::FormatBytes(fs.bytes) + ")";
  } else if (fs.state == core::fp_state::kWarming) {
    msg = WarmingMessage(fs, in, now);
  } else if (fs.state == core::fp_state::kDegraded) {
    // A gate found the Ready cache bad: tell new pods why they wait.
    msg = "the cache of fingerprint " + fp + " was found bad and is being re-warmed";
    if (!fs.last_failure.empty()) msg += " (" + fs.last_failure + ")";
    msg += "; " + WarmingMessage(fs, in, now);
  } else if (fs.state == core::fp_state::kFailed) {
    msg = "warmup of fingerprint " + fp + " failed " + std::to_string(fs.failures) + " time(s)";
    if (!fs.last_failure.empty()) msg += ": " + fs.last_failure;
    msg += "; the operator retries with backoff";
  } else if (fs.state == core::fp_state::kStale) {
    msg = "fingerprint " + fp + " is stale";
    if (fs.stale_since) msg += " since " + api::FormatTime(*fs.stale_since);
    msg += ": no eligible node carries it";
  } else {
    const std::string why = NoWarmupReason(fp, in.nodes, spec);
    msg = why.empty() ? "warmup for fingerprint " + fp + " pending"
                      : "no warmup scheduled for fingerprint " + fp + ": " + why;
  }
  return msg;
}

}  // namespace

ResolveResponse Resolve(const ResolveQuery& q, const ResolveInputs& in, Time now) {
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"namespace", &q.ns},
                                    {"kernelcache", &q.kernelcache},
                                    {"node", &q.node}}) {
    if (value->empty()) return Error(400, std::string("missing query parameter \"") + name + "\"");
  }
  if (!in.kc) return Error(404, "kernelcache " + q.ns + "/" + q.kernelcache + " not found");
  if (!in.node) return Error(404, "node " + q.node + " not found");
  const core::KernelCache& kc = *in.kc;

  // The answer; encoded by core/resolve_answer.h (initwarm decodes it).
  core::ResolveAnswer a;
  auto answer = [&a] {
    return ResolveResponse{200, Json::parse(core::ResolveAnswerToJson(a), nullptr, false)};
  };
  // Answers waiting cannot change are final: the gate acts on its
  // onTimeout at once instead of waiting it out.
  auto final_answer = [&](std::string_view reason, std::string message) {
    a.state = core::ResolveState::kUnknown;
    a.final = true;
    a.reason = std::string(reason);
    a.message = std::move(message);
    return answer();
  };
  const api::Condition* invalid =
      api::FindCondition(kc.status.conditions, core::condition::kInvalidSpec);
  const bool spec_invalid =
      !in.parse_errors.empty() || (invalid != nullptr && invalid->status == "True");
  const StatusOr<core::NodeFacts>& facts = in.node->labels.Facts();
  if (facts.ok()) {
    a.fingerprint = core::ComputeFingerprint(*facts, core::RuntimeFactsFor(kc.spec)).id;
    a.directory = "v1/" + a.fingerprint;
    a.node = *facts;
  }
  if (spec_invalid) {
    return final_answer(
        core::gate_reason::kInvalidSpec,
        "KernelCache " + q.ns + "/" + q.kernelcache + " has an invalid spec: " +
            (!in.parse_errors.empty() ? in.parse_errors.front() : invalid->message));
  }
  if (!NodeSelectorMatches(kc.spec.node_selector, in.node->labels)) {
    return final_answer(core::gate_reason::kNodeNotSelected,
                        "node " + q.node + " does not match the KernelCache's nodeSelector (" +
                            SelectorText(kc.spec.node_selector) + "); no cache is kept for it");
  }
  if (!facts.ok()) {
    return final_answer(core::gate_reason::kNodeHasNoFingerprint,
                        "node " + q.node + " has no GPU fingerprint: " + facts.status().message() +
                            "; is GPU Feature Discovery running on it?");
  }
  const std::string fp = a.fingerprint;

  const core::FingerprintStatus* fs = nullptr;
  for (const auto& f : kc.status.fingerprints) {
    if (f.id == fp) fs = &f;
  }
  if (fs == nullptr) {
    a.state = core::ResolveState::kPending;
    const std::string why = NoWarmupReason(fp, in.nodes, kc.spec);
    a.message = why.empty() ? "fingerprint " + fp + " not yet recorded by the operator"
                            : "no warmup scheduled for fingerprint " + fp + ": " + why;
    return answer();
  }

  // Absent is answered below; a state the wire does not know (a status
  // written by a newer operator) is said as Pending, which every gate knows.
  auto state = core::ParseResolveState(fs->state);
  a.state = state.ok() ? *state : core::ResolveState::kPending;
  a.manifest_digest = fs->manifest_digest;
  std::string msg = StateMessage(*fs, kc.spec, in, now, &a.state);
  // A warmup that cannot be scheduled (a full GPU pool): StartCold pods go
  // now instead of waiting out their timeout; Fail pods keep waiting.
  if (a.state != core::ResolveState::kReady) {
    if (auto u = FindUnschedulableWarmup(fs->job, in.pods, now, in.unschedulable_grace)) {
      a.start_cold = true;
      a.reason = std::string(core::gate_reason::kWarmupUnschedulable);
      msg += "; warmup pod " + u->pod + " of Job " + fs->job + " has been unschedulable for " +
             FormatDuration(u->for_how_long, /*days=*/true) +
             (u->message.empty() ? "" : ": " + u->message) +
             " (onTimeout StartCold pods start cold now; the cache is warmed once a GPU is "
             "free)";
    }
  }
  a.message = msg;
  return answer();
}

}  // namespace kc::op
