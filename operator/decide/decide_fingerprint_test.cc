// Table tests of Decide's per-fingerprint step: RecordOutcome (what a Job
// says) and NextAction (what to do next), apart. Scenarios through the
// whole of Decide are in decide_test.cc.
#include "operator/decide/decide_fingerprint.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kc::op::decide {
namespace {

using core::FingerprintStatus;
using std::chrono::hours;
using std::chrono::seconds;
namespace st = core::fp_state;

const Time kT0 = api::ParseTime("2026-12-02T10:00:00Z").value();
const std::string kFp = "3f9a1c2b7d4e5f60";
const std::string kDigest(64, 'b');

FingerprintStatus Status(std::string_view state) {
  FingerprintStatus f;
  f.id = kFp;
  f.state = std::string(state);
  return f;
}

FingerprintStatus ReadyStatus() {
  FingerprintStatus f = Status(st::kReady);
  f.manifest_digest = kDigest;
  f.bytes = 100;
  f.ready_at = kT0 - hours(1);
  f.job_uid = "old-uid";
  return f;
}

JobView Job(const std::string& state) {
  JobView j;
  j.name = "llama-warmup-" + kFp;
  j.uid = "job-uid";
  j.created = kT0 - seconds(600);
  if (state == "complete") {
    j.complete = true;
    j.finished = kT0 - seconds(10);
  } else if (state == "failed") {
    j.failed_condition = true;
    j.failure_reason = "BackoffLimitExceeded";
    j.finished = kT0 - seconds(10);
  } else if (state == "deleting") {
    j.deleting = true;
  }
  return j;
}

PodView SealPod(const std::string& message) {
  PodView p;
  p.name = "llama-warmup-pod";
  p.job_name = "llama-warmup-" + kFp;
  p.job_uid = "job-uid";
  p.node_name = "gpu-1";
  p.phase = "Succeeded";
  p.seal_message = message;
  return p;
}

std::string Sealed(const std::string& fp) {
  return nlohmann::json{
      {"fingerprint", fp}, {"manifestDigest", kDigest}, {"bytes", 42}, {"files", 3}}
      .dump();
}

TEST(RecordOutcomeTest, Table) {
  const Settings settings;
  PodView failed_pod;
  failed_pod.name = "p";
  failed_pod.job_name = "llama-warmup-" + kFp;
  failed_pod.job_uid = "job-uid";
  // A pod anyone in the namespace could create: the Job's name (its labels
  // say so too), another uid in its owner reference, a forged seal result.
  PodView forged = SealPod(Sealed(kFp));
  forged.job_uid = "forged-uid";
  failed_pod.node_name = "gpu-2";
  failed_pod.failure_summary = "warmup: Error (exit 1): boom";
  struct Case {
    const char* name;
    FingerprintStatus before;
    std::optional<JobView> job;
    std::vector<PodView> pods;
    std::string state;
    std::string event;  // reason of the one Event, "" = none
    std::optional<WarmupOutcome> outcome;
    std::string last_failure_prefix;
    bool awaiting_seal = false;
  } cases[] = {
      {"no Job: Warming falls back to Pending",
       Status(st::kWarming),
       std::nullopt,
       {},
       std::string(st::kPending),
       "",
       std::nullopt,
       ""},
      {"no Job: Ready stays",
       ReadyStatus(),
       std::nullopt,
       {},
       std::string(st::kReady),
       "",
       std::nullopt,
       ""},
      {"deleting Job: nothing recorded",
       Status(st::kFailed),
       Job("deleting"),
       {},
       std::string(st::kFailed),
       "",
       std::nullopt,
       ""},
      {"running Job: Warming",
       Status(st::kPending),
       Job("running"),
       {},
       std::string(st::kWarming),
       "",
       std::nullopt,
       ""},
      {"running Job: Ready stays Ready",
       ReadyStatus(),
       Job("running"),
       {},
       std::string(st::kReady),
       "",
       std::nullopt,
       ""},
      {"running Job: Degraded stays Degraded",
       Status(st::kDegraded),
       Job("running"),
       {},
       std::string(st::kDegraded),
       "",
       std::nullopt,
       ""},
      {"sealed",
       Status(st::kWarming),
       Job("complete"),
       {SealPod(Sealed(kFp))},
       std::string(st::kReady),
       "CacheReady",
       WarmupOutcome::kPublished,
       ""},
      {"re-sealed",
       ReadyStatus(),
       Job("complete"),
       {SealPod(Sealed(kFp))},
       std::string(st::kReady),
       "CacheRewarmed",
       WarmupOutcome::kPublished,
       ""},
      {"recorded already",
       [] {
         auto f = Status(st::kFailed);
         f.job_uid = "job-uid";
         return f;
       }(),
       Job("complete"),
       {SealPod(Sealed(kFp))},
       std::string(st::kFailed),
       "",
       std::nullopt,
       ""},
      {"a pod of another uid with the Job's name is not the Job's",
       Status(st::kWarming),
       Job("complete"),
       {forged},
       std::string(st::kWarming),
       "",
       std::nullopt,
       "",
       true},
      {"no pod yet: wait for it",
       Status(st::kWarming),
       Job("complete"),
       {},
       std::string(st::kWarming),
       "",
       std::nullopt,
       "",
       true},
      {"pod without seal result",
       Status(st::kWarming),
       Job("complete"),
       {failed_pod},
       std::string(st::kFailed),
       "BadTerminationMessage",
       WarmupOutcome::kFailed,
       "NoSealResult: "},
      {"bad seal result",
       Status(st::kWarming),
       Job("complete"),
       {SealPod("sealed ok")},
       std::string(st::kFailed),
       "BadTerminationMessage",
       WarmupOutcome::kFailed,
       "BadTerminationMessage: "},
      {"seal failed",
       Status(st::kWarming),
       Job("complete"),
       {SealPod(R"({"fingerprint":")" + kFp +
                R"(","outcome":"Failed","reason":"Internal","message":"x"})")},
       std::string(st::kFailed),
       "SealFailed",
       WarmupOutcome::kFailed,
       "SealFailed: seal reported Internal: x"},
      {"sealed another fingerprint",
       Status(st::kWarming),
       Job("complete"),
       {SealPod(Sealed("0000000000000000"))},
       std::string(st::kFailed),
       "FingerprintMismatch",
       WarmupOutcome::kMismatch,
       "FingerprintMismatch: sealed 0000000000000000"},
      {"Job failed",
       Status(st::kWarming),
       Job("failed"),
       {failed_pod},
       std::string(st::kFailed),
       "WarmupFailed",
       WarmupOutcome::kFailed,
       "BackoffLimitExceeded: warmup: Error (exit 1): boom on node gpu-2"},
      {"Job failed, Ready cache kept",
       ReadyStatus(),
       Job("failed"),
       {},
       std::string(st::kReady),
       "WarmupFailed",
       WarmupOutcome::kFailed,
       "BackoffLimitExceeded"},
  };
  for (const auto& c : cases) {
    const Recorded r = RecordOutcome(c.before, c.job ? &*c.job : nullptr, c.pods, settings, kT0);
    EXPECT_EQ(r.status.state, c.state) << c.name;
    EXPECT_EQ(r.outcome, c.outcome) << c.name;
    EXPECT_EQ(r.awaiting_seal, c.awaiting_seal) << c.name;
    if (c.awaiting_seal) {
      EXPECT_EQ(r.effects.wake, kT0 - seconds(10) + kSealGrace) << c.name;
    }
    if (c.event.empty()) {
      EXPECT_TRUE(r.effects.events.empty()) << c.name;
    } else {
      ASSERT_EQ(r.effects.events.size(), 1u) << c.name;
      EXPECT_EQ(r.effects.events[0].event_reason, c.event) << c.name;
    }
    EXPECT_EQ(r.status.last_failure.rfind(c.last_failure_prefix, 0), 0u)
        << c.name << ": " << r.status.last_failure;
    if (c.outcome == WarmupOutcome::kPublished) {
      EXPECT_EQ(r.status.manifest_digest, kDigest) << c.name;
      EXPECT_EQ(r.status.bytes, 42) << c.name;
      EXPECT_EQ(r.status.failures, 0) << c.name;
      EXPECT_EQ(r.status.ready_at, kT0 - seconds(10)) << c.name;
    }
    if (c.outcome == WarmupOutcome::kFailed || c.outcome == WarmupOutcome::kMismatch) {
      EXPECT_EQ(r.status.failures, c.before.failures + 1) << c.name;
      EXPECT_EQ(r.status.job_uid, "job-uid") << c.name;
      EXPECT_EQ(r.status.last_failure_time, kT0 - seconds(10)) << c.name;
    }
  }
}

// A seal that reports convergence passes: the status says what they found,
// and a second Event tells converged (Normal) from not converged (Warning,
// naming what still compiles); a re-seal without passes clears it.
TEST(RecordOutcomeTest, ConvergenceReachesStatusAndEvents) {
  const Settings settings;
  auto sealed_with = [](const std::string& convergence) {
    nlohmann::json j = nlohmann::json::parse(Sealed(kFp));
    j["convergence"] = nlohmann::json::parse(convergence);
    return j.dump();
  };
  struct Case {
    const char* name;
    std::string message;
    std::optional<core::ConvergenceStatus> want;
    std::string event_type, event, event_part;
  } cases[] = {
      {"converged",
       sealed_with(R"({"passes":2,"converged":true,"lastEntries":0,"lastAutotune":0})"),
       core::ConvergenceStatus{2, true, 0, 0, "converged after 2 passes"}, "Normal",
       "WarmupConverged", "converged after 2 passes"},
      {"not converged",
       sealed_with(R"({"passes":3,"converged":false,"lastEntries":1,"lastAutotune":1,)"
                   R"("still":["triton kernel k num_warps=8"]})"),
       core::ConvergenceStatus{3, false, 1, 1,
                               "not converged after 3 passes: the last pass still compiled 1 "
                               "entry, all nondeterministic autotune: triton kernel k "
                               "num_warps=8"},
       "Warning", "WarmupNotConverged", "published anyway"},
      {"no passes", Sealed(kFp), std::nullopt, "", "", ""},
  };
  for (const auto& c : cases) {
    FingerprintStatus before = Status(st::kWarming);
    before.convergence = core::ConvergenceStatus{9, true, 0, 0, "stale"};
    const JobView job = Job("complete");
    const Recorded r = RecordOutcome(before, &job, {SealPod(c.message)}, settings, kT0);
    EXPECT_EQ(r.status.state, st::kReady) << c.name;
    EXPECT_EQ(r.status.convergence, c.want) << c.name;
    if (c.event.empty()) {
      EXPECT_EQ(r.effects.events.size(), 1u) << c.name;  // CacheReady alone
      continue;
    }
    ASSERT_EQ(r.effects.events.size(), 2u) << c.name;
    EXPECT_EQ(r.effects.events[1].event_type, c.event_type) << c.name;
    EXPECT_EQ(r.effects.events[1].event_reason, c.event) << c.name;
    EXPECT_NE(r.effects.events[1].event_message.find(c.event_part), std::string::npos)
        << r.effects.events[1].event_message;
  }
}

TEST(NextActionTest, Table) {
  Settings settings;  // retry 30s base
  using K = Next::Kind;
  FingerprintStatus failed = Status(st::kFailed);
  failed.failures = 1;
  failed.job_uid = "job-uid";
  failed.last_failure_time = kT0 - seconds(10);  // retry at kT0 + 20s
  FingerprintStatus failed_long_ago = failed;
  failed_long_ago.last_failure_time = kT0 - seconds(60);
  FingerprintStatus ready = ReadyStatus();
  ready.job_uid = "job-uid";
  struct Case {
    const char* name;
    FingerprintStatus f;
    std::optional<JobView> job;
    bool can_create;
    std::optional<seconds> purge;
    K kind;
    std::optional<Time> wake;
  } cases[] = {
      {"nothing yet: create", Status(st::kPending), std::nullopt, true, std::nullopt, K::kCreateJob,
       std::nullopt},
      {"nothing may be created", Status(st::kPending), std::nullopt, false, std::nullopt, K::kNone,
       std::nullopt},
      {"Ready, no Job", ready, std::nullopt, true, std::nullopt, K::kNone, std::nullopt},
      {"Job deleting", Status(st::kPending), Job("deleting"), true, std::nullopt, K::kWaitDeleting,
       std::nullopt},
      {"Job running", Status(st::kWarming), Job("running"), true, std::nullopt, K::kWatch,
       std::nullopt},
      {"failed Job in backoff", failed, Job("failed"), true, std::nullopt, K::kNone,
       kT0 + seconds(20)},
      {"failed Job past backoff", failed_long_ago, Job("failed"), true, std::nullopt, K::kDeleteJob,
       std::nullopt},
      {"failed Job past backoff, nothing may be created", failed_long_ago, Job("failed"), false,
       std::nullopt, K::kNone, std::nullopt},
      {"failed, Job gone, in backoff", failed, std::nullopt, true, std::nullopt, K::kNone,
       kT0 + seconds(20)},
      {"failed, Job gone, past backoff", failed_long_ago, std::nullopt, true, std::nullopt,
       K::kCreateJob, std::nullopt},
      {"purge not due", ready, Job("complete"), true, hours(2), K::kNone,
       kT0 - hours(1) + hours(2)},
      {"purge due", ready, Job("complete"), true, hours(1), K::kRewarm, std::nullopt},
      {"purge due, no Job left", ready, std::nullopt, true, hours(1), K::kRewarm, std::nullopt},
      {"purge due, nothing may be created", ready, Job("complete"), false, hours(1), K::kNone,
       std::nullopt},
      {"purge due, Job not the recorded one", ReadyStatus(), Job("complete"), true, hours(1),
       K::kNone, std::nullopt},
  };
  for (const auto& c : cases) {
    NextInputs in;
    in.can_create = c.can_create;
    in.purge = c.purge;
    in.settings = &settings;
    in.now = kT0;
    const Next n = NextAction(c.f, c.job ? &*c.job : nullptr, in);
    EXPECT_EQ(n.kind, c.kind) << c.name;
    EXPECT_EQ(n.wake, c.wake) << c.name;
  }
}

TEST(ApplyGateReportsTest, QuarantineOfTheRecordedCacheRewarms) {
  GateReportView g;
  g.pod = "model-0";
  g.node = "gpu-1";
  core::GateQuarantine q;
  q.fingerprint = kFp;
  q.expected_digest = kDigest;
  q.level = "file";
  q.reason = "digest mismatch";
  g.report.quarantined.push_back(q);
  const FingerprintUpdate u = ApplyGateReports(ReadyStatus(), {g}, {}, "llama", kT0);
  EXPECT_EQ(u.status.state, st::kDegraded);
  EXPECT_TRUE(u.status.manifest_digest.empty());
  EXPECT_EQ(u.status.warm_generation, 1);
  ASSERT_EQ(u.effects.events.size(), 1u);
  EXPECT_EQ(u.effects.events[0].event_reason, "CacheQuarantined");

  // Another digest: an older cache; nothing happens.
  g.report.quarantined[0].expected_digest = std::string(64, 'c');
  const FingerprintUpdate old = ApplyGateReports(ReadyStatus(), {g}, {}, "llama", kT0);
  EXPECT_EQ(old.status, ReadyStatus());
  EXPECT_TRUE(old.effects.events.empty());
}

TEST(FoldNewFingerprintTest, Table) {
  struct Case {
    const char* name;
    std::vector<std::string> seen;  // reasons of SeenOnNodes' events
    std::vector<std::string> step;  // reasons of the step's events
    std::vector<std::string> want_seen;
    std::string want_started_prefix;  // the WarmupStarted message's start ("" = unchanged)
  };
  const Case cases[] = {
      {"new and started: one Event",
       {"NewFingerprint"},
       {"WarmupStarted"},
       {},
       "new fingerprint on 3 node(s): Job w"},
      {"new, no warmup (nothing may be created)", {"NewFingerprint"}, {}, {"NewFingerprint"}, ""},
      {"started, not new", {}, {"WarmupStarted"}, {}, "Job w"},
      {"in use again and started: kept apart",
       {"FingerprintInUse"},
       {"WarmupStarted"},
       {"FingerprintInUse"},
       "Job w"},
      {"new, the step only rewarms: kept apart",
       {"NewFingerprint"},
       {"PurgeRewarm"},
       {"NewFingerprint"},
       ""},
  };
  for (const Case& c : cases) {
    Effects seen;
    Effects step;
    for (const auto& r : c.seen) seen.Event("Normal", r, "fingerprint x on 3 node(s)");
    for (const auto& r : c.step) step.Event("Normal", r, "Job w warms fingerprint x");
    FoldNewFingerprint(seen, step, 3);
    std::vector<std::string> got;
    for (const auto& e : seen.events) got.push_back(e.event_reason);
    EXPECT_EQ(got, c.want_seen) << c.name;
    ASSERT_EQ(step.events.size(), c.step.size()) << c.name;
    for (const auto& e : step.events) {
      if (e.event_reason != "WarmupStarted") continue;
      EXPECT_EQ(e.event_message.rfind(c.want_started_prefix, 0), 0u)
          << c.name << ": " << e.event_message;
      EXPECT_EQ(e.event_message.find("new") == 0, c.want_started_prefix.rfind("new", 0) == 0)
          << c.name;
    }
  }
}

// The Job controller adopts any orphan pod whose labels match the Job's
// selector and counts its success as the Job's: such a pod, owned by the
// Job but not running its template, is never the Job's result; once the
// grace for the real pod is over the warmup fails, naming the impostor.
TEST(RecordOutcomeTest, AnAdoptedPodThatDoesNotRunTheTemplateIsNeverTheResult) {
  const Settings settings;
  JobView job = Job("complete");
  job.parts = {{"c/seal", "template-seal"}, {"v/cache", "template-cache"}};
  PodView adopted = SealPod(Sealed(kFp));
  adopted.name = "forged-seal";
  adopted.parts = {{"c/seal", "another-seal"}, {"v/cache", "template-cache"}};
  const Recorded waiting = RecordOutcome(Status(st::kWarming), &job, {adopted}, settings, kT0);
  EXPECT_TRUE(waiting.awaiting_seal);
  EXPECT_EQ(waiting.status.manifest_digest, "");
  const Recorded r =
      RecordOutcome(Status(st::kWarming), &job, {adopted}, settings, kT0 + kSealGrace);
  EXPECT_EQ(r.status.state, st::kFailed);
  EXPECT_EQ(r.status.manifest_digest, "");
  EXPECT_EQ(r.status.last_failure.rfind("NoSealResult", 0), 0u) << r.status.last_failure;
  EXPECT_NE(r.status.last_failure.find("pod forged-seal, which the Job adopted by its labels, "
                                       "does not run its template (container seal differs"),
            std::string::npos)
      << r.status.last_failure;
  // The same pod running the template is the Job's.
  adopted.parts = job.parts;
  const Recorded ok = RecordOutcome(Status(st::kWarming), &job, {adopted}, settings, kT0);
  EXPECT_EQ(ok.status.manifest_digest, kDigest);
}

// The status remembers the last kMaxCancelledJobs cancellations, newest
// last; a Job still listed (deleting, or running) is never a dead owner.
TEST(DeadOwnersTest, Table) {
  FingerprintStatus f;
  f.id = kFp;
  auto job = [&](const std::string& uid, bool complete, bool failed, bool deleting) {
    JobView j;
    j.name = "llama-warm-" + f.id;
    j.uid = uid;
    j.labels = {{kLabelName, "llama"}, {kLabelComponent, "warmup"}, {kLabelFingerprint, f.id}};
    j.complete = complete;
    j.failed_condition = failed;
    j.deleting = deleting;
    return j;
  };
  struct Case {
    const char* name;
    std::string recorded;
    std::vector<std::string> cancelled;
    std::vector<JobView> jobs;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"nothing known", "", {}, {}, {}},
      {"the recorded outcome", "r", {}, {}, {"r"}},
      {"a failed Job still listed", "", {}, {job("f", false, true, false)}, {"f"}},
      {"a running Job is never dead", "r", {}, {job("r", false, false, false)}, {}},
      {"a cancelled Job, gone", "", {"c"}, {}, {"c"}},
      {"a cancelled Job still deleting", "", {"c"}, {job("c", false, false, true)}, {}},
      {"all of them, sorted",
       "r",
       {"c2", "c1"},
       {job("f", true, false, false)},
       {"c1", "c2", "f", "r"}},
  };
  for (const auto& c : cases) {
    f.job_uid = c.recorded;
    f.cancelled_job_uids = c.cancelled;
    EXPECT_EQ(DeadOwners(f, c.jobs, "llama"), c.want) << c.name;
  }
}

TEST(CancelWarmupTest, CancelledJobsAreCappedNewestLast) {
  FingerprintStatus f;
  Effects e;
  for (int i = 0; i < 6; ++i) {
    JobView j;
    j.name = "llama-warm";
    j.uid = "u" + std::to_string(i);
    e.CancelWarmup(j, f);
  }
  EXPECT_EQ(f.cancelled_job_uids, (std::vector<std::string>{"u2", "u3", "u4", "u5"}));
  EXPECT_EQ(f.cancelled_job_uids.size(), core::kMaxCancelledJobs);
  EXPECT_EQ(e.actions.size(), 6u);
  EXPECT_EQ(e.actions.back().kind, Action::Kind::kCancelJob);
  // Seen again, now deleting in the foreground: recorded once, not asked again.
  JobView again;
  again.name = "llama-warm";
  again.uid = "u5";
  again.deleting = again.foreground_deletion = true;
  e.CancelWarmup(again, f);
  EXPECT_EQ(f.cancelled_job_uids, (std::vector<std::string>{"u2", "u3", "u4", "u5"}));
  EXPECT_EQ(e.actions.size(), 6u);
  // Deleting in the background (by someone else: its pods may outlive it),
  // or finished: never recorded.
  FingerprintStatus g;
  JobView background = again;
  background.uid = "bg";
  background.foreground_deletion = false;
  e.CancelWarmup(background, g);
  JobView finished;
  finished.uid = "done";
  finished.complete = true;
  e.CancelWarmup(finished, g);
  EXPECT_TRUE(g.cancelled_job_uids.empty());
}

}  // namespace
}  // namespace kc::op::decide
