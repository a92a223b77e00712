#include "operator/decide/decide_fingerprint.h"

#include <algorithm>
#include <limits>
#include <set>

#include "base/duration.h"
#include "base/utf8.h"
#include "operator/decide/names.h"
#include "operator/decide/termination_message.h"
#include "operator/decide/unschedulable.h"
#include "operator/decide/warmup_job.h"

namespace kc::op::decide {
namespace {

using core::FingerprintStatus;
namespace st = core::fp_state;

Time Seconds(Time t) { return std::chrono::time_point_cast<seconds>(t); }

// The pod whose seal result speaks for `j`: a Succeeded one first, then the
// newest; `any_pod` says whether `j` has a pod at all.
const PodView* SealPod(const JobView& j, const std::vector<PodView>& pods, bool* any_pod) {
  const PodView* best = nullptr;
  *any_pod = false;
  for (const auto& p : pods) {
    if (!OfJob(p, j)) continue;
    *any_pod = true;
    if (!p.seal_message) continue;
    if (best == nullptr || (p.phase == "Succeeded" && best->phase != "Succeeded") ||
        (p.phase == best->phase && p.created > best->created)) {
      best = &p;
    }
  }
  return best;
}

// "; pod P, which the Job adopted by its labels, does not run its template
// (...)": a stranger's pod, whose result is never read; "" when none.
std::string ImpostorNote(const JobView& j, const std::vector<PodView>& pods) {
  for (const auto& p : pods) {
    if (!OwnedByJob(p, j)) continue;
    const std::string why = TemplateMismatch(p.parts, j.parts);
    if (!why.empty()) {
      return "; pod " + p.name +
             ", which the Job adopted by its labels, does not run its template (" + why +
             "): its result is not read";
    }
  }
  return "";
}

std::string PodFailure(const JobView& j, const std::vector<PodView>& pods) {
  const PodView* latest = nullptr;
  for (const auto& p : pods) {
    if (!OfJob(p, j) || p.failure_summary.empty()) continue;
    if (latest == nullptr || p.created > latest->created) latest = &p;
  }
  if (latest == nullptr) return "";
  return latest->failure_summary +
         (latest->node_name.empty() ? "" : " on node " + latest->node_name);
}

void RecordFailure(Recorded& out, const JobView& j, const std::string& reason,
                   const std::string& event_reason, const Settings& settings, Time now) {
  FingerprintStatus& f = out.status;
  if (f.failures < std::numeric_limits<int32_t>::max()) ++f.failures;
  f.last_failure = TruncateUtf8(reason, 1027);
  f.last_failure_time = Seconds(j.finished.value_or(now));
  f.job_uid = j.uid;
  f.job = j.name;
  const bool kept = f.state == st::kReady;
  if (!kept) SetState(f, st::kFailed, now);
  out.effects.Event(
      "Warning", event_reason,
      "warmup Job " + j.name + " for fingerprint " + f.id + " failed (" +
          std::to_string(f.failures) + " in a row): " + f.last_failure + "; retry in " +
          FormatDuration(Backoff(settings, f.failures)) +
          (kept ? "; the Ready cache sealed at " +
                      (f.ready_at ? api::FormatTime(*f.ready_at) : std::string()) + " stays in use"
                : ""));
}

// The status of a seal's convergence summary; none when the warmup ran no
// passes.
std::optional<core::ConvergenceStatus> ConvergenceStatusOf(
    const std::optional<core::ConvergenceSummary>& s) {
  if (!s) return std::nullopt;
  core::ConvergenceStatus c;
  c.passes = s->passes;
  c.converged = s->converged;
  c.last_pass_entries = static_cast<int64_t>(s->last_entries);
  c.last_pass_autotune = static_cast<int64_t>(s->last_autotune);
  c.message = TruncateUtf8(core::ConvergenceMessage(*s), 1024);
  return c;
}

void RecordSuccess(Recorded& out, const JobView& j, const SealResult& r, const PodView& pod,
                   Time now) {
  FingerprintStatus& f = out.status;
  f.bytes = r.bytes;
  f.files = r.files;
  f.manifest_digest = r.manifest_digest;
  f.ready_at = Seconds(j.finished.value_or(now));
  f.failures = 0;
  f.last_failure.clear();
  f.last_failure_time.reset();
  f.job_uid = j.uid;
  f.job = j.name;
  f.cancelled_job_uids.clear();  // this Job took the lock and seal released it
  const bool was_ready = f.state == st::kReady;
  SetState(f, st::kReady, now);
  f.last_transition_time = f.ready_at;  // a re-warm is a transition to a new cache
  f.convergence = ConvergenceStatusOf(r.convergence);
  out.effects.Event("Normal", was_ready ? "CacheRewarmed" : "CacheReady",
                    "fingerprint " + f.id + " ready: " + api::FormatBytes(r.bytes) + " in " +
                        std::to_string(r.files) + " files, sealed by Job " + j.name +
                        (pod.node_name.empty() ? "" : " on node " + pod.node_name) +
                        (f.convergence ? "; " + f.convergence->message : ""));
  if (f.convergence) {
    out.effects.Event(f.convergence->converged ? "Normal" : "Warning",
                      f.convergence->converged ? "WarmupConverged" : "WarmupNotConverged",
                      "fingerprint " + f.id + ": warmup Job " + j.name + " " +
                          f.convergence->message +
                          (f.convergence->converged
                               ? ""
                               : "; published anyway (spec.warmup.convergence.onNotConverged: "
                                 "Publish): pods will compile these"));
  }
}

}  // namespace

std::vector<std::string> DeadOwners(const FingerprintStatus& f, const std::vector<JobView>& jobs,
                                    const std::string& kc_name) {
  std::set<std::string> dead;
  if (!f.job_uid.empty()) dead.insert(f.job_uid);
  for (const auto& uid : f.cancelled_job_uids) {
    const bool listed =
        std::any_of(jobs.begin(), jobs.end(), [&](const JobView& j) { return j.uid == uid; });
    if (!listed && !uid.empty()) dead.insert(uid);  // deleted in the foreground: no pod left
  }
  for (const auto& j : jobs) {
    if (WarmupOf(j, kc_name, f.id) && !j.uid.empty() && (j.complete || j.failed_condition)) {
      dead.insert(j.uid);
    }
  }
  for (const auto& j : jobs) {
    if (!j.complete && !j.failed_condition) dead.erase(j.uid);  // never a live one
  }
  return {dead.begin(), dead.end()};
}

namespace {

void CreateWarmup(FingerprintStep& out, const Group& g, const std::string& name,
                  const FingerprintInputs& in) {
  FingerprintStatus& f = out.status;
  Action a;
  a.kind = Action::Kind::kCreateJob;
  a.name = name;
  a.object = BuildWarmupJob(in.kc, f.id, g.facts, f.warm_generation, g.label_sets, in.settings,
                            DeadOwners(f, in.jobs, in.kc.metadata.name));
  out.effects.actions.push_back(std::move(a));
  f.job = name;
  if (f.state != st::kReady && f.state != st::kDegraded) SetState(f, st::kWarming, in.now);
  out.running.push_back(name);
  out.effects.Event("Normal", "WarmupStarted",
                    "Job " + name + " warms fingerprint " + Describe(f) + " on one of " +
                        std::to_string(g.eligible.size()) +
                        " eligible node(s): " + ListSome(g.eligible));
}

// A running warmup whose pod the scheduler cannot place (a full GPU pool,
// e.g. every GPU held by model pods waiting in their gate for this cache).
void Unschedulable(FingerprintStep& out, const JobView& job, const FingerprintInputs& in) {
  std::optional<Time> wake;
  auto u =
      FindUnschedulableWarmup(job.name, in.pods, in.now, in.settings.unschedulable_grace, &wake);
  if (wake) out.effects.WakeAt(*wake, in.now);
  if (!u) return;
  const PodView* pod = nullptr;
  for (const auto& p : in.pods) {
    if (p.name == u->pod) pod = &p;
  }
  const std::string since =
      pod != nullptr && pod->unschedulable_since ? api::FormatTime(*pod->unschedulable_since) : "";
  out.unschedulable = "fingerprint " + Describe(out.status) + ": warmup pod " + u->pod +
                      " of Job " + job.name + " unschedulable since " + since +
                      (u->message.empty() ? "" : ": " + u->message);
}

}  // namespace

void FoldNewFingerprint(Effects& seen, Effects& step, int32_t nodes) {
  auto reason_is = [](std::string_view r) {
    return [r](const Action& a) { return a.event_reason == r; };
  };
  auto fresh = std::find_if(seen.events.begin(), seen.events.end(), reason_is("NewFingerprint"));
  auto started = std::find_if(step.events.begin(), step.events.end(), reason_is("WarmupStarted"));
  if (fresh == seen.events.end() || started == step.events.end()) return;
  started->event_message = TruncateUtf8(
      "new fingerprint on " + std::to_string(nodes) + " node(s): " + started->event_message, 1000);
  seen.events.erase(fresh);
}

FingerprintUpdate SeenOnNodes(const FingerprintStatus* prev, const std::string& id, const Group& g,
                              Time now) {
  FingerprintUpdate out;
  FingerprintStatus& f = out.status;
  if (prev != nullptr) {
    f = *prev;
  } else {
    f.id = id;
    f.state = std::string(st::kPending);
    f.last_transition_time = Seconds(now);
  }
  f.gpu_product = g.facts.gpu_product;
  f.compute_capability = g.facts.compute_capability;
  f.driver = g.facts.driver_version;
  f.cuda_driver = g.facts.cuda_driver_version;
  f.arch = g.facts.arch;
  f.nodes = g.nodes;
  if (prev == nullptr) {
    out.effects.Event("Normal", "NewFingerprint",
                      "fingerprint " + Describe(f) + " on " + std::to_string(g.nodes) + " node(s)");
  }
  if (f.state == st::kStale || f.state == st::kAbsent) {
    f.stale_since.reset();
    f.absent_since.reset();
    SetState(f, !f.manifest_digest.empty() ? st::kReady : st::kPending, now);
    out.effects.Event("Normal", "FingerprintInUse",
                      "fingerprint " + f.id + " is carried by a node again; state " + f.state);
  }
  // Remembered for when no node carries it: Stale or Absent.
  std::vector<std::string> names = g.names;
  std::sort(names.begin(), names.end());
  if (names.size() > core::kMaxLastNodes) names.resize(core::kMaxLastNodes);
  f.last_nodes = std::move(names);
  return out;
}

// A gated pod's report that it quarantined the cache the status records
// for `f` (matched by manifest digest, so a report about an older cache
// does nothing): forget the cache, mark it Degraded and bump the warm
// generation, so the next action creates a new warmup Job.
FingerprintUpdate ApplyGateReports(FingerprintStatus f,
                                   const std::vector<GateReportView>& gate_reports,
                                   const std::vector<JobView>& jobs, const std::string& kc_name,
                                   Time now) {
  FingerprintUpdate out;
  out.status = std::move(f);
  FingerprintStatus& s = out.status;
  if (s.manifest_digest.empty()) return out;
  for (const auto& g : gate_reports) {
    for (const auto& q : g.report.quarantined) {
      const std::string& digest = q.expected_digest.empty() ? q.found_digest : q.expected_digest;
      if (q.fingerprint != s.id || digest != s.manifest_digest) continue;
      if (g.finished && s.ready_at && *g.finished < *s.ready_at) continue;
      const std::string what = "pod " + g.pod + (g.node.empty() ? "" : " on node " + g.node) +
                               " found the cache of fingerprint " + s.id + " bad (" + q.level +
                               (q.file.empty() ? "" : ": " + q.file) + ": " + q.reason + ")" +
                               (q.moved_to.empty() ? "" : " and quarantined it");
      s.manifest_digest.clear();
      s.bytes = s.files = 0;
      s.ready_at.reset();
      s.last_failure = "CacheQuarantined: " + what;
      if (s.last_failure.size() > 1024) s.last_failure = s.last_failure.substr(0, 1024) + "...";
      SetState(s, st::kDegraded, now);
      // A warmup of it already running (a purge re-warm) re-seals it; a
      // second live writer would only meet the lock.
      const bool warming = std::any_of(jobs.begin(), jobs.end(), [&](const JobView& j) {
        return WarmupOf(j, kc_name, s.id) && !j.complete && !j.failed_condition && !j.deleting;
      });
      if (!warming) ++s.warm_generation;
      out.effects.Event("Warning", "CacheQuarantined", what + "; re-warming it");
      return out;
    }
  }
  return out;
}

Recorded RecordOutcome(FingerprintStatus f, const JobView* job, const std::vector<PodView>& pods,
                       const Settings& settings, Time now) {
  Recorded out;
  out.status = std::move(f);
  FingerprintStatus& s = out.status;
  if (job == nullptr) {
    if (s.state == st::kWarming) SetState(s, st::kPending, now);  // the Job vanished
    return out;
  }
  if (job->deleting) return out;
  const bool finished = job->complete || job->failed_condition;
  if (!finished) {
    if (s.state != st::kReady && s.state != st::kDegraded) SetState(s, st::kWarming, now);
    s.job = job->name;
    return out;
  }
  if (s.job_uid == job->uid) return out;  // recorded already
  if (!job->complete) {
    const std::string reason = job->failure_reason.empty() ? "Failed" : job->failure_reason;
    const std::string pod_failure = PodFailure(*job, pods);
    const std::string detail = !pod_failure.empty() ? pod_failure : job->failure_message;
    RecordFailure(out, *job, detail.empty() ? reason : reason + ": " + detail, "WarmupFailed",
                  settings, now);
    out.outcome = WarmupOutcome::kFailed;
    return out;
  }
  bool any_pod = false;
  const PodView* pod = SealPod(*job, pods, &any_pod);
  const Time seal_deadline = job->finished.value_or(now) + kSealGrace;
  if (pod == nullptr && !any_pod && now < seal_deadline) {
    out.effects.WakeAt(seal_deadline, now);  // pod not in the cache yet
    out.awaiting_seal = true;
    return out;
  }
  if (pod == nullptr) {
    RecordFailure(out, *job,
                  "NoSealResult: Job " + job->name +
                      " succeeded but no seal termination message was found" +
                      ImpostorNote(*job, pods),
                  "BadTerminationMessage", settings, now);
    out.outcome = WarmupOutcome::kFailed;
    return out;
  }
  const SealVerdict v = JudgeSealResult(*pod->seal_message, s.id);
  if (v.problem == SealProblem::kNone) {
    RecordSuccess(out, *job, v.result, *pod, now);
    out.outcome = WarmupOutcome::kPublished;
  } else {
    RecordFailure(out, *job, v.message, SealProblemName(v.problem), settings, now);
    out.outcome = v.problem == SealProblem::kFingerprintMismatch ? WarmupOutcome::kMismatch
                                                                 : WarmupOutcome::kFailed;
  }
  return out;
}

Next NextAction(const FingerprintStatus& f, const JobView* job, const NextInputs& in) {
  Next n;
  const Time now = in.now;
  if (job != nullptr && job->deleting) {
    n.kind = Next::Kind::kWaitDeleting;
    return n;
  }
  if (job != nullptr && !job->complete && !job->failed_condition) {
    n.kind = Next::Kind::kWatch;
    return n;
  }
  if (job != nullptr && f.failures > 0 && f.job_uid == job->uid) {
    // The Job failed (or sealed something wrong): remove it after the
    // backoff; the next pass creates it again under the same name.
    const Time retry = RetryAt(f, *in.settings, now);
    if (now < retry) {
      n.wake = retry;
    } else if (in.can_create) {
      n.kind = Next::Kind::kDeleteJob;
    }
    return n;
  }
  bool purge_due = false;
  if (f.state == st::kReady && in.purge && f.ready_at) {
    const Time due = *f.ready_at + *in.purge;
    if (now >= due) {
      purge_due = true;
    } else {
      n.wake = due;
    }
  }
  if (purge_due && (job == nullptr || f.job_uid == job->uid)) {
    if (in.can_create) n.kind = Next::Kind::kRewarm;
    return n;
  }
  if (job != nullptr || f.state == st::kReady) return n;
  if (f.state == st::kFailed && f.last_failure_time && now < RetryAt(f, *in.settings, now)) {
    n.wake = RetryAt(f, *in.settings, now);
    return n;
  }
  if (in.can_create) n.kind = Next::Kind::kCreateJob;
  return n;
}

FingerprintStep StepFingerprint(FingerprintStatus f, const Group& g, const FingerprintInputs& in) {
  FingerprintStep out;
  const std::string& kc_name = in.kc.metadata.name;
  FingerprintUpdate gate =
      ApplyGateReports(std::move(f), in.gate_reports, in.jobs, kc_name, in.now);
  out.effects.Append(std::move(gate.effects));
  std::string want = WarmupJobName(kc_name, gate.status.id, gate.status.warm_generation);
  const JobView* job = FindJob(in.jobs, want);
  if (job != nullptr && !Ours(*job, kc_name)) job = nullptr;

  for (const auto& j : in.jobs) {
    if (j.deleting && j.foreground_deletion && WarmupOf(j, kc_name, gate.status.id)) {
      RememberStopped(gate.status, j);  // stopped mid-run: its lock outlives it
    }
  }
  Recorded rec = RecordOutcome(std::move(gate.status), job, in.pods, in.settings, in.now);
  out.status = std::move(rec.status);
  out.effects.Append(std::move(rec.effects));
  out.outcome = rec.outcome;
  if (rec.awaiting_seal) return out;

  NextInputs next_in;
  next_in.can_create = in.storage_usable && !g.label_sets.empty();
  next_in.purge = in.purge;
  next_in.settings = &in.settings;
  next_in.now = in.now;
  const Next next = NextAction(out.status, job, next_in);
  if (next.wake) out.effects.WakeAt(*next.wake, in.now);
  FingerprintStatus& s = out.status;
  switch (next.kind) {
    case Next::Kind::kNone:
      break;
    case Next::Kind::kWaitDeleting:
      if (s.state != st::kReady) out.running.push_back(want + " (deleting)");
      break;
    case Next::Kind::kWatch:
      out.running.push_back(want);
      Unschedulable(out, *job, in);
      break;
    case Next::Kind::kDeleteJob:
      out.effects.DeleteJob(*job);
      break;
    case Next::Kind::kRewarm:
      ++s.warm_generation;
      want = WarmupJobName(kc_name, s.id, s.warm_generation);
      out.effects.Event("Normal", "PurgeRewarm",
                        "cache of fingerprint " + s.id + " sealed at " +
                            api::FormatTime(s.ready_at.value_or(Time{})) +
                            " is older than spec.retention.purgeSchedule " +
                            in.kc.spec.retention.purge_schedule +
                            "; re-warming from scratch (it serves until "
                            "the new one is sealed)");
      if (FindJob(in.jobs, want) == nullptr) CreateWarmup(out, g, want, in);
      break;
    case Next::Kind::kCreateJob:
      CreateWarmup(out, g, want, in);
      break;
  }
  return out;
}

}  // namespace kc::op::decide
