// Table tests of Decide's harvest step.
#include "operator/decide/decide_harvest.h"

#include <gtest/gtest.h>

#include "core/harvest_report.h"
#include "operator/decide/names.h"
#include "testing/objects.h"

namespace kc::op::decide {
namespace {

using core::FingerprintStatus;
using std::chrono::minutes;
using std::chrono::seconds;
namespace st = core::fp_state;

const Time kT0 = api::ParseTime("2026-12-06T10:00:00Z").value();
const std::string kA = "aaaaaaaaaaaaaaaa";
const std::string kD1(64, '1');
const std::string kD2(64, '2');

core::KernelCache Kc(core::HarvestMode mode = core::HarvestMode::kMerge) {
  core::KernelCache kc = testutil::KernelCacheNamed();
  kc.spec.harvest.mode = mode;
  kc.spec.harvest.interval = minutes(10);
  return kc;
}

Entries Ready(const std::string& digest = kD1) {
  FingerprintStatus f;
  f.id = kA;
  f.state = std::string(st::kReady);
  f.manifest_digest = digest;
  f.bytes = 1000;
  f.files = 9;
  return {{kA, f}};
}

std::map<std::string, ObservedMisses> Observed(const std::string& digest = kD1) {
  ObservedMisses o;
  o.manifest_digest = digest;
  o.harvest = {{"pod-b", {1, 100, std::string(64, 'c')}},
               {"pod-a", {2, 110, std::string(64, 'd')}}};
  return {{kA, o}};
}

JobView HarvestJob(const std::string& uid, bool complete, bool failed = false) {
  JobView j;
  j.name = "llama-harvest-" + kA + "-0000000" + uid.back();
  j.uid = uid;
  j.labels = {{kLabelName, "llama"}, {kLabelComponent, "harvest"}, {kLabelFingerprint, kA}};
  j.complete = complete;
  j.failed_condition = failed;
  if (complete || failed) j.finished = kT0 - minutes(1);
  return j;
}

PodView ResultPod(const JobView& j, const core::HarvestReport& r) {
  PodView p;
  p.name = j.name + "-x";
  p.job_name = j.name;
  p.job_uid = j.uid;
  p.seal_message = core::HarvestReportToJson(r);
  return p;
}

core::HarvestReport Merged() {
  core::HarvestReport r;
  r.fingerprint = kA;
  r.outcome = core::HarvestOutcome::kMerged;
  r.base_digest = kD1;
  r.manifest_digest = kD2;
  r.bytes = 3600;
  r.files = 13;
  r.added_files = 4;
  r.added_bytes = 2600;
  r.added_entries = {"triton/h"};
  r.pods = 2;
  return r;
}

const Action* Created(const Effects& e) {
  for (const auto& a : e.actions) {
    if (a.kind == Action::Kind::kCreateJob) return &a;
  }
  return nullptr;
}

std::string Reasons(const Effects& e) {
  std::string out;
  for (const auto& a : e.events) out += a.event_reason + ";";
  return out;
}

TEST(DecideHarvestTest, StartsAJobWithTheAcceptListOfPodsGatedOnTheCurrentGeneration) {
  auto v = DecideHarvest(Ready(), Kc(), {}, {}, Observed(), Settings{}, true, kT0);
  const Action* a = Created(v.effects);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(Reasons(v.effects), "HarvestStarted;");
  const Json& c = a->object["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["name"], "harvest");
  const std::string accept = c["env"].back()["value"];
  auto pods = core::ParseHarvestAccept(accept);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].uid, "pod-a");  // uid order
  EXPECT_EQ(a->name, HarvestJobName("llama", kA, kD1, accept));
  EXPECT_NE(std::find(c["args"].begin(), c["args"].end(), "--base-digest=" + kD1), c["args"].end());
  EXPECT_FALSE(c["resources"]["limits"].contains("nvidia.com/gpu"));
}

TEST(DecideHarvestTest, NothingStartsWhenItShouldNot) {
  struct Case {
    const char* name;
    core::KernelCache kc;
    Entries entries;
    std::map<std::string, ObservedMisses> observed;
    std::vector<JobView> jobs;
    bool storage = true;
  };
  Entries warming = Ready();
  warming[kA].state = std::string(st::kWarming);
  JobView warmup;
  warmup.name = "llama-warm-" + kA;
  warmup.labels = {{kLabelName, "llama"}, {kLabelComponent, "warmup"}, {kLabelFingerprint, kA}};
  const Case cases[] = {
      {"report mode", Kc(core::HarvestMode::kReport), Ready(), Observed(), {}},
      {"not ready", Kc(), warming, Observed(), {}},
      {"pods of another generation", Kc(), Ready(), Observed(kD2), {}},
      {"no inbox files", Kc(), Ready(), {{kA, ObservedMisses{kD1, {}, {}}}}, {}},
      {"a warmup runs", Kc(), Ready(), Observed(), {warmup}},
      {"a harvest runs", Kc(), Ready(), Observed(), {HarvestJob("u1", false)}},
      {"storage unusable", Kc(), Ready(), Observed(), {}, false},
  };
  for (const auto& c : cases) {
    auto v = DecideHarvest(c.entries, c.kc, c.jobs, {}, c.observed, Settings{}, c.storage, kT0);
    EXPECT_EQ(Created(v.effects), nullptr) << c.name;
  }
}

TEST(DecideHarvestTest, TheIntervalAndARecordedJobOfTheSameFilesHoldTheNextOne) {
  Entries e = Ready();
  e[kA].harvest = core::HarvestStatus{};
  e[kA].harvest->last_time = kT0 - minutes(3);
  e[kA].harvest->job = "llama-harvest-other";
  auto v = DecideHarvest(e, Kc(), {}, {}, Observed(), Settings{}, true, kT0);
  EXPECT_EQ(Created(v.effects), nullptr);
  ASSERT_TRUE(v.effects.wake);
  EXPECT_EQ(*v.effects.wake, kT0 + minutes(7));
  // Past the interval: started.
  v = DecideHarvest(e, Kc(), {}, {}, Observed(), Settings{}, true, kT0 + minutes(8));
  ASSERT_NE(Created(v.effects), nullptr);
  // The same files into the same generation, recorded already: never again.
  e[kA].harvest->job = Created(v.effects)->name;
  v = DecideHarvest(e, Kc(), {}, {}, Observed(), Settings{}, true, kT0 + minutes(30));
  EXPECT_EQ(Created(v.effects), nullptr);
}

TEST(DecideHarvestTest, AMergeMovesTheFingerprintToTheNewGenerationOnce) {
  const JobView j = HarvestJob("u1", true);
  auto v = DecideHarvest(Ready(), Kc(), {j}, {ResultPod(j, Merged())}, Observed(), Settings{}, true,
                         kT0);
  const FingerprintStatus& f = v.entries.at(kA);
  EXPECT_EQ(f.manifest_digest, kD2);
  EXPECT_EQ(f.files, 13);
  ASSERT_TRUE(f.harvest);
  EXPECT_EQ(f.harvest->generation, 1);
  EXPECT_EQ(f.harvest->job_uid, "u1");
  EXPECT_EQ(f.harvest->last_result, core::HarvestOutcome::kMerged);
  EXPECT_EQ(f.harvest->added_files, 4);
  EXPECT_EQ(f.harvest->added, std::vector<std::string>{"triton/h"});
  EXPECT_EQ(Reasons(v.effects), "HarvestMerged;");
  EXPECT_NE(v.effects.events[0].event_message.find("generation 1"), std::string::npos);
  EXPECT_EQ(Created(v.effects), nullptr);  // nothing new until the Job is gone
  for (const auto& a : v.effects.actions) EXPECT_NE(a.kind, Action::Kind::kDeleteJob);
  // Next pass (status written): the Job is deleted, nothing is recorded twice.
  auto again = DecideHarvest(v.entries, Kc(), {j}, {ResultPod(j, Merged())}, Observed(kD2),
                             Settings{}, true, kT0);
  EXPECT_EQ(again.entries.at(kA).harvest->generation, 1);
  ASSERT_EQ(again.effects.actions.size(), 1u);
  EXPECT_EQ(again.effects.actions[0].kind, Action::Kind::kDeleteJob);
  EXPECT_TRUE(again.effects.events.empty());
}

TEST(DecideHarvestTest, FailuresConflictsAndStaleMergesKeepTheCache) {
  // A failed Job: the generation stands, a Warning says so.
  const JobView failed = HarvestJob("u2", false, true);
  core::HarvestReport f{.fingerprint = kA, .outcome = core::HarvestOutcome::kFailed};
  f.reason = "ResourceExhausted";
  f.message = "no space left on device";
  auto v = DecideHarvest(Ready(), Kc(), {failed}, {ResultPod(failed, f)}, Observed(), Settings{},
                         true, kT0);
  EXPECT_EQ(v.entries.at(kA).manifest_digest, kD1);
  EXPECT_EQ(v.entries.at(kA).harvest->last_result, core::HarvestOutcome::kFailed);
  EXPECT_NE(v.entries.at(kA).harvest->message.find("no space left"), std::string::npos);
  EXPECT_EQ(Reasons(v.effects), "HarvestFailed;");
  // A Job whose pod left no result at all is a failure too.
  v = DecideHarvest(Ready(), Kc(), {failed}, {}, Observed(), Settings{}, true, kT0);
  EXPECT_EQ(v.entries.at(kA).harvest->last_result, core::HarvestOutcome::kFailed);
  // Merged into a generation the status no longer names (re-warmed since).
  const JobView done = HarvestJob("u3", true);
  v = DecideHarvest(Ready(std::string(64, '9')), Kc(), {done}, {ResultPod(done, Merged())},
                    Observed(), Settings{}, true, kT0);
  EXPECT_EQ(v.entries.at(kA).manifest_digest, std::string(64, '9'));
  EXPECT_EQ(v.entries.at(kA).harvest->last_result, core::HarvestOutcome::kUnchanged);
  // Conflicts and rejected files: a Warning naming the first.
  core::HarvestReport kept = Merged();
  kept.conflict_count = 1;
  kept.conflicts = {"triton/x/k.cubin"};
  v = DecideHarvest(Ready(), Kc(), {done}, {ResultPod(done, kept)}, Observed(), Settings{}, true,
                    kT0);
  EXPECT_EQ(Reasons(v.effects), "HarvestMerged;HarvestKeptOut;");
  EXPECT_EQ(v.entries.at(kA).harvest->message, "conflict: triton/x/k.cubin");
}

TEST(AcceptListTest, WholePodsWithinTheCaps) {
  const std::string s(64, 'a');
  const std::vector<core::HarvestPod> pods = {
      {"c", {3, 30, s}}, {"b", {1, 10, s}}, {"a", {2, 20, s}}, {"z", {0, 0, s}}};
  core::HarvestCaps caps;
  auto uids = [](const std::vector<core::HarvestPod>& ps) {
    std::string out;
    for (const auto& p : ps) out += p.uid;
    return out;
  };
  EXPECT_EQ(uids(AcceptList(pods, caps)), "abc");  // uid order, empty lists dropped
  caps.max_files_per_pod = 2;
  EXPECT_EQ(uids(AcceptList(pods, caps)), "ab");
  caps = core::HarvestCaps{};
  caps.max_files_per_fingerprint = 4;
  EXPECT_EQ(uids(AcceptList(pods, caps)), "ab");  // c would pass the fingerprint's cap
  caps = core::HarvestCaps{};
  caps.max_bytes_per_pod = 25;
  caps.max_bytes_per_fingerprint = 25;
  EXPECT_EQ(uids(AcceptList(pods, caps)), "a");
  std::vector<core::HarvestPod> many;
  for (std::size_t i = 0; i < core::kMaxHarvestPods + 10; ++i) {
    many.push_back({"p" + std::to_string(1000 + i), {1, 1, s}});
  }
  EXPECT_EQ(AcceptList(many, core::HarvestCaps{}).size(), core::kMaxHarvestPods);
}

}  // namespace
}  // namespace kc::op::decide
