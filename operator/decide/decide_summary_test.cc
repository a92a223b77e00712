// Table test of Decide's summary.
#include "operator/decide/decide_summary.h"

#include <gtest/gtest.h>

namespace kc::op::decide {
namespace {

namespace st = core::fp_state;

core::FingerprintStatus Fp(const std::string& id, std::string_view state, int32_t nodes = 1) {
  core::FingerprintStatus f;
  f.id = id;
  f.state = std::string(state);
  f.nodes = nodes;
  f.manifest_digest = state == st::kReady ? std::string(64, 'b') : "";
  f.bytes = state == st::kReady ? 1024 : 0;
  f.last_failure = state == st::kFailed ? "BackoffLimitExceeded" : "";
  return f;
}

TEST(SummarizeTest, Table) {
  core::KernelCache kc;
  kc.spec.retention.max_bytes = "1Ki";
  NodeGroups nodes;
  struct Case {
    const char* name;
    std::vector<core::FingerprintStatus> fps;
    bool storage_usable;
    std::optional<int64_t> max_bytes;
    std::vector<std::string> running;
    std::string ready_reason;
    std::string degraded_reason;
    std::string ready_text;
    std::vector<std::string> events;
  } cases[] = {
      {"no nodes", {}, true, std::nullopt, {}, "NoNodes", "AsExpected", "0/0", {}},
      {"all ready",
       {Fp("a", st::kReady)},
       true,
       std::nullopt,
       {},
       "AllFingerprintsReady",
       "AsExpected",
       "1/1",
       {}},
      {"an unused one is not counted",
       {Fp("a", st::kReady), Fp("b", st::kAbsent, 0)},
       true,
       std::nullopt,
       {},
       "AllFingerprintsReady",
       "AsExpected",
       "1/1",
       {}},
      {"warming",
       {Fp("a", st::kWarming)},
       true,
       std::nullopt,
       {"job-a"},
       "FingerprintsNotReady",
       "AsExpected",
       "0/1",
       {}},
      {"failed",
       {Fp("a", st::kFailed)},
       true,
       std::nullopt,
       {},
       "FingerprintsNotReady",
       "WarmupFailed",
       "0/1",
       {}},
      {"quarantined",
       {Fp("a", st::kDegraded)},
       true,
       std::nullopt,
       {},
       "FingerprintsNotReady",
       "CacheQuarantined",
       "0/1",
       {}},
      {"storage not usable",
       {Fp("a", st::kPending)},
       false,
       std::nullopt,
       {},
       "FingerprintsNotReady",
       "StorageNotReady",
       "0/1",
       {}},
      {"over maxBytes",
       {Fp("a", st::kReady), Fp("b", st::kReady)},
       true,
       1024,
       {},
       "AllFingerprintsReady",
       "ShapeExplosion",
       "2/2",
       {"ShapeExplosion"}},
  };
  for (const auto& c : cases) {
    Findings f;
    f.storage_usable = c.storage_usable;
    f.storage_message = "claim x is being deleted";
    f.nodes = &nodes;
    f.running = c.running;
    f.max_bytes = c.max_bytes;
    const Summary s = Summarize(kc, c.fps, &f, nullptr, nullptr);
    ASSERT_TRUE(s.ready_condition && s.degraded && s.warming) << c.name;
    EXPECT_EQ(s.ready_condition->reason, c.ready_reason) << c.name;
    EXPECT_EQ(s.degraded->reason, c.degraded_reason) << c.name;
    EXPECT_EQ(s.warming->value, !c.running.empty()) << c.name;
    EXPECT_EQ(ReadyText(s), c.ready_text) << c.name;
    EXPECT_FALSE(s.unschedulable) << c.name;  // none now, none before
    std::vector<std::string> events;
    for (const auto& e : s.effects.events) events.push_back(e.event_reason);
    EXPECT_EQ(events, c.events) << c.name;
  }
}

TEST(SummarizeTest, InvalidSpecCountsOnly) {
  const Summary s = Summarize(core::KernelCache{}, {Fp("a", st::kReady), Fp("b", st::kPending)},
                              nullptr, nullptr, nullptr);
  EXPECT_EQ(ReadyText(s), "1/2");
  EXPECT_EQ(s.bytes, 1024);
  EXPECT_FALSE(s.ready_condition || s.degraded || s.warming || s.unschedulable);
}

TEST(SummarizeTest, UnschedulableWarmupsAreSaidOnce) {
  NodeGroups nodes;
  Findings f;
  f.storage_usable = true;
  f.nodes = &nodes;
  f.unschedulable = {{"a", "fingerprint a (H200): warmup pod p of Job j unschedulable"}};
  const Summary first = Summarize(core::KernelCache{}, {}, &f, nullptr, nullptr);
  ASSERT_TRUE(first.unschedulable);
  EXPECT_EQ(first.unschedulable->reason, "Unschedulable");
  ASSERT_EQ(first.effects.events.size(), 1u);
  api::Condition prev;
  prev.status = "True";
  prev.message = first.unschedulable->message;
  EXPECT_TRUE(Summarize(core::KernelCache{}, {}, &f, nullptr, &prev).effects.events.empty());
  f.unschedulable.clear();
  const Summary cleared = Summarize(core::KernelCache{}, {}, &f, nullptr, &prev);
  ASSERT_TRUE(cleared.unschedulable);
  EXPECT_EQ(cleared.unschedulable->reason, "Scheduled");
}

}  // namespace
}  // namespace kc::op::decide
