#include "operator/controller/gate_metrics.h"

#include <gtest/gtest.h>

#include "api/time.h"
#include "operator/controller/gate_reports.h"

namespace kc::op {
namespace {

using core::GateOutcome;

constexpr char kFp[] = "0123456789abcdef";
constexpr char kOtherFp[] = "fedcba9876543210";

Time At(const std::string& rfc3339) { return *api::ParseTime(rfc3339); }

GateReportView GateRun(const std::string& uid, const std::string& container, GateOutcome outcome,
                       int64_t waited_ms, const std::string& finished = "2026-12-02T10:00:00Z",
                       const std::string& fp = kFp) {
  GateReportView v;
  v.pod = "llama-" + uid;
  v.pod_uid = uid;
  v.container_id = container;
  v.report.outcome = outcome;
  v.report.fingerprint = fp;
  v.report.waited_ms = waited_ms;
  if (!finished.empty()) v.finished = At(finished);
  return v;
}

struct Case {
  const char* what;
  std::vector<GateReportView> reports;
  std::set<GateRunId> counted;
  std::string since;
  GateIncrements want;
};

TEST(GateMetrics, TallyCountsEachRunOnce) {
  const std::map<std::string, double> seconds = {{kFp, 187}};
  const GateReportView warm = GateRun("u1", "containerd://a", GateOutcome::kWarm, 1500);
  const GateReportView cold = GateRun("u2", "containerd://b", GateOutcome::kCold, 600000);
  const GateReportView failed = GateRun("u3", "containerd://c", GateOutcome::kFailed, 20);
  const std::string early = "2026-12-02T09:00:00Z";
  const std::vector<Case> cases = {
      {"nothing", {}, {}, early, {}},
      {"a Warm run: its wait and its fingerprint's warmup seconds",
       {warm},
       {},
       early,
       {{{GateOutcome::kWarm, 1}}, {1.5}, {{kFp, 187}}}},
      {"Cold and Failed runs save nothing",
       {cold, failed},
       {},
       early,
       {{{GateOutcome::kCold, 1}, {GateOutcome::kFailed, 1}}, {600, 0.02}, {}}},
      {"a run counted before adds nothing (a relist, a resync, another pass)",
       {warm, cold},
       {GateRunOf(warm)},
       early,
       {{{GateOutcome::kCold, 1}}, {600}, {}}},
      {"the same run listed twice counts once",
       {warm, warm},
       {},
       early,
       {{{GateOutcome::kWarm, 1}}, {1.5}, {{kFp, 187}}}},
      {"two Warm runs of one fingerprint add up",
       {warm, GateRun("u4", "containerd://d", GateOutcome::kWarm, 10)},
       {},
       early,
       {{{GateOutcome::kWarm, 2}}, {1.5, 0.01}, {{kFp, 374}}}},
      {"a restarted gate: the run before (lastState, same container id) is not counted again",
       {GateRun("u3", "containerd://c", GateOutcome::kFailed, 20),
        GateRun("u3", "containerd://e", GateOutcome::kWarm, 900, "2026-12-02T10:01:00Z")},
       {GateRunOf(failed)},
       early,
       {{{GateOutcome::kWarm, 1}}, {0.9}, {{kFp, 187}}}},
      {"another pod with the same container id is another run",
       {GateRun("u9", "containerd://a", GateOutcome::kWarm, 1500)},
       {GateRunOf(warm)},
       early,
       {{{GateOutcome::kWarm, 1}}, {1.5}, {{kFp, 187}}}},
      {"no container id: runs told apart by finishedAt",
       {GateRun("u5", "", GateOutcome::kFailed, 1, "2026-12-02T10:00:00Z"),
        GateRun("u5", "", GateOutcome::kFailed, 1, "2026-12-02T10:00:30Z")},
       {},
       early,
       {{{GateOutcome::kFailed, 2}}, {0.001, 0.001}, {}}},
      {"finished before `since`: taken as counted, nothing added",
       {warm, GateRun("u6", "containerd://f", GateOutcome::kCold, 5, "2026-12-02T10:05:00Z")},
       {},
       "2026-12-02T10:01:00Z",
       {{{GateOutcome::kCold, 1}}, {0.005}, {}}},
      {"finished at `since` counts",
       {warm},
       {},
       "2026-12-02T10:00:00Z",
       {{{GateOutcome::kWarm, 1}}, {1.5}, {{kFp, 187}}}},
      {"no finishedAt counts whatever `since` is",
       {GateRun("u7", "containerd://g", GateOutcome::kWarm, 3, "")},
       {},
       "2030-01-01T00:00:00Z",
       {{{GateOutcome::kWarm, 1}}, {0.003}, {{kFp, 187}}}},
      {"a fingerprint with no known warmup seconds saves nothing",
       {GateRun("u8", "containerd://h", GateOutcome::kWarm, 2, "2026-12-02T10:00:00Z", kOtherFp)},
       {},
       early,
       {{{GateOutcome::kWarm, 1}}, {0.002}, {}}},
      {"a negative waitedMs counts as 0",
       {GateRun("u10", "containerd://i", GateOutcome::kCold, -5)},
       {},
       early,
       {{{GateOutcome::kCold, 1}}, {0}, {}}},
  };
  for (const Case& c : cases) {
    GateTally t = TallyGateRuns(c.reports, c.counted, seconds, At(c.since));
    EXPECT_EQ(t.add, c.want) << c.what;
    std::set<GateRunId> want_counted;
    for (const auto& r : c.reports) want_counted.insert(GateRunOf(r));
    EXPECT_EQ(t.counted, want_counted) << c.what;
  }
}

// Runs of pods that are gone leave `counted`; a second tally of the same
// reports with the first's `counted` adds nothing.
TEST(GateMetrics, CountedFollowsThePods) {
  const GateReportView a = GateRun("u1", "containerd://a", GateOutcome::kWarm, 1);
  const GateReportView b = GateRun("u2", "containerd://b", GateOutcome::kWarm, 1);
  const Time since = At("2026-12-01T00:00:00Z");
  GateTally first = TallyGateRuns({a, b}, {}, {}, since);
  EXPECT_EQ(first.add.outcomes.at(GateOutcome::kWarm), 2);
  GateTally again = TallyGateRuns({a, b}, first.counted, {}, since);
  EXPECT_EQ(again.add, GateIncrements{});
  GateTally one_gone = TallyGateRuns({b}, again.counted, {}, since);
  EXPECT_EQ(one_gone.add, GateIncrements{});
  EXPECT_EQ(one_gone.counted, std::set<GateRunId>{GateRunOf(b)});
}

// The identity comes from the pod status: uid, containerID, finishedAt; a
// report that moves from state to lastState keeps it.
TEST(GateMetrics, RunIdentitySurvivesAGateRestart) {
  core::GateReport r;
  r.outcome = GateOutcome::kFailed;
  r.reason = "Timeout";
  const Json terminated = {{"exitCode", 3},
                           {"message", core::GateReportToJson(r)},
                           {"containerID", "containerd://run0"},
                           {"finishedAt", "2026-12-02T10:00:00Z"}};
  auto pod = [](Json gate_status) {
    return Json{{"metadata", {{"name", "llama-0"}, {"namespace", "ml"}, {"uid", "pod-uid"}}},
                {"status", {{"initContainerStatuses", Json::array({std::move(gate_status)})}}}};
  };
  const auto before = GateReportsFromPod(
      pod({{"name", "kernelcache-wait"}, {"state", {{"terminated", terminated}}}}));
  const auto after = GateReportsFromPod(pod({{"name", "kernelcache-wait"},
                                             {"restartCount", 1},
                                             {"state", {{"running", Json::object()}}},
                                             {"lastState", {{"terminated", terminated}}}}));
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(GateRunOf(before[0]), GateRunOf(after[0]));
  EXPECT_EQ(GateRunOf(before[0]).pod_uid, "pod-uid");
  EXPECT_EQ(GateRunOf(before[0]).container_id, "containerd://run0");
}

PodView WarmupPod(const std::string& job, const std::string& phase, std::optional<double> secs) {
  PodView p;
  p.name = job + "-x";
  p.job_name = job;
  p.phase = phase;
  p.warmup_seconds = secs;
  return p;
}

core::FingerprintStatus Fp(const std::string& id, const std::string& job) {
  core::FingerprintStatus f;
  f.id = id;
  f.job = job;
  return f;
}

TEST(GateMetrics, WarmupSecondsByFingerprint) {
  struct WCase {
    const char* what;
    std::vector<core::FingerprintStatus> fps;
    std::vector<PodView> pods;
    std::map<std::string, double> before;
    std::map<std::string, double> want;
  };
  const std::vector<WCase> cases = {
      {"the Succeeded pod of the recorded Job",
       {Fp(kFp, "warm-a")},
       {WarmupPod("warm-a", "Succeeded", 187)},
       {},
       {{kFp, 187}}},
      {"another Job's pod does not speak for it",
       {Fp(kFp, "warm-a")},
       {WarmupPod("warm-b", "Succeeded", 5)},
       {},
       {}},
      {"a failed or unfinished pod does not either",
       {Fp(kFp, "warm-a")},
       {WarmupPod("warm-a", "Failed", 9), WarmupPod("warm-a", "Running", std::nullopt)},
       {},
       {}},
      {"a Succeeded pod of the Job, past a failed one",
       {Fp(kFp, "warm-a")},
       {WarmupPod("warm-a", "Failed", 9), WarmupPod("warm-a", "Succeeded", 30)},
       {},
       {{kFp, 30}}},
      {"the pod is gone: what the last pass knew",
       {Fp(kFp, "warm-a")},
       {},
       {{kFp, 187}},
       {{kFp, 187}}},
      {"a re-warm that sealed: its pod's seconds replace the old",
       {Fp(kFp, "warm-a-g1")},
       {WarmupPod("warm-a-g1", "Succeeded", 200)},
       {{kFp, 187}},
       {{kFp, 200}}},
      {"a fingerprint that left the status is forgotten",
       {Fp(kFp, "warm-a")},
       {},
       {{kFp, 187}, {kOtherFp, 3}},
       {{kFp, 187}}},
      {"no Job recorded", {Fp(kFp, "")}, {WarmupPod("", "Succeeded", 1)}, {}, {}},
  };
  for (const WCase& c : cases) {
    EXPECT_EQ(WarmupSecondsByFingerprint(c.fps, c.pods, c.before), c.want) << c.what;
  }
}

}  // namespace
}  // namespace kc::op
