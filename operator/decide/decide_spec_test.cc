// Table test of Decide's spec step.
#include "operator/decide/decide_spec.h"

#include <gtest/gtest.h>

namespace kc::op::decide {
namespace {

using std::chrono::hours;

core::KernelCacheSpec Good() {
  core::KernelCacheSpec s;
  s.pod_selector.match_labels = {{"app", "llama"}};
  s.node_selector = {{"nvidia.com/gpu.present", "true"}};
  s.image = "registry.example/llama@sha256:" + std::string(64, 'a');
  s.runtime = {{"pytorch", "2.11.0"}};
  s.warmup.command = {"python3", "/app/warmup.py"};
  s.storage.size = "20Gi";
  return s;
}

api::Condition Cond(bool value, const std::string& reason, const std::string& message = "") {
  api::Condition c;
  c.status = value ? "True" : "False";
  c.reason = reason;
  c.message = message;
  return c;
}

TEST(CheckSpecTest, Table) {
  core::KernelCacheSpec unpinned = Good();
  unpinned.image = "registry.example/llama:latest";
  core::KernelCacheSpec invalid = Good();
  invalid.image.clear();
  const std::string invalid_msg = "spec.image: required; the model image the warmup runs in";
  struct Case {
    const char* name;
    core::KernelCacheSpec spec;
    std::vector<std::string> parse_errors;
    std::optional<api::Condition> prev_invalid, prev_image;
    bool valid;
    std::string invalid_reason;
    std::string image_reason;  // "" when not decided
    std::vector<std::string> events;
  } cases[] = {
      {"valid, pinned",
       Good(),
       {},
       std::nullopt,
       std::nullopt,
       true,
       "SpecValid",
       "DigestPinned",
       {}},
      {"valid, not pinned",
       unpinned,
       {},
       std::nullopt,
       std::nullopt,
       true,
       "SpecValid",
       "TagNotDigest",
       {"ImageNotPinned"}},
      {"not pinned, said before",
       unpinned,
       {},
       std::nullopt,
       Cond(true, "TagNotDigest"),
       true,
       "SpecValid",
       "TagNotDigest",
       {}},
      {"invalid",
       invalid,
       {},
       std::nullopt,
       std::nullopt,
       false,
       "InvalidSpec",
       "",
       {"InvalidSpec"}},
      {"invalid, said before",
       invalid,
       {},
       Cond(true, "InvalidSpec", invalid_msg),
       std::nullopt,
       false,
       "InvalidSpec",
       "",
       {}},
      {"parse error",
       Good(),
       {"spec.x: bad"},
       std::nullopt,
       std::nullopt,
       false,
       "InvalidSpec",
       "",
       {"InvalidSpec"}},
  };
  for (const auto& c : cases) {
    const SpecVerdict v =
        CheckSpec(c.spec, c.parse_errors, c.prev_invalid ? &*c.prev_invalid : nullptr,
                  c.prev_image ? &*c.prev_image : nullptr);
    EXPECT_EQ(v.retention.has_value(), c.valid) << c.name;
    EXPECT_EQ(v.invalid_spec.value, !c.valid) << c.name;
    EXPECT_EQ(v.invalid_spec.reason, c.invalid_reason) << c.name;
    EXPECT_EQ(v.ready.has_value(), !c.valid) << c.name;
    EXPECT_EQ(v.image_not_pinned ? v.image_not_pinned->reason : "", c.image_reason) << c.name;
    std::vector<std::string> events;
    for (const auto& e : v.effects.events) events.push_back(e.event_reason);
    EXPECT_EQ(events, c.events) << c.name;
  }
}

TEST(CheckSpecTest, RetentionIsParsedOnce) {
  core::KernelCacheSpec s = Good();
  s.retention.stale_after = "2h";
  s.retention.absent_after = "3h";
  s.retention.purge_schedule = "24h";
  s.retention.max_bytes = "1Gi";
  const SpecVerdict v = CheckSpec(s, {}, nullptr, nullptr);
  ASSERT_TRUE(v.retention);
  EXPECT_EQ(v.retention->stale_after, hours(2));
  EXPECT_EQ(v.retention->absent_after, hours(3));
  EXPECT_EQ(v.retention->purge, hours(24));
  EXPECT_EQ(v.retention->max_bytes, int64_t{1} << 30);

  const SpecVerdict defaults = CheckSpec(Good(), {}, nullptr, nullptr);
  ASSERT_TRUE(defaults.retention);
  EXPECT_FALSE(defaults.retention->purge);
  EXPECT_FALSE(defaults.retention->max_bytes);
}

}  // namespace
}  // namespace kc::op::decide
