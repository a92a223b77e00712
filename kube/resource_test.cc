#include "kube/resource.h"

#include <gtest/gtest.h>

namespace kc::kube {
namespace {

TEST(ResourcePathTest, Table) {
  struct Case {
    const Resource* r;
    std::string ns, name, sub, want;
  };
  const Case cases[] = {
      {&resources::kConfigMaps, "ns", "", "", "/api/v1/namespaces/ns/configmaps"},
      {&resources::kConfigMaps, "ns", "cm", "", "/api/v1/namespaces/ns/configmaps/cm"},
      {&resources::kConfigMaps, "", "", "", "/api/v1/configmaps"},
      {&resources::kNodes, "ignored", "n1", "", "/api/v1/nodes/n1"},
      {&resources::kJobs, "ns", "j", "status", "/apis/batch/v1/namespaces/ns/jobs/j/status"},
      {&resources::kCustomResourceDefinitions, "", "a.b.io", "",
       "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.io"},
      {&resources::kLeases, "kube-system", "", "",
       "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ResourcePath(*c.r, c.ns, c.name, c.sub), c.want);
  }
}

TEST(ResourceTest, ApiVersion) {
  EXPECT_EQ(resources::kPods.ApiVersion(), "v1");
  EXPECT_EQ(resources::kJobs.ApiVersion(), "batch/v1");
}

}  // namespace
}  // namespace kc::kube
