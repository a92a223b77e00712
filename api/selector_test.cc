#include "api/selector.h"

#include <gtest/gtest.h>

namespace kc::api {
namespace {

// Moved from core/api_types_test.cc (ApiTypes.SelectorMatches).
TEST(SelectorTest, SelectorMatches) {
  LabelSelector s;
  s.match_labels = {{"app", "llama"}};
  s.match_expressions = {{"tier", "In", {"gpu", "fast"}}, {"canary", "DoesNotExist", {}}};
  EXPECT_TRUE(SelectorMatches(s, {{"app", "llama"}, {"tier", "gpu"}}));
  EXPECT_FALSE(SelectorMatches(s, {{"app", "llama"}, {"tier", "cpu"}}));
  EXPECT_FALSE(SelectorMatches(s, {{"app", "llama"}, {"tier", "gpu"}, {"canary", "1"}}));
  EXPECT_FALSE(SelectorMatches(s, {{"tier", "gpu"}}));
  LabelSelector bad;
  bad.match_expressions = {{"x", "Like", {"y"}}};
  EXPECT_FALSE(SelectorMatches(bad, {{"x", "y"}}));
}

TEST(SelectorTest, JsonRoundTripAndErrors) {
  LabelSelector s;
  s.match_labels = {{"app", "llama"}};
  s.match_expressions = {{"tier", "In", {"gpu"}}, {"canary", "DoesNotExist", {}}};
  EXPECT_EQ(LabelSelectorFromJson(LabelSelectorToJson(s)), s);
  EXPECT_EQ(LabelSelectorToJson(LabelSelector{}), Json::object());

  FieldErrors errors;
  LabelSelector got = LabelSelectorFromJson(
      Json::parse(R"({"matchLabels": {"a": 1}, "matchExpressions": [{"key": 2}, 3]})"),
      "spec.podSelector", &errors);
  EXPECT_TRUE(got.match_labels.empty());
  ASSERT_EQ(got.match_expressions.size(), 1u);
  EXPECT_EQ(errors, (FieldErrors{"spec.podSelector.matchLabels.a: expected a string (quote "
                                 "numbers and booleans)",
                                 "spec.podSelector.matchExpressions[1]: expected an object",
                                 "spec.podSelector.matchExpressions[0].key: expected a string"}));
}

}  // namespace
}  // namespace kc::api
