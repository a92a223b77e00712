// Decide's per-fingerprint step, for a fingerprint some selected node
// carries. In order:
//   SeenOnNodes       the status refreshed from the nodes carrying it (a new
//                     fingerprint, or a Stale/Absent one in use again)
//   ApplyGateReports  a gated pod's report that the recorded cache is bad
//                     (matched by manifest digest): Degraded, new generation
//   RecordOutcome     what the current generation's Job says: a finished
//                     Job's seal result or failure, recorded once (by uid);
//                     a running Job keeps it Warming; a vanished one, Pending
//   NextAction        what to do next: create the Job, wait (backoff, a
//                     running or deleting Job), delete a failed Job after
//                     its backoff, re-warm on the purge schedule, or nothing
// StepFingerprint runs the four and turns the NextAction into actions.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operator/decide/decide_nodes.h"
#include "operator/decide/decide_step.h"

namespace kc::op::decide {

// A fingerprint's status after a step, and what the step asks for.
struct FingerprintUpdate {
  core::FingerprintStatus status;
  Effects effects;
};

// `prev`: the status recorded for `id` (nullptr: a new fingerprint, Pending,
// Event NewFingerprint).
FingerprintUpdate SeenOnNodes(const core::FingerprintStatus* prev, const std::string& id,
                              const Group& g, Time now);

// One Event where a new fingerprint's warmup starts in the same pass: the
// step's WarmupStarted says the fingerprint is new ("new fingerprint on N
// node(s): Job ... warms fingerprint ...") and `seen`'s NewFingerprint is
// dropped. Either alone is left as it is. A change of driver on one node
// then costs one Event per KernelCache, not two. `nodes`: the nodes
// carrying the fingerprint.
void FoldNewFingerprint(Effects& seen, Effects& step, int32_t nodes);

FingerprintUpdate ApplyGateReports(core::FingerprintStatus f,
                                   const std::vector<GateReportView>& gate_reports,
                                   const std::vector<JobView>& jobs, const std::string& kc_name,
                                   Time now);

struct Recorded {
  core::FingerprintStatus status;
  Effects effects;
  // The Job succeeded but its pod is not in the informer yet: wait (up to
  // kSealGrace) before judging it; nothing else happens this pass.
  bool awaiting_seal = false;
  std::optional<WarmupOutcome> outcome;  // a finished Job recorded now
};

// `job`: the Job of the current warm generation, when it exists and is ours.
// `pods`: the Jobs' pods (the seal result is read from `job`'s).
Recorded RecordOutcome(core::FingerprintStatus f, const JobView* job,
                       const std::vector<PodView>& pods, const Settings& settings, Time now);

struct Next {
  enum class Kind {
    kNone,          // nothing to do now (Ready, backing off, or nothing may be created)
    kWaitDeleting,  // the Job is being deleted
    kWatch,         // the Job runs: list it as Warming, watch that it gets scheduled
    kDeleteJob,     // the failed Job's backoff is over: delete it; the next pass re-creates it
    kRewarm,        // the purge schedule is due: warm a new generation
    kCreateJob,     // no Job: create the current generation's
  };
  Kind kind = Kind::kNone;
  std::optional<Time> wake;  // a retry or purge timer
};

struct NextInputs {
  // Storage is usable and some node may run a warmup now.
  bool can_create = false;
  std::optional<seconds> purge;  // spec.retention.purgeSchedule (validated)
  const Settings* settings = nullptr;
  Time now{};
};

// Owners (Job uids) of this fingerprint's earlier warmups that can no
// longer write, whose lock the next warmup's prepare (and GC) may break at
// once: the Job whose outcome the status records (recorded only once it
// finished), every Job of it seen Complete or Failed (a Job's terminal
// condition comes after its pods have terminated), and every Job the
// operator cancelled (f.cancelled_job_uids) that is no longer listed (it
// was deleted in the foreground, so its pods are gone too). A failed or
// cancelled warmup never reaches seal, which would release the lock. A
// listed Job that has not finished is never named. Sorted.
std::vector<std::string> DeadOwners(const core::FingerprintStatus& f,
                                    const std::vector<JobView>& jobs, const std::string& kc_name);

// `f`: the status after RecordOutcome; `job` as given to it.
Next NextAction(const core::FingerprintStatus& f, const JobView* job, const NextInputs& in);

// What every fingerprint's step reads.
struct FingerprintInputs {
  const core::KernelCache& kc;
  const std::vector<JobView>& jobs;
  const std::vector<PodView>& pods;
  const std::vector<GateReportView>& gate_reports;
  const Settings& settings;
  bool storage_usable = false;
  std::optional<seconds> purge;
  Time now{};
};

struct FingerprintStep {
  core::FingerprintStatus status;
  Effects effects;
  std::vector<std::string> running;          // for condition Warming: "job" | "job (deleting)"
  std::optional<std::string> unschedulable;  // for condition WarmupUnschedulable
  std::optional<WarmupOutcome> outcome;
};

// ApplyGateReports, RecordOutcome, NextAction, and the Job to create.
FingerprintStep StepFingerprint(core::FingerprintStatus f, const Group& g,
                                const FingerprintInputs& in);

}  // namespace kc::op::decide
