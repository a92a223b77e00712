#include "operator/controller/miss_ledger.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

using core::MissFramework;
using core::RuntimeMiss;

MissSource Src(const std::string& pod, const std::string& digest = "d1") {
  return {"ml", "llama", "0123456789abcdef", digest, pod, pod + "-uid"};
}
RuntimeMiss Triton(const std::string& key, const std::string& kernel) {
  return {MissFramework::kTriton, key, "kernel " + kernel, 8, 1000};
}
const Time t0 = Time{} + std::chrono::hours(1000);

TEST(MissLedger, AReportIsTheFullSetSoRepeatingItCountsNothingNew) {
  MissLedger l;
  MissRecord first = l.Record(Src("a"), {Triton("k1", "add"), Triton("k2", "mul")}, t0);
  EXPECT_EQ(first.accepted, 2u);
  EXPECT_EQ(first.new_for_pod[MissFramework::kTriton], 2);
  EXPECT_EQ(first.new_for_cache, 2u);
  MissRecord again = l.Record(Src("a"), {Triton("k1", "add"), Triton("k2", "mul")}, t0);
  EXPECT_EQ(again.accepted, 2u);
  EXPECT_TRUE(again.new_for_pod.empty());
  EXPECT_EQ(again.new_for_cache, 0u);
  EXPECT_FALSE(again.event.has_value());
  auto s = l.Summary("ml", "llama", "0123456789abcdef", "d1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 2);
  EXPECT_EQ(s->pods, 1);
}

TEST(MissLedger, TheSameEntryInTwoPodsIsOneEntryCompiledTwice) {
  MissLedger l;
  l.Record(Src("a"), {Triton("k1", "add")}, t0);
  MissRecord b = l.Record(Src("b"), {Triton("k1", "add"), Triton("k9", "rare")}, t0);
  EXPECT_EQ(b.new_for_pod[MissFramework::kTriton], 2) << "a compile in pod b, counted for b";
  EXPECT_EQ(b.new_for_cache, 1u) << "only k9 is new to the cache";
  auto s = l.Summary("ml", "llama", "0123456789abcdef", "d1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 2);
  EXPECT_EQ(s->pods, 2);
  ASSERT_EQ(s->top.size(), 2u);
  EXPECT_EQ(s->top[0].detail, "kernel add") << "most pods first";
  EXPECT_EQ(s->top[0].pods, 2);
  EXPECT_EQ(s->top[0].framework, "triton");
  EXPECT_EQ(s->top[1].pods, 1);
}

TEST(MissLedger, OneEventPerIntervalNamingEverythingAddedSinceTheLast) {
  MissLedger l(MissLedger::Limits{.event_interval = std::chrono::seconds(60)});
  MissRecord a = l.Record(Src("a"), {Triton("k1", "add")}, t0);
  ASSERT_TRUE(a.event.has_value()) << "the first miss of a cache is told at once";
  EXPECT_EQ(a.event->details, std::vector<std::string>{"kernel add"});
  EXPECT_EQ(a.event->pods, std::vector<std::string>{"a"});
  MissRecord b = l.Record(Src("b"), {Triton("k1", "add")}, t0 + std::chrono::seconds(10));
  EXPECT_FALSE(b.event.has_value()) << "within the interval";
  MissRecord c = l.Record(Src("c"), {Triton("k2", "mul")}, t0 + std::chrono::seconds(20));
  EXPECT_FALSE(c.event.has_value());
  MissRecord d = l.Record(Src("c"), {Triton("k2", "mul")}, t0 + std::chrono::seconds(61));
  ASSERT_TRUE(d.event.has_value()) << "what was held back goes out with the next report";
  EXPECT_EQ(d.event->details, (std::vector<std::string>{"kernel add", "kernel mul"}));
  EXPECT_EQ(d.event->pods, (std::vector<std::string>{"b", "c"}));
  MissRecord e = l.Record(Src("c"), {Triton("k2", "mul")}, t0 + std::chrono::seconds(200));
  EXPECT_FALSE(e.event.has_value()) << "nothing new, nothing to tell";
}

TEST(MissLedger, CapsKeepMemoryBoundedAndCountWhatTheyDrop) {
  MissLedger l(MissLedger::Limits{.max_entries = 2, .max_pods = 2});
  MissRecord a = l.Record(Src("a"), {Triton("k1", "x"), Triton("k2", "y"), Triton("k3", "z")}, t0);
  EXPECT_EQ(a.accepted, 2u);
  EXPECT_EQ(a.dropped, 1u);
  l.Record(Src("b"), {Triton("k1", "x")}, t0);
  MissRecord c = l.Record(Src("c"), {Triton("k1", "x")}, t0);
  EXPECT_EQ(c.accepted, 0u);
  EXPECT_EQ(c.dropped, 1u) << "a third pod is over max_pods";
  EXPECT_EQ(l.Summary("ml", "llama", "0123456789abcdef", "d1")->count, 2);
}

MissSource SrcIn(const std::string& kernelcache, const std::string& pod) {
  return {"ml", kernelcache, "0123456789abcdef", "d1", pod, pod + "-uid"};
}

TEST(MissLedger, ARelabelledPodMovesAndHoldsOneCacheWhateverItsLabelSays) {
  MissLedger l;
  l.Record(SrcIn("shared", "b"), {Triton("k1", "x")}, t0);
  for (int i = 0; i < 1000; ++i) {
    l.Record(SrcIn("kc-" + std::to_string(i), "a"), {Triton("k1", "x"), Triton("k2", "y")}, t0);
  }
  l.Record(SrcIn("shared", "a"), {Triton("k1", "x"), Triton("k3", "z")}, t0);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(l.Summary("ml", "kc-" + std::to_string(i), "0123456789abcdef", "d1"))
        << "the pod left kc-" << i;
  }
  auto shared = l.Summary("ml", "shared", "0123456789abcdef", "d1");
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->count, 2) << "k1 (both pods) and k3";
  EXPECT_EQ(shared->pods, 2);
  // Leaving keeps what another pod also reported, and drops what only it had.
  l.Record(SrcIn("elsewhere", "a"), {Triton("k9", "w")}, t0);
  shared = l.Summary("ml", "shared", "0123456789abcdef", "d1");
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->count, 1);
  EXPECT_EQ(shared->pods, 1);
}

TEST(MissLedger, CapsHoldOverTheWholeLedgerNotPerCache) {
  MissLedger l(MissLedger::Limits{.max_caches = 2, .max_total_entries = 3, .max_total_pods = 3});
  EXPECT_EQ(l.Record(SrcIn("c1", "a"), {Triton("k1", "x"), Triton("k2", "y")}, t0).accepted, 2u);
  MissRecord b = l.Record(SrcIn("c2", "b"), {Triton("k1", "x"), Triton("k2", "y")}, t0);
  EXPECT_EQ(b.accepted, 1u);
  EXPECT_EQ(b.dropped, 1u) << "three entries in all";
  MissRecord c = l.Record(SrcIn("c3", "c"), {Triton("k1", "x")}, t0);
  EXPECT_EQ(c.dropped, 1u) << "a third cache is over max_caches";
  EXPECT_FALSE(l.Summary("ml", "c3", "0123456789abcdef", "d1").has_value());
  l.Record(SrcIn("c2", "d"), {}, t0);
  MissRecord e = l.Record(SrcIn("c2", "e"), {Triton("k1", "x")}, t0);
  EXPECT_EQ(e.dropped, 1u) << "a fourth pod is over max_total_pods";
  l.ForgetKernelCache("ml", "c1");
  EXPECT_EQ(l.Record(SrcIn("c3", "c"), {Triton("k1", "x"), Triton("k2", "y")}, t0).accepted, 2u)
      << "forgetting a cache frees its share of the caps";
}

TEST(MissLedger, EachDigestIsItsOwnCacheAndOldOnesAreForgotten) {
  MissLedger l;
  l.Record(Src("a", "d1"), {Triton("k1", "x")}, t0);
  l.Record(Src("b", "d2"), {Triton("k2", "y"), Triton("k3", "z")}, t0);
  EXPECT_EQ(l.Summary("ml", "llama", "0123456789abcdef", "d1")->count, 1);
  EXPECT_EQ(l.Summary("ml", "llama", "0123456789abcdef", "d2")->count, 2);
  l.ForgetOtherDigests("ml", "llama", "0123456789abcdef", "d2");
  EXPECT_FALSE(l.Summary("ml", "llama", "0123456789abcdef", "d1").has_value());
  EXPECT_TRUE(l.Summary("ml", "llama", "0123456789abcdef", "d2").has_value());
  l.ForgetKernelCache("ml", "llama");
  EXPECT_FALSE(l.Summary("ml", "llama", "0123456789abcdef", "d2").has_value());
}

TEST(MissLedger, AnEmptyReportIsNoMiss) {
  MissLedger l;
  MissRecord r = l.Record(Src("a"), {}, t0);
  EXPECT_EQ(r.accepted, 0u);
  EXPECT_FALSE(r.event.has_value());
  EXPECT_FALSE(l.Summary("ml", "llama", "0123456789abcdef", "d1").has_value());
}

}  // namespace
}  // namespace kc::op

namespace kc::op {
namespace {

// A pod's inbox files: the last report's list, per pod, per cache; a
// report that changes the list says so (the operator then reconciles: a
// harvest may be due), one that repeats it does not.
TEST(MissLedgerHarvest, KeepsEachPodsLastListAndSaysWhenItChanged) {
  MissLedger l;
  const core::HarvestListRef f1{1, 10, std::string(64, 'a')};
  const core::HarvestListRef f2{2, 15, std::string(64, 'b')};
  const Time t = Time{} + std::chrono::hours(1);
  EXPECT_FALSE(l.Record(Src("a"), {Triton("k1", "add")}, t).harvest_changed);
  EXPECT_TRUE(l.Record(Src("a"), {Triton("k1", "add")}, t, f1).harvest_changed);
  EXPECT_FALSE(l.Record(Src("a"), {Triton("k1", "add")}, t, f1).harvest_changed);
  EXPECT_TRUE(l.Record(Src("a"), {Triton("k1", "add")}, t, f2).harvest_changed);
  l.Record(Src("b"), {Triton("k1", "add")}, t, f1);
  l.Record(Src("c", "d2"), {Triton("k1", "add")}, t, f2);  // another generation
  auto pods = l.Harvestable("ml", "llama", "0123456789abcdef", "d1");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].uid, "a-uid");
  EXPECT_EQ(pods[0].list, f2);
  EXPECT_EQ(pods[1].uid, "b-uid");
  EXPECT_TRUE(l.Harvestable("ml", "llama", "0123456789abcdef", "d9").empty());
  EXPECT_TRUE(l.Record(Src("a"), {Triton("k1", "add")}, t).harvest_changed);  // list emptied
  EXPECT_EQ(l.Harvestable("ml", "llama", "0123456789abcdef", "d1").size(), 1u);
}

}  // namespace
}  // namespace kc::op
