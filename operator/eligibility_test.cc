#include "operator/eligibility.h"

#include <gtest/gtest.h>

#include "core/fingerprint.h"

namespace kc::op {
namespace {

using Labels = std::map<std::string, std::string>;

TEST(NodeSelectorMatchesTest, Table) {
  struct Case {
    const char* name;
    Labels selector;
    Labels labels;
    bool want;
  } cases[] = {
      {"empty selector matches all", {}, {{"a", "b"}}, true},
      {"empty selector, no labels", {}, {}, true},
      {"equal", {{"a", "b"}}, {{"a", "b"}, {"c", "d"}}, true},
      {"value differs", {{"a", "b"}}, {{"a", "x"}}, false},
      {"key missing", {{"a", "b"}}, {{"c", "d"}}, false},
      {"every key needed", {{"a", "b"}, {"c", "d"}}, {{"a", "b"}}, false},
      {"empty value must match empty", {{"a", ""}}, {{"a", ""}}, true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NodeSelectorMatches(c.selector, c.labels), c.want) << c.name;
  }
}

TEST(EligibilityOfTest, Table) {
  const std::string upgrade(core::labels::kDriverUpgradeState);
  core::KernelCacheSpec spec;
  spec.node_selector = {{"gpu", "true"}};
  auto node = [](Labels labels) {
    NodeView n;
    n.name = "gpu-1";
    n.labels = std::move(labels);
    n.gpu_allocatable = 8;
    return n;
  };
  struct Case {
    const char* name;
    NodeView node;
    bool selected;
    std::string reason;
  } cases[] = {
      {"eligible", node({{"gpu", "true"}}), true, ""},
      {"not selected", node({{"gpu", "false"}}), false, ""},
      {"cordoned",
       [&] {
         auto n = node({{"gpu", "true"}});
         n.unschedulable = true;
         return n;
       }(),
       true, "cordoned"},
      {"not ready",
       [&] {
         auto n = node({{"gpu", "true"}});
         n.ready = false;
         return n;
       }(),
       true, "NotReady"},
      {"cordoned before NotReady",
       [&] {
         auto n = node({{"gpu", "true"}});
         n.unschedulable = true;
         n.ready = false;
         return n;
       }(),
       true, "cordoned"},
      {"driver upgrading", node({{"gpu", "true"}, {upgrade, "upgrade-required"}}), true,
       "GPU driver upgrade: upgrade-required"},
      {"driver upgrade done", node({{"gpu", "true"}, {upgrade, "upgrade-done"}}), true, ""},
      {"driver upgrade label empty", node({{"gpu", "true"}, {upgrade, ""}}), true, ""},
      {"no GPU allocatable",
       [&] {
         auto n = node({{"gpu", "true"}});
         n.gpu_allocatable = 0;
         return n;
       }(),
       true, "no allocatable nvidia.com/gpu"},
  };
  for (const auto& c : cases) {
    const NodeEligibility e = EligibilityOf(c.node, spec);
    EXPECT_EQ(e.selected, c.selected) << c.name;
    EXPECT_EQ(e.reason, c.reason) << c.name;
    EXPECT_EQ(e.eligible(), c.selected && c.reason.empty()) << c.name;
  }
}

}  // namespace
}  // namespace kc::op
