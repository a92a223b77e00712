// Table tests of Decide's retirement and GC steps.
#include "operator/decide/decide_gc.h"

#include <gtest/gtest.h>

#include "operator/decide/names.h"
#include "testing/objects.h"

namespace kc::op::decide {
namespace {

using core::FingerprintStatus;
using std::chrono::hours;
using std::chrono::seconds;
namespace st = core::fp_state;

const Time kT0 = api::ParseTime("2026-12-02T10:00:00Z").value();
const std::string kA = "aaaaaaaaaaaaaaaa", kB = "bbbbbbbbbbbbbbbb", kC = "cccccccccccccccc";

core::KernelCache Kc() {
  core::KernelCache kc = testutil::KernelCacheNamed();
  kc.spec.retention.stale_after = "24h";
  kc.spec.retention.absent_after = "168h";
  return kc;
}

FingerprintStatus Fp(const std::string& id, std::string_view state, int64_t bytes = 0) {
  FingerprintStatus f;
  f.id = id;
  f.state = std::string(state);
  f.nodes = 1;
  f.last_nodes = {"gpu-" + id.substr(0, 1)};
  if (bytes > 0) {
    f.manifest_digest = std::string(64, id[0]);
    f.bytes = bytes;
  }
  return f;
}

JobView WarmupJob(const std::string& id, bool finished) {
  JobView j;
  j.name = WarmupJobName("llama", id, 0);
  j.uid = "uid-" + id;
  j.labels = {{kLabelName, "llama"}, {kLabelComponent, "warmup"}, {kLabelFingerprint, id}};
  j.complete = finished;
  return j;
}

TEST(RetireTest, Table) {
  const Retention retention;  // 24h stale, 168h absent
  struct Case {
    const char* name;
    FingerprintStatus f;
    std::map<std::string, std::string> node_fp;  // where its nodes are now
    std::string state;
    std::string event;
    bool collectable;
    std::optional<Time> wake;
  } cases[] = {
      {"its node carries another fingerprint: Stale",
       Fp(kA, st::kReady, 10),
       {{"gpu-a", kB}},
       std::string(st::kStale),
       "FingerprintStale",
       false,
       kT0 + hours(24)},
      {"its node went away: Absent",
       Fp(kA, st::kReady, 10),
       {},
       std::string(st::kAbsent),
       "FingerprintAbsent",
       false,
       kT0 + hours(168)},
      {"stale long enough: collected",
       [] {
         auto f = Fp(kA, st::kStale, 10);
         f.stale_since = kT0 - hours(25);
         return f;
       }(),
       {{"gpu-a", kB}},
       std::string(st::kStale),
       "",
       true,
       std::nullopt},
      {"absent, not long enough",
       [] {
         auto f = Fp(kA, st::kAbsent, 10);
         f.absent_since = kT0 - hours(1);
         return f;
       }(),
       {},
       std::string(st::kAbsent),
       "",
       false,
       kT0 + hours(167)},
  };
  for (const auto& c : cases) {
    const Retirement r = Retire({{c.f.id, c.f}}, {}, c.node_fp, {}, Kc(), retention, kT0);
    const FingerprintStatus& f = r.entries.at(c.f.id);
    EXPECT_EQ(f.state, c.state) << c.name;
    EXPECT_EQ(f.nodes, 0) << c.name;
    if (c.event.empty()) {
      EXPECT_TRUE(r.effects.events.empty()) << c.name;
    } else {
      ASSERT_EQ(r.effects.events.size(), 1u) << c.name;
      EXPECT_EQ(r.effects.events[0].event_reason, c.event) << c.name;
    }
    EXPECT_EQ(!r.collectable.empty(), c.collectable) << c.name;
    EXPECT_EQ(r.effects.wake, c.wake) << c.name;
  }
}

TEST(RetireTest, InUseIsLeftAloneAndRunningWarmupsOfUnusedStop) {
  const Retirement r = Retire({{kA, Fp(kA, st::kReady, 10)}, {kB, Fp(kB, st::kWarming)}}, {kA}, {},
                              {WarmupJob(kA, false), WarmupJob(kB, false)}, Kc(), Retention{}, kT0);
  EXPECT_EQ(r.entries.at(kA), Fp(kA, st::kReady, 10));
  EXPECT_EQ(r.entries.at(kB).state, st::kAbsent);
  ASSERT_EQ(r.effects.actions.size(), 1u);
  EXPECT_EQ(r.effects.actions[0].kind, Action::Kind::kCancelJob);  // foreground
  EXPECT_EQ(r.effects.actions[0].name, WarmupJobName("llama", kB, 0));
  // Remembered: its prepare's lock outlives it.
  EXPECT_EQ(r.entries.at(kB).cancelled_job_uids, std::vector<std::string>{"uid-" + kB});
  EXPECT_TRUE(r.entries.at(kA).cancelled_job_uids.empty());
}

TEST(RetireTest, OverMaxBytesTheLongestAbsentMakeRoom) {
  Retention retention;
  retention.max_bytes = 250;
  auto absent = [](const std::string& id, int64_t bytes, hours ago) {
    auto f = Fp(id, st::kAbsent, bytes);
    f.absent_since = kT0 - ago;
    return f;
  };
  const Retirement r = Retire({{kA, absent(kA, 100, hours(1))},
                               {kB, absent(kB, 100, hours(3))},
                               {kC, absent(kC, 100, hours(2))}},
                              {}, {}, {}, Kc(), retention, kT0);
  EXPECT_EQ(r.collectable, std::vector<std::string>{kB});  // 300 -> 200 fits
  EXPECT_NE(r.why.at(kB).find("needed under spec.retention.maxBytes"), std::string::npos);
}

TEST(CollectGarbageTest, Table) {
  JobView done;
  done.name = GcJobName("llama", {kA, kB});
  done.uid = "gc-uid";
  done.labels = {{kLabelName, "llama"}, {kLabelComponent, "gc"}};
  done.annotations = {{kAnnotationGcIds, kA + "," + kB}};
  done.complete = true;
  JobView failed = done;
  failed.complete = false;
  failed.failed_condition = true;
  failed.failure_reason = "BackoffLimitExceeded";
  failed.finished = kT0 - seconds(100);
  JobView running = failed;
  running.failed_condition = false;

  const Entries entries = {{kA, Fp(kA, st::kStale, 10)}, {kB, Fp(kB, st::kReady, 10)}};
  struct Case {
    const char* name;
    std::vector<JobView> jobs;
    std::vector<std::string> collectable;
    bool storage_usable;
    std::vector<std::string> left;  // ids left in the status
    std::vector<std::string> events;
    size_t creates;
    std::optional<Time> wake;
  } cases[] = {
      {"nothing to do", {}, {}, true, {kA, kB}, {}, 0, std::nullopt},
      {"collect A", {}, {kA}, true, {kA, kB}, {"GcStarted"}, 1, std::nullopt},
      {"collect A, storage not usable", {}, {kA}, false, {kA, kB}, {}, 0, std::nullopt},
      {"a GC Job runs: wait", {running}, {kA}, true, {kA, kB}, {}, 0, std::nullopt},
      {"a GC Job failed: retry later",
       {failed},
       {kA},
       true,
       {kA, kB},
       {},
       0,
       kT0 - seconds(100) + kGcRetry},
      {"done: A removed, B in use again re-warms",
       {done},
       {kA},
       true,
       {kB},
       {"CacheCollected"},
       0,
       std::nullopt},
  };
  for (const auto& c : cases) {
    const GcVerdict v = CollectGarbage(entries, c.collectable, {{kA, "stale for more than 24h"}},
                                       c.jobs, Kc(), Settings{}, c.storage_usable, kT0);
    std::vector<std::string> left;
    for (const auto& [id, f] : v.entries) left.push_back(id);
    EXPECT_EQ(left, c.left) << c.name;
    std::vector<std::string> events;
    for (const auto& e : v.effects.events) events.push_back(e.event_reason);
    EXPECT_EQ(events, c.events) << c.name;
    size_t creates = 0;
    for (const auto& a : v.effects.actions) creates += a.kind == Action::Kind::kCreateJob;
    EXPECT_EQ(creates, c.creates) << c.name;
    EXPECT_EQ(v.effects.wake, c.wake) << c.name;
  }
  // B was in use again when its directory went: its cache is forgotten.
  const GcVerdict v = CollectGarbage(entries, {}, {}, {done}, Kc(), Settings{}, true, kT0);
  EXPECT_EQ(v.entries.at(kB).state, st::kPending);
  EXPECT_TRUE(v.entries.at(kB).manifest_digest.empty());
  // Its finished warmup goes (a new one is made under its name); a running
  // one seals into the empty place and is left alone.
  JobView finished = WarmupJob(kB, true);
  JobView warming = WarmupJob(kB, false);
  warming.name = WarmupJobName("llama", kB, 1);
  warming.uid = "uid-warming";
  const GcVerdict w =
      CollectGarbage(entries, {}, {}, {done, finished, warming}, Kc(), Settings{}, true, kT0);
  std::vector<std::string> deleted;
  for (const auto& a : w.effects.actions) {
    if (a.kind == Action::Kind::kDeleteJob || a.kind == Action::Kind::kCancelJob) {
      deleted.push_back(a.name);
    }
  }
  EXPECT_EQ(deleted, (std::vector<std::string>{finished.name, done.name}));
}

TEST(CleanupJobsTest, Table) {
  Entries entries = {{kA, Fp(kA, st::kReady, 10)}};
  entries[kA].warm_generation = 1;
  JobView old_gen = WarmupJob(kA, true);  // generation 0, finished
  JobView current = WarmupJob(kA, true);
  current.name = WarmupJobName("llama", kA, 1);
  current.uid = "uid-current";
  JobView unknown = WarmupJob(kB, false);
  JobView running_old = WarmupJob(kA, false);
  const auto actions = CleanupJobs({old_gen, current, unknown, running_old}, entries, "llama");
  std::vector<std::string> deleted;
  for (const auto& a : actions) deleted.push_back(a.name);
  // The finished older generation and a Job of a forgotten fingerprint go;
  // the current generation and a running Job stay.
  EXPECT_EQ(deleted, (std::vector<std::string>{old_gen.name, unknown.name}));
}

}  // namespace
}  // namespace kc::op::decide
