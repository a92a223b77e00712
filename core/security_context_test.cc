#include "core/security_context.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kc::core {
namespace {

KernelCacheSpec Spec(std::optional<int64_t> fs_group, std::optional<int64_t> uid) {
  KernelCacheSpec s;
  s.security_context.fs_group = fs_group;
  s.security_context.run_as_user = uid;
  return s;
}

TEST(SecurityContext, WarmupPod) {
  struct Case {
    const char* name;
    KernelCacheSpec spec;
    int64_t want_uid;
    int64_t want_group;
  } cases[] = {
      {"defaults: the initwarm image's user and group", Spec(std::nullopt, std::nullopt), 65532,
       65532},
      {"fsGroup only", Spec(2000, std::nullopt), 65532, 2000},
      {"runAsUser only", Spec(std::nullopt, 1000), 1000, 65532},
      {"both", Spec(3000, 1001), 1001, 3000},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CacheGroup(c.spec), c.want_group) << c.name;
    EXPECT_EQ(WarmupUid(c.spec), c.want_uid) << c.name;
    const PodSecurity s = WarmupPodSecurity(c.spec);
    EXPECT_EQ(s.pod["runAsUser"], c.want_uid) << c.name;
    EXPECT_EQ(s.pod["runAsGroup"], c.want_group) << c.name;
    EXPECT_EQ(s.pod["fsGroup"], c.want_group) << c.name;
    EXPECT_EQ(s.pod["fsGroupChangePolicy"], "OnRootMismatch") << c.name;
    EXPECT_EQ(s.pod["runAsNonRoot"], true) << c.name;
    EXPECT_EQ(s.pod["seccompProfile"]["type"], "RuntimeDefault") << c.name;
    EXPECT_EQ(s.container["allowPrivilegeEscalation"], false) << c.name;
    EXPECT_EQ(s.container["capabilities"]["drop"], Json::array({"ALL"})) << c.name;
    EXPECT_EQ(s.container["runAsNonRoot"], true) << c.name;
    EXPECT_FALSE(s.container.contains("privileged")) << c.name;
  }
}

TEST(SecurityContext, ModelPodGate) {
  struct Case {
    const char* name;
    KernelCacheSpec spec;
    const char* pod_spec;
    int64_t want_uid;
    int64_t want_gid;
    std::vector<int64_t> want_groups;
  } cases[] = {
      {"nothing stated: initwarm's user, the cache group, and the group for the app",
       Spec(std::nullopt, std::nullopt),
       R"({"containers": [{"name": "app"}]})",
       65532,
       65532,
       {65532}},
      {"pod-level ids are the app's",
       Spec(std::nullopt, std::nullopt),
       R"({"securityContext": {"runAsUser": 1000, "runAsGroup": 1000},
           "containers": [{"name": "app"}]})",
       1000,
       1000,
       {65532}},
      {"the first container's own ids win over the pod's",
       Spec(std::nullopt, std::nullopt),
       R"({"securityContext": {"runAsUser": 1000, "runAsGroup": 1000},
           "containers": [{"name": "app", "securityContext": {"runAsUser": 2000, "runAsGroup": 3000}}]})",
       2000,
       3000,
       {65532}},
      {"an app running as root: the gate stays non-root",
       Spec(std::nullopt, std::nullopt),
       R"({"securityContext": {"runAsUser": 0}, "containers": [{"name": "app"}]})",
       65532,
       65532,
       {65532}},
      {"existing supplemental groups are kept, the cache group appended",
       Spec(4000, std::nullopt),
       R"({"securityContext": {"runAsUser": 1000, "supplementalGroups": [44, 107]},
           "containers": [{"name": "app"}]})",
       1000,
       4000,
       {44, 107, 4000}},
      {"already a member: not added twice",
       Spec(std::nullopt, std::nullopt),
       R"({"securityContext": {"supplementalGroups": [65532]}, "containers": []})",
       65532,
       65532,
       {65532}},
      {"the cache group is the pod's fsGroup: nothing to add",
       Spec(5000, std::nullopt),
       R"({"securityContext": {"fsGroup": 5000, "runAsUser": 1000}, "containers": [{}]})",
       1000,
       5000,
       {}},
      {"hostile values are ignored, not thrown on",
       Spec(std::nullopt, std::nullopt),
       R"({"securityContext": {"runAsUser": "1000", "runAsGroup": -5, "supplementalGroups": "x"},
           "containers": "nope"})",
       65532,
       65532,
       {65532}},
  };
  for (const auto& c : cases) {
    const GateSecurity g = ModelPodSecurity(c.spec, Json::parse(c.pod_spec));
    EXPECT_EQ(g.container["runAsUser"], c.want_uid) << c.name;
    EXPECT_EQ(g.container["runAsGroup"], c.want_gid) << c.name;
    EXPECT_EQ(g.container["runAsNonRoot"], true) << c.name;
    EXPECT_EQ(g.container["allowPrivilegeEscalation"], false) << c.name;
    EXPECT_EQ(g.container["capabilities"]["drop"], Json::array({"ALL"})) << c.name;
    EXPECT_EQ(g.supplemental_groups, c.want_groups) << c.name;
  }
}

TEST(SecurityContext, MissWatcherRunsAsItsOwnUidInTheCacheGroup) {
  for (const auto& [spec, want_group] : std::vector<std::pair<KernelCacheSpec, int64_t>>{
           {Spec(std::nullopt, std::nullopt), kDefaultCacheGroup}, {Spec(2000, 1000), 2000}}) {
    const Json c = MissWatcherSecurity(spec, 70001);
    EXPECT_EQ(c["runAsUser"], 70001);
    EXPECT_EQ(c["runAsGroup"], want_group);
    EXPECT_EQ(c["readOnlyRootFilesystem"], true);
    EXPECT_EQ(c["runAsNonRoot"], true);
    EXPECT_EQ(c["allowPrivilegeEscalation"], false);
    EXPECT_EQ(c["capabilities"]["drop"], Json::array({"ALL"}));
  }
}

TEST(SecurityContext, StatedUidsOfThePodAndEveryContainer) {
  struct Case {
    const char* name;
    Json pod_spec;
    std::vector<int64_t> want;
  } cases[] = {
      {"none", Json::object(), {}},
      {"not an object", Json::array(), {}},
      {"pod and containers",
       {{"securityContext", {{"runAsUser", 1000}}},
        {"initContainers", Json::array({{{"securityContext", {{"runAsUser", 0}}}}})},
        {"containers",
         Json::array({{{"name", "a"}}, {{"securityContext", {{"runAsUser", 65533}}}}})}},
       {1000, 0, 65533}},
      {"malformed values skipped",
       {{"securityContext", {{"runAsUser", "1000"}}}, {"containers", "x"}},
       {}},
  };
  for (const Case& c : cases) EXPECT_EQ(StatedUids(c.pod_spec), c.want) << c.name;
}

TEST(SecurityContext, ExportFixNamesTheCommandsAndTheField) {
  const std::string fix = ExportFix("/var/cache/kernelcache", 65532, 2000);
  for (const char* want :
       {"/var/cache/kernelcache", "uid 65532", "gid 2000", "chgrp 2000 <export> && chmod 2775",
        "chown 65532:2000", "spec.securityContext.fsGroup", "docs/permissions.md"}) {
    EXPECT_NE(fix.find(want), std::string::npos) << want << " in: " << fix;
  }
  // The operator shows a failed container's message cut to ~300 characters
  // (lastFailure): the commands must come before that.
  EXPECT_LT(fix.find("chmod 2775 <export>"), 220u) << fix;
  EXPECT_LT(fix.find("spec.securityContext.fsGroup"), 300u) << fix;
}

}  // namespace
}  // namespace kc::core
