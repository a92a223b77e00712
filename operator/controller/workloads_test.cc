#include "operator/controller/workloads.h"

#include <gtest/gtest.h>

#include "kube/store.h"
#include "testing/objects.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

Json Deployment(const std::string& ns, const std::string& name, Json containers) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", "1"}}},
          {"spec", {{"template", {{"spec", {{"containers", std::move(containers)}}}}}}}};
}

Json Server(int gpus) {
  return {{"name", "server"},
          {"image", "srv:1"},
          {"ports", {{{"containerPort", 8000}}}},
          {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

core::KernelCache Kc(const std::string& kind, const std::string& name) {
  core::KernelCache kc = testutil::KernelCacheNamed("srv");
  kc.spec.warmup.server = core::ServerSpec{};
  kc.spec.warmup.server->workload_ref = {kind, name};
  return kc;
}

TEST(ResolveWorkload, FillsTheTemplateFromTheNamedWorkload) {
  kube::Store deployments, statefulsets;
  deployments.Upsert(Deployment("ml", "srv", {Server(2)}));
  deployments.Upsert(Deployment("other", "srv", {Server(8)}));
  statefulsets.Upsert(Deployment("ml", "sts", {Server(4)}));
  Caches caches;
  caches.deployments = {&deployments};
  caches.statefulsets = {&statefulsets};

  struct Case {
    std::string kind, name;
    int64_t want_gpus;  // 0: an error
    std::string want_error;
  };
  const Case cases[] = {
      {"Deployment", "srv", 2, ""},
      {"StatefulSet", "sts", 4, ""},
      {"Deployment", "sts", 0,
       "spec.warmup.server.workloadRef: Deployment sts not found in "
       "namespace ml"},
      {"StatefulSet", "srv", 0, "StatefulSet srv not found"},
  };
  for (const auto& c : cases) {
    core::KernelCache kc = Kc(c.kind, c.name);
    std::vector<std::string> errors;
    ResolveWorkload(&kc, caches, &errors);
    if (c.want_gpus == 0) {
      ASSERT_EQ(errors.size(), 1u) << c.name;
      EXPECT_NE(errors[0].find(c.want_error), std::string::npos) << errors[0];
      continue;
    }
    EXPECT_TRUE(errors.empty()) << c.name << ": " << errors[0];
    EXPECT_TRUE(kc.spec.warmup.server->from_workload);
    EXPECT_EQ(core::WarmupGpus(kc.spec), c.want_gpus) << c.name;
    EXPECT_TRUE(core::CheckServer(*kc.spec.warmup.server).size() <= 1)
        << "no source conflict once resolved";
  }
}

TEST(ResolveWorkload, ATemplateAWarmupMayNotRunIsAnError) {
  kube::Store deployments;
  Json d = Deployment("ml", "srv", {Server(2)});
  d["spec"]["template"]["spec"]["hostNetwork"] = true;
  deployments.Upsert(d);
  Caches caches;
  caches.deployments = {&deployments};
  core::KernelCache kc = Kc("Deployment", "srv");
  std::vector<std::string> errors;
  ResolveWorkload(&kc, caches, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("Deployment srv's spec.template.spec.hostNetwork"), std::string::npos)
      << errors[0];
}

TEST(ResolveWorkload, CommandFormAndInlineTemplatesAreLeftAlone) {
  Caches caches;
  core::KernelCache command;
  command.spec.warmup.command = {"true"};
  std::vector<std::string> errors;
  ResolveWorkload(&command, caches, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_FALSE(command.spec.warmup.server);
}

TEST(KeysNamingWorkload, OnlyKernelCachesOfTheNamespaceNamingIt) {
  auto kc = [](const std::string& ns, const std::string& name, const std::string& kind,
               const std::string& workload) {
    return Json{
        {"metadata", {{"namespace", ns}, {"name", name}}},
        {"spec",
         {{"warmup", {{"server", {{"workloadRef", {{"kind", kind}, {"name", workload}}}}}}}}}};
  };
  const std::vector<Json> kcs = {kc("ml", "a", "Deployment", "srv"),
                                 kc("ml", "b", "StatefulSet", "srv"),
                                 kc("other", "c", "Deployment", "srv"),
                                 kc("ml", "d", "Deployment", "other"),
                                 {{"metadata", {{"namespace", "ml"}, {"name", "e"}}}}};
  EXPECT_EQ(KeysNamingWorkload("Deployment", Deployment("ml", "srv", Json::array()), kcs),
            std::vector<std::string>{"ml/a"});
  EXPECT_EQ(KeysNamingWorkload("StatefulSet", Deployment("ml", "srv", Json::array()), kcs),
            std::vector<std::string>{"ml/b"});
}

}  // namespace
}  // namespace kc::op
