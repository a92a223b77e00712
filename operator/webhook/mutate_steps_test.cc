#include "operator/webhook/mutate_steps.h"

#include <gtest/gtest.h>

#include "core/gate_report.h"
#include "operator/webhook/mutate.h"
#include "testing/objects.h"

namespace kc::webhook {
namespace {

const InjectSettings kSettings = {"registry.example/initwarm:0.4.0", "http://resolve",
                                  "kernelcache-system", "0.4.0"};

core::KernelCache Kc(const std::string& name, std::map<std::string, std::string> match,
                     const std::string& ns = "ml") {
  core::KernelCache kc = testutil::KernelCacheNamed(name, ns);
  kc.spec.pod_selector.match_labels = std::move(match);
  return kc;
}

Json PodWith(const Json& labels, const Json& annotations = Json::object()) {
  return {{"metadata", {{"name", "llama-0"}, {"labels", labels}, {"annotations", annotations}}},
          {"spec", {{"containers", Json::array({{{"name", "server"}}})}}}};
}

TEST(CoversItemTest, Table) {
  struct Case {
    const char* name;
    Json theirs, ours;
    bool covers;
  };
  const Case cases[] = {
      {"equal scalars", 1, 1, true},
      {"different scalars", 1, 2, false},
      {"object with extra defaults",
       {{"name", "a"}, {"readOnly", true}, {"x", 1}},
       {{"name", "a"}, {"readOnly", true}},
       true},
      {"object missing a field", {{"name", "a"}}, {{"name", "a"}, {"readOnly", true}}, false},
      {"objects in order with extras between", Json::array({{{"n", 1}}, {{"n", 9}}, {{"n", 2}}}),
       Json::array({{{"n", 1}}, {{"n", 2}}}), true},
      {"objects out of order", Json::array({{{"n", 2}}, {{"n", 1}}}),
       Json::array({{{"n", 1}}, {{"n", 2}}}), false},
      {"scalar arrays need the same length", Json::array({"a", "b"}), Json::array({"a"}), false},
      {"not an object", "x", {{"name", "a"}}, false},
  };
  for (const Case& t : cases) EXPECT_EQ(CoversItem(t.theirs, t.ours), t.covers) << t.name;
}

TEST(SelectKernelCacheTest, OneMatchIsSelected) {
  const std::vector<core::KernelCache> kcs = {Kc("llama", {{"app", "llama"}}),
                                              Kc("other", {{"app", "other"}})};
  const Selection s = SelectKernelCache(PodWith({{"app", "llama"}}), "ml", kcs, kSettings);
  ASSERT_NE(s.kc, nullptr);
  EXPECT_EQ(s.kc->metadata.name, "llama");
  EXPECT_EQ(s.skipped, "");
  EXPECT_TRUE(s.events.empty());
}

TEST(SelectKernelCacheTest, WhyNone) {
  core::KernelCache deleting = Kc("deleting", {{"app", "llama"}});
  deleting.metadata.deletion_timestamp = api::Time{};
  struct Case {
    const char* name;
    Json pod;
    std::string ns;
    std::vector<core::KernelCache> kcs;
    std::string skipped;
  };
  const Case cases[] = {
      {"operator namespace",
       PodWith({{"app", "llama"}}),
       "kernelcache-system",
       {Kc("llama", {{"app", "llama"}}, "kernelcache-system")},
       "namespace kernelcache-system is the operator's"},
      {"opted out by label",
       PodWith({{"app", "llama"}, {"kernelcache.io/inject", "false"}}),
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "the pod says kernelcache.io/inject: \"false\""},
      {"opted out by annotation",
       PodWith({{"app", "llama"}}, {{"kernelcache.io/inject", "false"}}),
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "the pod says kernelcache.io/inject: \"false\""},
      {"no selector matches",
       PodWith({{"app", "x"}}),
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "no KernelCache selects this pod"},
      {"another namespace",
       PodWith({{"app", "llama"}}),
       "ml",
       {Kc("llama", {{"app", "llama"}}, "prod")},
       "no KernelCache selects this pod"},
      {"being deleted",
       PodWith({{"app", "llama"}}),
       "ml",
       {deleting},
       "no KernelCache selects this pod"},
      {"empty selector",
       PodWith({{"app", "llama"}}),
       "ml",
       {Kc("all", {})},
       "no KernelCache selects this pod"},
  };
  for (const Case& t : cases) {
    const Selection s = SelectKernelCache(t.pod, t.ns, t.kcs, kSettings);
    EXPECT_EQ(s.kc, nullptr) << t.name;
    EXPECT_EQ(s.skipped, t.skipped) << t.name;
    EXPECT_TRUE(s.events.empty()) << t.name;
  }
}

TEST(SelectKernelCacheTest, SeveralMatchesWarnOnEach) {
  const std::vector<core::KernelCache> kcs = {Kc("b", {{"app", "llama"}}),
                                              Kc("a", {{"app", "llama"}})};
  const Selection s = SelectKernelCache(PodWith({{"app", "llama"}}), "ml", kcs, kSettings);
  EXPECT_EQ(s.kc, nullptr);
  EXPECT_EQ(s.skipped, "KernelCaches a, b all select this pod");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].kc_name, "b");
  EXPECT_EQ(s.events[1].kc_name, "a");
  EXPECT_EQ(s.events[0].reason, kReasonAmbiguous);
  EXPECT_NE(s.events[0].message.find("pod llama-0 in namespace ml"), std::string::npos);
  ASSERT_EQ(s.warnings.size(), 1u);
}

TEST(InjectVolumesTest, AddsMissingKeepsDifferent) {
  Json spec = {{"volumes", Json::array({{{"name", "cache"}, {"emptyDir", Json::object()}}})}};
  std::vector<std::string> conflicts;
  InjectVolumes(spec,
                {{{"name", "cache"}, {"persistentVolumeClaim", {{"claimName", "c"}}}},
                 {{"name", "run"}, {"emptyDir", Json::object()}}},
                conflicts);
  ASSERT_EQ(spec["volumes"].size(), 2u);
  EXPECT_TRUE(spec["volumes"][0].contains("emptyDir"));  // the pod's kept
  EXPECT_EQ(spec["volumes"][1]["name"], "run");
  EXPECT_EQ(conflicts, std::vector<std::string>{
                           "volume cache differs from the injected one (kept the pod's)"});
  Json none = Json::object();
  InjectVolumes(none, {{{"name", "run"}}}, conflicts);
  EXPECT_EQ(none["volumes"], Json::array({{{"name", "run"}}}));
}

TEST(InjectMountsTest, ByMountPath) {
  Json c = {{"name", "app"},
            {"volumeMounts", Json::array({{{"name", "mine"}, {"mountPath", "/cache"}}})}};
  std::vector<std::string> conflicts;
  InjectMounts(
      c, "app",
      {{{"name", "cache"}, {"mountPath", "/cache"}}, {{"name", "run"}, {"mountPath", "/run/kc"}}},
      conflicts);
  ASSERT_EQ(c["volumeMounts"].size(), 2u);
  EXPECT_EQ(c["volumeMounts"][0]["name"], "mine");
  EXPECT_EQ(conflicts, std::vector<std::string>{"container app: mount at /cache differs from the "
                                                "injected one (kept the container's)"});
}

TEST(InjectEnvTest, ByName) {
  Json c = {
      {"env", Json::array({{{"name", "A"}, {"value", "mine"}}, {{"name", "B"}, {"value", "1"}}})}};
  std::vector<std::string> conflicts;
  InjectEnv(c, "app", {{"A", "ours"}, {"B", "1"}, {"C", "3"}}, conflicts);
  EXPECT_EQ(c["env"], Json::array({{{"name", "A"}, {"value", "mine"}},
                                   {{"name", "B"}, {"value", "1"}},
                                   {{"name", "C"}, {"value", "3"}}}));
  EXPECT_EQ(conflicts,
            std::vector<std::string>{"container app: env A differs from the cache view's (kept the "
                                     "container's)"});
}

TEST(InjectSupplementalGroupsTest, SetsOrLeaves) {
  Json spec = {{"securityContext", "not an object"}};
  InjectSupplementalGroups(spec, {1000, 2000});
  EXPECT_EQ(spec["securityContext"]["supplementalGroups"], Json::array({1000, 2000}));
  Json untouched = Json::object();
  InjectSupplementalGroups(untouched, {});
  EXPECT_EQ(untouched, Json::object());
}

TEST(InjectGateTest, FirstAndOnce) {
  const Json gate = {{"name", kGateName}, {"image", "initwarm"}};
  Json spec = {{"initContainers", Json::array({{{"name", "setup"}}})}};
  std::vector<std::string> conflicts;
  InjectGate(spec, gate, conflicts);
  ASSERT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_EQ(spec["initContainers"][0], gate);
  InjectGate(spec, gate, conflicts);  // already there: nothing new
  EXPECT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_TRUE(conflicts.empty());
  InjectGate(spec, {{"name", kGateName}, {"image", "other"}}, conflicts);
  EXPECT_EQ(conflicts, std::vector<std::string>{"init container kernelcache-wait differs from "
                                                "the injected one (kept the pod's)"});
}

TEST(InjectConsumerLabelTest, SetsOrKeepsAnother) {
  Json meta = Json::object();
  std::vector<std::string> conflicts;
  InjectConsumerLabel(meta, "llama", conflicts);
  EXPECT_EQ(meta["labels"][core::kConsumerLabel], "llama");
  InjectConsumerLabel(meta, "llama", conflicts);
  EXPECT_TRUE(conflicts.empty());
  InjectConsumerLabel(meta, "other", conflicts);
  EXPECT_EQ(meta["labels"][core::kConsumerLabel], "llama");
  ASSERT_EQ(conflicts.size(), 1u);
}

TEST(InjectAnnotationsTest, ConflictsListedOrRemoved) {
  Json meta = {{"annotations", {{kAnnotationConflicts, "old"}, {"mine", "x"}}}};
  InjectAnnotations(meta, "llama", "Copy", "0.4.0", {});
  EXPECT_EQ(meta["annotations"], (Json{{kAnnotationInjected, "llama"},
                                       {kAnnotationMode, "Copy"},
                                       {kAnnotationVersion, "0.4.0"},
                                       {"mine", "x"}}));
  InjectAnnotations(meta, "llama", "Shared", "0.4.0", {"a", "b"});
  EXPECT_EQ(meta["annotations"][kAnnotationConflicts], "a; b");
  EXPECT_EQ(meta["annotations"][kAnnotationMode], "Shared");
}

TEST(DropCreatedEmptyListsTest, OnlyWhatWasAdded) {
  const Json before = {
      {"spec",
       {{"volumes", Json::array()},
        {"containers", Json::array({{{"name", "a"}}, {{"name", "b"}, {"env", Json::array()}}})}}}};
  Json spec = {
      {"volumes", Json::array()},
      {"initContainers", Json::array()},
      {"containers",
       Json::array({{{"name", "a"}, {"env", Json::array()}, {"volumeMounts", Json::array({1})}},
                    {{"name", "b"}, {"env", Json::array()}}})}};
  DropCreatedEmptyLists(before, spec);
  EXPECT_TRUE(spec.contains("volumes"));  // the pod had it
  EXPECT_FALSE(spec.contains("initContainers"));
  EXPECT_FALSE(spec["containers"][0].contains("env"));
  EXPECT_TRUE(spec["containers"][0].contains("volumeMounts"));  // not empty
  EXPECT_TRUE(spec["containers"][1].contains("env"));           // the pod had it
}

TEST(ContainerNameTest, NameOrIndex) {
  EXPECT_EQ(ContainerName({{"name", "server"}}, 0), "server");
  EXPECT_EQ(ContainerName(Json::object(), 3), "#3");
}

}  // namespace
}  // namespace kc::webhook
