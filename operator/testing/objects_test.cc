#include "operator/testing/objects.h"

#include <gtest/gtest.h>

#include "core/fingerprint.h"
#include "operator/decide/views.h"

namespace kc::op::fixtures {
namespace {

TEST(ObjectsTest, GpuLabelsMakeAnEligibleFingerprint) {
  const Labels labels = GpuLabels();
  EXPECT_EQ(labels.at("nvidia.com/gpu.product"), "NVIDIA-H200");
  EXPECT_EQ(labels.at("nvidia.com/cuda.driver-version.full"), "580.159.04");
  EXPECT_EQ(GpuLabels("NVIDIA-A100-SXM4-40GB", "550.54.15", "8").at("nvidia.com/gpu.compute.major"),
            "8");
  auto facts = core::NodeFactsFromLabels(labels);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  auto upgraded = core::NodeFactsFromLabels(GpuLabels(kH200, "590.10.01"));
  ASSERT_TRUE(upgraded.ok());
  EXPECT_NE(*facts, *upgraded);
}

TEST(ObjectsTest, NodeJsonReadsBackAsTheNodeView) {
  const Labels labels = GpuLabels(kH200, "590.10.01");
  EXPECT_EQ(NodeViewFromJson(GpuNodeJson("gpu-1", labels)), GpuNodeView("gpu-1", labels));
  EXPECT_EQ(GpuNodeView("gpu-1").gpu_allocatable, 8);
  EXPECT_TRUE(GpuNodeView("gpu-1").ready);
}

}  // namespace
}  // namespace kc::op::fixtures
