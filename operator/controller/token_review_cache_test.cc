#include "operator/controller/token_review_cache.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

const Time kT0 = Time{} + std::chrono::seconds(1'800'000'000);
const TokenIdentity kPod1{"ml", "p1", "u1"};
const TokenIdentity kPod2{"ml", "p2", "u2"};

TEST(TokenReviewCache, AnswersAStoredIdentityUntilTheTokenExpires) {
  TokenReviewCache cache;
  EXPECT_FALSE(cache.Lookup("t1", kT0).has_value());
  cache.Store("t1", kPod1, kT0 + std::chrono::minutes(60), kT0);
  EXPECT_EQ(cache.Lookup("t1", kT0), kPod1);
  EXPECT_EQ(cache.Lookup("t1", kT0 + std::chrono::minutes(59)), kPod1);
  EXPECT_FALSE(cache.Lookup("t1", kT0 + std::chrono::minutes(60)).has_value());
  EXPECT_FALSE(cache.Lookup("t2", kT0).has_value()) << "another token is another entry";
  cache.Store("t3", kPod2, kT0, kT0);
  EXPECT_FALSE(cache.Lookup("t3", kT0).has_value()) << "an expired token is never stored";
}

TEST(TokenReviewCache, AFullCacheDropsTheExpiredThenTheOneThatExpiresFirst) {
  TokenReviewCache cache(2);
  cache.Store("soon", kPod1, kT0 + std::chrono::minutes(1), kT0);
  cache.Store("late", kPod1, kT0 + std::chrono::minutes(50), kT0);
  cache.Store("new", kPod2, kT0 + std::chrono::minutes(30), kT0);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.Lookup("soon", kT0).has_value());
  EXPECT_TRUE(cache.Lookup("late", kT0).has_value());
  EXPECT_TRUE(cache.Lookup("new", kT0).has_value());

  // Later, both expired but one: storing drops every expired entry.
  TokenReviewCache c3(3);
  c3.Store("a", kPod1, kT0 + std::chrono::minutes(1), kT0);
  c3.Store("b", kPod1, kT0 + std::chrono::minutes(2), kT0);
  c3.Store("c", kPod1, kT0 + std::chrono::minutes(90), kT0);
  c3.Store("d", kPod2, kT0 + std::chrono::minutes(90), kT0 + std::chrono::minutes(10));
  EXPECT_EQ(c3.size(), 2u);
  EXPECT_TRUE(c3.Lookup("c", kT0).has_value());
  EXPECT_TRUE(c3.Lookup("d", kT0).has_value());
}

}  // namespace
}  // namespace kc::op
