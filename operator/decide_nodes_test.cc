// Table test of Decide's node step.
#include "operator/decide_nodes.h"

#include <gtest/gtest.h>

namespace kc::op::decide {
namespace {

using Labels = std::map<std::string, std::string>;

Labels Gpu(const std::string& product) {
  return {{"nvidia.com/gpu.product", product},
          {"nvidia.com/gpu.compute.major", "9"},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.full", "580.159.04"},
          {"nvidia.com/cuda.runtime-version.full", "13.0"},
          {"nvidia.com/gpu.present", "true"},
          {"kubernetes.io/arch", "amd64"}};
}

NodeView Node(const std::string& name, Labels labels) {
  NodeView n;
  n.name = name;
  n.labels = std::move(labels);
  n.gpu_allocatable = 8;
  return n;
}

TEST(GroupNodesTest, GroupsByFingerprintAndSplitsEligibility) {
  core::KernelCacheSpec spec;
  spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  NodeView cordoned = Node("h200-2", Gpu("NVIDIA-H200"));
  cordoned.unschedulable = true;
  Labels unlabelled = {{"nvidia.com/gpu.present", "true"}};
  Labels unselected = Gpu("NVIDIA-A100");
  unselected["nvidia.com/gpu.present"] = "false";
  const NodeGroups g =
      GroupNodes(spec,
                 {Node("h200-1", Gpu("NVIDIA-H200")), cordoned, Node("a100-1", Gpu("NVIDIA-A100")),
                  Node("bare", unlabelled), Node("other", unselected)},
                 nullptr);
  ASSERT_EQ(g.groups.size(), 2u);
  EXPECT_EQ(g.node_fp.count("other"), 0u);
  EXPECT_EQ(g.node_fp.count("bare"), 0u);
  const Group& h200 = g.groups.at(g.node_fp.at("h200-1"));
  EXPECT_EQ(h200.nodes, 2);
  EXPECT_EQ(h200.eligible, std::vector<std::string>{"h200-1"});
  EXPECT_EQ(h200.ineligible, std::vector<std::string>{"h200-2 (cordoned)"});
  EXPECT_EQ(h200.label_sets.size(), 1u);
  EXPECT_EQ(g.node_fp.at("h200-2"), g.node_fp.at("h200-1"));
  EXPECT_NE(g.node_fp.at("a100-1"), g.node_fp.at("h200-1"));
  EXPECT_TRUE(g.missing_labels.value);
  EXPECT_EQ(g.missing_labels.reason, "MissingGpuLabels");
  ASSERT_EQ(g.effects.events.size(), 1u);
  EXPECT_EQ(g.effects.events[0].event_reason, "NodeMissingLabels");

  // Named by the last condition already: no second Event.
  core::Condition prev;
  prev.status = "True";
  prev.message = g.missing_labels.message;
  const NodeGroups again = GroupNodes(spec, {Node("bare", unlabelled)}, &prev);
  EXPECT_TRUE(again.effects.events.empty());

  const NodeGroups none = GroupNodes(spec, {}, nullptr);
  EXPECT_FALSE(none.missing_labels.value);
  EXPECT_EQ(none.missing_labels.reason, "AllLabelled");
}

}  // namespace
}  // namespace kc::op::decide
