#include "operator/decide/decide_misses.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

core::FingerprintStatus Fp(const std::string& digest, std::optional<int64_t> misses) {
  core::FingerprintStatus f;
  f.id = "0123456789abcdef";
  f.manifest_digest = digest;
  if (misses) f.runtime_misses = core::RuntimeMissStatus{*misses, 1, {}};
  return f;
}

TEST(DecideMisses, RuntimeMissesAfterTable) {
  const ObservedMisses counted_d1{"d1", {5, 2, {}}};
  const ObservedMisses counted_d0{"d0", {9, 3, {}}};
  struct Case {
    const char* name;
    std::optional<core::FingerprintStatus> before;
    core::FingerprintStatus after;
    const ObservedMisses* observed;
    std::optional<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"counted for the current digest", Fp("d1", 1), Fp("d1", std::nullopt), &counted_d1, 5},
      {"first report of a new cache", std::nullopt, Fp("d1", std::nullopt), &counted_d1, 5},
      {"restart: nothing counted yet, same digest", Fp("d1", 4), Fp("d1", std::nullopt), nullptr,
       4},
      {"re-warmed: the old figure goes", Fp("d0", 4), Fp("d1", std::nullopt), nullptr,
       std::nullopt},
      {"counted for an older digest only", Fp("d0", 4), Fp("d1", std::nullopt), &counted_d0,
       std::nullopt},
      {"no cache any more", Fp("d1", 4), Fp("", std::nullopt), &counted_d1, std::nullopt},
      {"never reported", Fp("d1", std::nullopt), Fp("d1", std::nullopt), nullptr, std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = RuntimeMissesAfter(c.before ? &*c.before : nullptr, c.after, c.observed);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.name;
    if (got) {
      EXPECT_EQ(got->count, *c.want) << c.name;
    }
  }
}

}  // namespace
}  // namespace kc::op
