#include "core/spec_validation.h"

#include <gtest/gtest.h>

#include <functional>

namespace kc::core {
namespace {

const std::string kDigest(64, 'a');

KernelCacheSpec Good() {
  KernelCacheSpec s;
  s.pod_selector.match_labels = {{"app", "llama"}};
  s.node_selector = {{"nvidia.com/gpu.present", "true"}};
  s.image = "registry.example/llama@sha256:" + kDigest;
  s.runtime = {{"pytorch", "2.11.0"}};
  s.warmup.command = {"python3", "/app/warmup.py"};
  s.storage.size = "20Gi";
  return s;
}

TEST(SpecValidation, GoodSpecHasNoErrorsOrWarnings) {
  SpecReport r = ValidateSpec(Good());
  EXPECT_TRUE(r.ok()) << r.errors[0];
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.image_not_pinned.empty());
  KernelCacheSpec s = Good();
  s.warmup.pod_annotations = {{"sidecar.istio.io/inject", "false"},
                              {"cluster-autoscaler.kubernetes.io/safe-to-evict", "false"}};
  EXPECT_TRUE(ValidateSpec(s).ok());
}

TEST(SpecValidation, Errors) {
  struct Case {
    const char* name;
    std::function<void(KernelCacheSpec&)> edit;
    const char* want;  // substring of one error
  } cases[] = {
      {"empty podSelector", [](auto& s) { s.pod_selector = {}; }, "spec.podSelector: empty"},
      {"bad operator",
       [](auto& s) {
         s.pod_selector.match_expressions = {{"tier", "Like", {"a"}}};
       },
       "spec.podSelector.matchExpressions[0].operator: \"Like\""},
      {"In without values",
       [](auto& s) {
         s.pod_selector.match_expressions = {{"tier", "In", {}}};
       },
       "matchExpressions[0].values: operator In needs at least one value"},
      {"Exists with values",
       [](auto& s) {
         s.pod_selector.match_expressions = {{"tier", "Exists", {"x"}}};
       },
       "takes no values"},
      {"bad label value",
       [](auto& s) {
         s.pod_selector.match_labels = {{"app", "-x-"}};
       },
       "spec.podSelector.matchLabels.app"},
      {"empty nodeSelector", [](auto& s) { s.node_selector = {}; }, "spec.nodeSelector: empty"},
      {"bad toleration",
       [](auto& s) {
         s.tolerations = {{{"operator", "Maybe"}}};
       },
       "spec.tolerations[0].operator"},
      {"no image", [](auto& s) { s.image = ""; }, "spec.image: required"},
      {"image with space", [](auto& s) { s.image = "a b"; }, "spec.image: \"a b\" contains"},
      {"runtime key",
       [](auto& s) {
         s.runtime = {{"PyTorch", "2"}};
       },
       "spec.runtime: key"},
      {"runtime value",
       [](auto& s) {
         s.runtime = {{"triton", ""}};
       },
       "spec.runtime.triton"},
      {"no command", [](auto& s) { s.warmup.command = {}; }, "spec.warmup.command: required"},
      {"podAnnotations key",
       [](auto& s) {
         s.warmup.pod_annotations = {{"bad key!", "x"}};
       },
       "spec.warmup.podAnnotations.bad key!: not a valid annotation key"},
      {"podAnnotations under the operator's prefix",
       [](auto& s) {
         s.warmup.pod_annotations = {{"kernelcache.io/fingerprint", "x"}};
       },
       "spec.warmup.podAnnotations.kernelcache.io/fingerprint: the kernelcache.io/ prefix"},
      {"podAnnotations too large",
       [](auto& s) {
         s.warmup.pod_annotations = {{"a", std::string(300000, 'x')}};
       },
       "spec.warmup.podAnnotations: more than 256 KiB"},
      {"empty command word", [](auto& s) { s.warmup.command = {""}; }, "spec.warmup.command"},
      {"cache view env",
       [](auto& s) {
         s.warmup.env = {{{"name", "HOME"}, {"value", "/"}},
                         {{"name", "TRITON_CACHE_DIR"}, {"value", "/x"}}};
       },
       "spec.warmup.env[1].name: TRITON_CACHE_DIR is set by the operator"},
      {"env without name",
       [](auto& s) {
         s.warmup.env = {{{"value", "x"}}};
       },
       "spec.warmup.env[0].name: required"},
      {"resources unknown key",
       [](auto& s) {
         s.warmup.resources = {{"limit", {{"cpu", "1"}}}};
       },
       "spec.warmup.resources.limit: unknown"},
      {"deadline", [](auto& s) { s.warmup.active_deadline_seconds = 10; },
       "spec.warmup.activeDeadlineSeconds: 10 is out of range; use 60 to 86400"},
      {"backoff", [](auto& s) { s.warmup.backoff_limit = 11; }, "spec.warmup.backoffLimit"},
      {"both storages", [](auto& s) { s.storage.existing_claim = "c"; },
       "spec.storage: set exactly one"},
      {"no storage", [](auto& s) { s.storage.size = ""; }, "spec.storage: set exactly one"},
      {"bad size", [](auto& s) { s.storage.size = "20GB"; }, "spec.storage.size: malformed"},
      {"tiny size", [](auto& s) { s.storage.size = "1Ki"; }, "below 1Mi"},
      {"bad claim name",
       [](auto& s) {
         s.storage.size = "";
         s.storage.existing_claim = "My_Claim";
       },
       "spec.storage.existingClaim"},
      {"class with claim",
       [](auto& s) {
         s.storage.size = "";
         s.storage.existing_claim = "c";
         s.storage.storage_class_name = "nfs";
       },
       "spec.storage.storageClassName"},
      {"wait", [](auto& s) { s.consume.wait_timeout_seconds = 0; },
       "spec.consume.waitTimeoutSeconds"},
      {"staleAfter", [](auto& s) { s.retention.stale_after = "1d"; },
       "spec.retention.staleAfter: malformed"},
      {"runAsUser root", [](auto& s) { s.security_context.run_as_user = 0; },
       "spec.securityContext.runAsUser: 0 is out of range; use 1 to 2147483647"},
      {"fsGroup too large", [](auto& s) { s.security_context.fs_group = 4294967296; },
       "spec.securityContext.fsGroup"},
      {"absentAfter", [](auto& s) { s.retention.absent_after = "7d"; },
       "spec.retention.absentAfter: malformed"},
      {"absentAfter over 10 years", [](auto& s) { s.retention.absent_after = "87601h"; },
       "spec.retention.absentAfter"},
      {"maxBytes", [](auto& s) { s.retention.max_bytes = "lots"; }, "spec.retention.maxBytes"},
      {"purge too often", [](auto& s) { s.retention.purge_schedule = "30m"; },
       "spec.retention.purgeSchedule: \"30m\" is shorter than 1h"},
  };
  for (const auto& c : cases) {
    KernelCacheSpec s = Good();
    c.edit(s);
    SpecReport r = ValidateSpec(s);
    std::string all;
    for (const auto& e : r.errors) all += e + "\n";
    EXPECT_NE(all.find(c.want), std::string::npos) << c.name << ": got\n" << all;
  }
}

TEST(SpecValidation, Warnings) {
  KernelCacheSpec s = Good();
  s.image = "registry.example/llama:latest";
  s.warmup.resources = {{"limits", {{"nvidia.com/gpu", "2"}}}};
  SpecReport r = ValidateSpec(s);
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("spec.image"), std::string::npos);
  EXPECT_NE(r.warnings[1].find("nvidia.com/gpu"), std::string::npos);
  EXPECT_EQ(r.image_not_pinned, r.warnings[0]);
}

TEST(SpecValidation, ImagePinned) {
  EXPECT_TRUE(ImagePinned("r.io/a/b@sha256:" + kDigest));
  EXPECT_TRUE(ImagePinned("r.io/a/b:1.0@sha256:" + kDigest));
  EXPECT_FALSE(ImagePinned("r.io/a/b:1.0"));
  EXPECT_FALSE(ImagePinned("r.io/a/b@sha256:abc"));
  EXPECT_FALSE(ImagePinned("@sha256:" + kDigest));
}

}  // namespace
}  // namespace kc::core
