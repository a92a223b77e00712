// Each section validator alone: a table of inputs and the error (or
// warning) it must give, plus the section's clean input giving none.
#include "core/spec_sections.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::core {
namespace {

struct Want {
  const char* name;
  SpecReport report;
  const char* error;    // substring of one error; "" = no error
  const char* warning;  // substring of one warning; "" = no warning
};

bool AnyHas(const std::vector<std::string>& lines, const char* want) {
  for (const auto& l : lines) {
    if (l.find(want) != std::string::npos) return true;
  }
  return false;
}

void ExpectAll(const std::vector<Want>& cases) {
  for (const auto& c : cases) {
    if (*c.error == '\0') {
      EXPECT_TRUE(c.report.errors.empty()) << c.name << ": " << c.report.errors[0];
    } else {
      EXPECT_TRUE(AnyHas(c.report.errors, c.error)) << c.name;
    }
    if (*c.warning == '\0') {
      EXPECT_TRUE(c.report.warnings.empty()) << c.name << ": " << c.report.warnings[0];
    } else {
      EXPECT_TRUE(AnyHas(c.report.warnings, c.warning)) << c.name;
    }
  }
}

api::LabelSelector Labels(std::map<std::string, std::string> labels) {
  api::LabelSelector s;
  s.match_labels = std::move(labels);
  return s;
}

api::LabelSelector Expression(const std::string& op, std::vector<std::string> values) {
  api::LabelSelector s = Labels({{"app", "llama"}});
  s.match_expressions = {{"tier", op, std::move(values)}};
  return s;
}

TEST(SpecSections, PodSelector) {
  ExpectAll({
      {"labels", CheckPodSelector(Labels({{"app", "llama"}})), "", ""},
      {"In with values", CheckPodSelector(Expression("In", {"a"})), "", ""},
      {"DoesNotExist", CheckPodSelector(Expression("DoesNotExist", {})), "", ""},
      {"empty", CheckPodSelector({}), "spec.podSelector: empty", ""},
      {"bad key", CheckPodSelector(Labels({{"a b", "x"}})),
       "spec.podSelector.matchLabels: \"a b\" is not a valid label key", ""},
      {"bad value", CheckPodSelector(Labels({{"app", "-x-"}})), "spec.podSelector.matchLabels.app",
       ""},
      {"bad operator", CheckPodSelector(Expression("Like", {"a"})),
       "spec.podSelector.matchExpressions[0].operator: \"Like\"", ""},
      {"NotIn without values", CheckPodSelector(Expression("NotIn", {})),
       "operator NotIn needs at least one value", ""},
      {"Exists with values", CheckPodSelector(Expression("Exists", {"x"})), "takes no values", ""},
      {"bad expression value", CheckPodSelector(Expression("In", {"-"})),
       "matchExpressions[0].values: \"-\" is not a valid label value", ""},
  });
}

TEST(SpecSections, Nodes) {
  const std::map<std::string, std::string> gpu = {{"nvidia.com/gpu.present", "true"}};
  ExpectAll({
      {"gpu nodes", CheckNodes(gpu, {}), "", ""},
      {"toleration Exists", CheckNodes(gpu, {{{"operator", "Exists"}, {"key", "gpu"}}}), "", ""},
      {"empty", CheckNodes({}, {}), "spec.nodeSelector: empty", ""},
      {"bad label", CheckNodes({{"a b", "x"}}, {}), "spec.nodeSelector.a b: not a valid label", ""},
      {"bad operator", CheckNodes(gpu, {{{"operator", "Maybe"}}}),
       "spec.tolerations[0].operator: \"Maybe\" is not one of Exists, Equal", ""},
      {"operator not a string", CheckNodes(gpu, {{{"operator", 3}}}),
       "spec.tolerations[0].operator: expected a string", ""},
      {"Exists with value", CheckNodes(gpu, {{{"operator", "Exists"}, {"value", "x"}}}),
       "spec.tolerations[0].value: must be empty with operator Exists", ""},
  });
}

TEST(SpecSections, Image) {
  const std::string pinned = "r.io/llama@sha256:" + std::string(64, 'a');
  ExpectAll({
      {"pinned", CheckImage(pinned), "", ""},
      {"empty", CheckImage(""), "spec.image: required", ""},
      {"whitespace", CheckImage("a b"), "spec.image: \"a b\" contains whitespace", ""},
      {"tag", CheckImage("r.io/llama:latest"), "", "is not pinned by digest"},
  });
  SpecReport tag = CheckImage("r.io/llama:latest");
  ASSERT_EQ(tag.warnings.size(), 1u);
  EXPECT_EQ(tag.image_not_pinned, tag.warnings[0]);
  EXPECT_TRUE(CheckImage(pinned).image_not_pinned.empty());
}

TEST(SpecSections, Runtime) {
  ExpectAll({
      {"pytorch", CheckRuntime({{"pytorch", "2.11.0"}, {"triton", "3.6"}}), "", ""},
      {"none", CheckRuntime({}), "", ""},
      {"upper-case key", CheckRuntime({{"PyTorch", "2"}}), "spec.runtime: key \"PyTorch\"", ""},
      {"empty key", CheckRuntime({{"", "2"}}), "spec.runtime: key \"\"", ""},
      {"long key", CheckRuntime({{std::string(64, 'a'), "2"}}), "spec.runtime: key", ""},
      {"no version", CheckRuntime({{"triton", ""}}), "spec.runtime.triton: empty version", ""},
  });
}

WarmupSpec Warmup(void (*edit)(WarmupSpec&)) {
  WarmupSpec w;
  w.command = {"python3", "/app/warmup.py"};
  if (edit != nullptr) edit(w);
  return w;
}

TEST(SpecSections, Warmup) {
  ExpectAll({
      {"command", CheckWarmup(Warmup(nullptr)), "", ""},
      {"maxPasses too high",
       CheckWarmup(Warmup([](WarmupSpec& w) { w.convergence.max_passes = 11; })),
       "spec.warmup.convergence.maxPasses", ""},
      {"maxPasses 0 runs once",
       CheckWarmup(Warmup([](WarmupSpec& w) { w.convergence.max_passes = 0; })), "", ""},
      {"no command", CheckWarmup(Warmup([](WarmupSpec& w) { w.command = {}; })),
       "spec.warmup.command: required", ""},
      {"empty command word", CheckWarmup(Warmup([](WarmupSpec& w) { w.command = {""}; })),
       "spec.warmup.command: required", ""},
      {"env without name", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.env = {{{"value", "x"}}};
       })),
       "spec.warmup.env[0].name: required", ""},
      {"env bad name", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.env = {{{"name", "1X"}}};
       })),
       "spec.warmup.env[0].name: \"1X\" is not a valid environment variable name", ""},
      {"env reserved", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.env = {{{"name", "KC_FINGERPRINT"}}};
       })),
       "spec.warmup.env[0].name: KC_FINGERPRINT is set by the operator", ""},
      {"env value and valueFrom", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.env = {{{"name", "X"}, {"value", "1"}, {"valueFrom", Json::object()}}};
       })),
       "spec.warmup.env[0]: set value or valueFrom, not both", ""},
      {"shapes too large", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.shapes = {Json{{"s", std::string(40000, 'x')}}};
       })),
       "spec.warmup.shapes: more than 32 KiB", ""},
      {"resources not an object",
       CheckWarmup(Warmup([](WarmupSpec& w) { w.resources = Json::array(); })),
       "spec.warmup.resources: must be an object", ""},
      {"resources unknown", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.resources = {{"limit", Json::object()}};
       })),
       "spec.warmup.resources.limit: unknown", ""},
      {"limits not a map", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.resources = {{"limits", 1}};
       })),
       "spec.warmup.resources.limits: must be a map", ""},
      {"one gpu", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.resources = {{"limits", {{"nvidia.com/gpu", 1}}},
                        {"requests", {{"nvidia.com/gpu", "1"}}}};
       })),
       "", ""},
      {"two gpus", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.resources = {{"requests", {{"nvidia.com/gpu", 2}}}};
       })),
       "", "spec.warmup.resources.requests.nvidia.com/gpu: a warmup always uses exactly one GPU"},
      {"deadline", CheckWarmup(Warmup([](WarmupSpec& w) { w.active_deadline_seconds = 86401; })),
       "spec.warmup.activeDeadlineSeconds: 86401 is out of range; use 60 to 86400", ""},
      {"backoff", CheckWarmup(Warmup([](WarmupSpec& w) { w.backoff_limit = -1; })),
       "spec.warmup.backoffLimit: -1 is out of range; use 0 to 10", ""},
      {"annotation prefix", CheckWarmup(Warmup([](WarmupSpec& w) {
         w.pod_annotations = {{"kernelcache.io/x", "y"}};
       })),
       "spec.warmup.podAnnotations.kernelcache.io/x: the kernelcache.io/ prefix", ""},
  });
}

StorageSpec Storage(const std::string& size, const std::string& claim,
                    const std::string& storage_class = "") {
  StorageSpec s;
  s.size = size;
  s.existing_claim = claim;
  s.storage_class_name = storage_class;
  return s;
}

TEST(SpecSections, Storage) {
  ExpectAll({
      {"size", CheckStorage(Storage("20Gi", "", "nfs")), "", ""},
      {"claim", CheckStorage(Storage("", "kc-cache")), "", ""},
      {"neither", CheckStorage(Storage("", "")), "spec.storage: set exactly one", ""},
      {"both", CheckStorage(Storage("20Gi", "c")), "spec.storage: set exactly one", ""},
      {"malformed size", CheckStorage(Storage("20GB", "")), "spec.storage.size: malformed", ""},
      {"tiny size", CheckStorage(Storage("1Ki", "")), "spec.storage.size: \"1Ki\" is below 1Mi",
       ""},
      {"bad claim", CheckStorage(Storage("", "My_Claim")),
       "spec.storage.existingClaim: \"My_Claim\" is not a valid claim name", ""},
      {"class with claim", CheckStorage(Storage("", "c", "nfs")),
       "spec.storage.storageClassName: applies only with size", ""},
  });
}

ConsumeSpec Consume(int64_t wait_s) {
  ConsumeSpec c;
  c.wait_timeout_seconds = wait_s;
  return c;
}

// The enums are decoded by SpecFromJson (core/api_types_test.cc); the range
// of the timeout is CheckConsume's.
TEST(SpecSections, Consume) {
  ExpectAll({
      {"defaults", CheckConsume(ConsumeSpec{}), "", ""},
      {"longest", CheckConsume(Consume(86400)), "", ""},
      {"wait", CheckConsume(Consume(0)),
       "spec.consume.waitTimeoutSeconds: 0 is out of range; use 1 to 86400", ""},
      {"too long", CheckConsume(Consume(86401)), "spec.consume.waitTimeoutSeconds", ""},
  });
}

SecuritySpec Ids(std::optional<int64_t> fs_group, std::optional<int64_t> run_as_user) {
  SecuritySpec s;
  s.fs_group = fs_group;
  s.run_as_user = run_as_user;
  return s;
}

TEST(SpecSections, SecurityContext) {
  ExpectAll({
      {"unset", CheckSecurityContext(Ids(std::nullopt, std::nullopt)), "", ""},
      {"bounds", CheckSecurityContext(Ids(kMinSecurityId, kMaxSecurityId)), "", ""},
      {"root", CheckSecurityContext(Ids(std::nullopt, 0)),
       "spec.securityContext.runAsUser: 0 is out of range; use 1 to 2147483647", ""},
      {"fsGroup too large", CheckSecurityContext(Ids(4294967296, std::nullopt)),
       "spec.securityContext.fsGroup: 4294967296 is out of range", ""},
  });
}

RetentionSpec Retention(void (*edit)(RetentionSpec&)) {
  RetentionSpec r;
  edit(r);
  return r;
}

TEST(SpecSections, Retention) {
  ExpectAll({
      {"defaults", CheckRetention(RetentionSpec{}), "", ""},
      {"all set", CheckRetention(Retention([](RetentionSpec& r) {
         r.max_bytes = "100Gi";
         r.purge_schedule = "168h";
       })),
       "", ""},
      {"staleAfter", CheckRetention(Retention([](RetentionSpec& r) { r.stale_after = "1d"; })),
       "spec.retention.staleAfter: malformed", ""},
      {"absentAfter", CheckRetention(Retention([](RetentionSpec& r) { r.absent_after = "7d"; })),
       "spec.retention.absentAfter: malformed", ""},
      {"maxBytes", CheckRetention(Retention([](RetentionSpec& r) { r.max_bytes = "lots"; })),
       "spec.retention.maxBytes", ""},
      {"purge malformed",
       CheckRetention(Retention([](RetentionSpec& r) { r.purge_schedule = "weekly"; })),
       "spec.retention.purgeSchedule: malformed", ""},
      {"purge too often",
       CheckRetention(Retention([](RetentionSpec& r) { r.purge_schedule = "30m"; })),
       "spec.retention.purgeSchedule: \"30m\" is shorter than 1h", ""},
  });
}

}  // namespace
}  // namespace kc::core
