#include "operator/decide/eligibility.h"

#include <gtest/gtest.h>

#include <functional>

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
    int64_t gpus_needed = 1;
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
      {"as many GPUs as the warmup needs", node({{"gpu", "true"}}), true, "", 8},
      {"fewer GPUs than the warmup needs", node({{"gpu", "true"}}), true,
       "8 allocatable nvidia.com/gpu, the warmup needs 16", 16},
      {"a server template that cannot be read: any GPU node", node({{"gpu", "true"}}), true, "", 0},
  };
  for (const auto& c : cases) {
    const NodeEligibility e = EligibilityOf(c.node, spec, c.gpus_needed);
    EXPECT_EQ(e.selected, c.selected) << c.name;
    EXPECT_EQ(e.reason, c.reason) << c.name;
    EXPECT_EQ(e.eligible(), c.selected && c.reason.empty()) << c.name;
  }
}

TEST(NodeChangeConcernsTest, Table) {
  const std::string driver(core::labels::kDriverFull), product(core::labels::kGpuProduct),
      upgrade(core::labels::kDriverUpgradeState);
  const Labels selector = {{product, "NVIDIA-H200"}};
  NodeView base;
  base.name = "gpu-1";
  base.labels = {{product, "NVIDIA-H200"},
                 {driver, "580.159.04"},
                 {std::string(core::labels::kComputeMajor), "9"},
                 {std::string(core::labels::kComputeMinor), "0"},
                 {std::string(core::labels::kRuntimeFull), "13.0"},
                 {std::string(core::labels::kRuntimeMajor), "13"},
                 {std::string(core::labels::kRuntimeMinor), "0"},
                 {"kubernetes.io/arch", "amd64"}};
  ASSERT_FALSE(base.labels.FingerprintLabels().empty()) << "base must have a fingerprint";
  base.gpu_allocatable = 8;
  auto with = [&](const std::function<void(NodeView&)>& f) {
    NodeView n = base;
    f(n);
    return n;
  };
  auto label = [&](const std::string& k, const std::string& v) {
    return with([&](NodeView& n) { n.labels = n.labels.With(k, v); });
  };
  NodeView b200 = label(product, "NVIDIA-B200");
  struct Case {
    const char* name;
    NodeView before, after;
    bool concerns;
  } cases[] = {
      {"unchanged", base, base, false},
      {"beta arch/os labels added (node controller)", base, with([](NodeView& n) {
         n.labels = n.labels.With("beta.kubernetes.io/arch", "amd64");
         n.labels = n.labels.With("beta.kubernetes.io/os", "linux");
       }),
       false},
      {"GFD timestamp", base, label("nvidia.com/gfd.timestamp", "1733300000"), false},
      {"driver label (fingerprint)", base, label(driver, "580.200.01"), true},
      {"compute capability label (fingerprint)", base,
       label(std::string(core::labels::kComputeMajor), "10"), true},
      {"fingerprint label removed", base,
       with([&](NodeView& n) { n.labels = n.labels.Without(driver); }), true},
      {"driver upgrade starts", base, label(upgrade, "upgrade-required"), true},
      {"cordoned", base, with([](NodeView& n) { n.unschedulable = true; }), true},
      {"NotReady", base, with([](NodeView& n) { n.ready = false; }), true},
      {"GPUs gone from allocatable", base, with([](NodeView& n) { n.gpu_allocatable = 0; }), true},
      {"leaves the selection", base, b200, true},
      {"enters the selection", b200, base, true},
      {"incomplete GPU labels, a GFD label arrives", with([&](NodeView& n) {
         n.labels = n.labels.Without(std::string(core::labels::kComputeMinor));
       }),
       base, true},
      {"incomplete GPU labels, a beta label arrives", with([&](NodeView& n) {
         n.labels = n.labels.Without(std::string(core::labels::kComputeMinor));
       }),
       with([&](NodeView& n) {
         n.labels = n.labels.Without(std::string(core::labels::kComputeMinor));
         n.labels = n.labels.With("beta.kubernetes.io/os", "linux");
       }),
       false},
      {"never selected, driver changes", b200, with([&](NodeView& n) {
         n.labels = b200.labels;
         n.labels = n.labels.With(driver, "580.200.01");
       }),
       false},
      {"never selected, cordoned", b200, with([&](NodeView& n) {
         n.labels = b200.labels;
         n.unschedulable = true;
       }),
       false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NodeChangeConcerns(selector, c.before, c.after), c.concerns) << c.name;
  }
  // An empty selector selects every node: only what Decide reads concerns it.
  EXPECT_FALSE(NodeChangeConcerns({}, base, label("beta.kubernetes.io/os", "linux")));
  EXPECT_TRUE(NodeChangeConcerns({}, b200, label(driver, "1.2.3")));
}

}  // namespace
}  // namespace kc::op
