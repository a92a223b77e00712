#include "operator/decide/label_set.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kc::op {
namespace {

const LabelSet::Map kGpuNode = {{"kubernetes.io/arch", "amd64"},
                                {"nvidia.com/cuda.driver-version.full", "570.124.06"},
                                {"nvidia.com/cuda.runtime-version.full", "12.8"},
                                {"nvidia.com/gpu.compute.major", "9"},
                                {"nvidia.com/gpu.compute.minor", "0"},
                                {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                                {"topology.kubernetes.io/zone", "zone-1"}};

TEST(LabelSetTest, ReadsLikeTheMapItWasBuiltFrom) {
  const LabelSet s(kGpuNode);
  EXPECT_EQ(s.size(), kGpuNode.size());
  EXPECT_EQ(s.ToMap(), kGpuNode);
  ASSERT_NE(s.Find("nvidia.com/gpu.product"), nullptr);
  EXPECT_EQ(*s.Find("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(s.Find("nvidia.com/gpu"), nullptr);
  EXPECT_EQ(s.Find("zzz"), nullptr);
  EXPECT_EQ(s.Find(""), nullptr);
  EXPECT_TRUE(s.Has("topology.kubernetes.io/zone", "zone-1"));
  EXPECT_FALSE(s.Has("topology.kubernetes.io/zone", "zone-2"));
  EXPECT_EQ(s.at("kubernetes.io/arch"), "amd64");
  EXPECT_THROW((void)s.at("missing"), std::out_of_range);
  std::vector<std::string> keys;
  for (const auto& [k, v] : s) {
    keys.push_back(k);
    EXPECT_EQ(kGpuNode.at(k), v);
  }
  std::vector<std::string> want;
  for (const auto& [k, v] : kGpuNode) want.push_back(k);
  EXPECT_EQ(keys, want);  // key order
  EXPECT_TRUE(LabelSet().empty());
  EXPECT_TRUE(LabelSet(LabelSet::Map{}).empty());
}

TEST(LabelSetTest, EqualityIsByContentAcrossSeparatelyBuiltSets) {
  const LabelSet a(kGpuNode);
  const LabelSet b(kGpuNode);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, a.With("topology.kubernetes.io/zone", "zone-2"));
  EXPECT_NE(a, a.Without("kubernetes.io/arch"));
  EXPECT_EQ(a, a.With("x", "1").Without("x"));
  EXPECT_EQ(a.With("x", "1").at("x"), "1");
  EXPECT_EQ(a.size(), kGpuNode.size());  // With/Without leave the original alone
}

TEST(LabelSetTest, StringsAreHeldOnceAndDroppedWithTheLastSetHoldingThem) {
  const size_t before = LabelSet::InternedStrings();
  {
    std::vector<LabelSet> fleet;
    for (int i = 0; i < 100; ++i) {
      LabelSet::Map m = kGpuNode;
      m["kubernetes.io/hostname"] = "interned-test-node-" + std::to_string(i);
      fleet.emplace_back(m);
    }
    // 7 shared keys and values, one more key, 100 distinct hostnames.
    EXPECT_EQ(LabelSet::InternedStrings() - before, 2 * kGpuNode.size() + 1 + 100);
    const LabelSet copy = fleet[3];  // a copy shares, it interns nothing
    EXPECT_EQ(LabelSet::InternedStrings() - before, 2 * kGpuNode.size() + 1 + 100);
    EXPECT_EQ(copy, fleet[3]);
  }
  EXPECT_EQ(LabelSet::InternedStrings(), before);
}

TEST(LabelSetTest, FactsAndFingerprintLabelsAreTheCoreFunctionsOfTheMap) {
  const LabelSet s(kGpuNode);
  const auto& facts = s.Facts();
  auto want = core::NodeFactsFromLabels(kGpuNode);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(*facts, *want);
  EXPECT_EQ(&s.Facts(), &facts);  // computed once
  EXPECT_EQ(s.FingerprintLabels().ToMap(), core::FingerprintLabels(kGpuNode));
  EXPECT_EQ(s.FingerprintLabels().Find("topology.kubernetes.io/zone"), nullptr);

  const LabelSet partial = s.Without("nvidia.com/gpu.product");
  EXPECT_FALSE(partial.Facts().ok());
  EXPECT_EQ(partial.Facts().status().message(),
            core::NodeFactsFromLabels(partial.ToMap()).status().message());
  EXPECT_TRUE(partial.FingerprintLabels().empty());
}

}  // namespace
}  // namespace kc::op
