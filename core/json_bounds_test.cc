#include "core/json_bounds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::core {
namespace {

constexpr JsonBounds kSmall{100, 3, 10};

TEST(JsonBounds, CountsWhatAParseWouldBuild) {
  struct Case {
    const char* name;
    std::string text;
    const char* says;  // "" when within the bounds
  };
  const std::vector<Case> cases = {
      {"small object", R"({"a":[1,2],"b":"x"})", ""},  // {, a, [, 1, 2, b, x: 7 values
      {"brackets inside strings are not nesting", R"({"a":"[[[[{{{{"})", ""},
      {"an escaped quote does not end the string", R"({"a":"x\"[[[[[","b":1})", ""},
      {"literals and negative numbers are one value each", R"([true,false,null,-1.5e3])", ""},
      {"exactly the depth", R"([[[1]]])", ""},
      {"too deep", R"([[[[1]]]])", "nests deeper than 3 levels"},
      {"too many values", R"([1,2,3,4,5,6,7,8,9,10])", "more than 10 values"},
      {"keys count as values", R"({"a":1,"b":2,"c":3,"d":4,"e":5})", "more than 10 values"},
      {"too many bytes", std::string(101, ' '), "has 101 bytes, more than 100"},
  };
  for (const Case& c : cases) {
    Status s = CheckJsonBounds(c.text, kSmall, "doc.json");
    if (std::string(c.says).empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s.message();
      continue;
    }
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.name << ": " << s.message();
    EXPECT_EQ(s.message().rfind("doc.json: ", 0), 0u) << c.name << ": " << s.message();
  }
}

TEST(JsonBounds, ADeepHostileDocumentIsRefusedAtTheBoundNotAtItsEnd) {
  const std::string deep(50'000'000, '[');
  Status s = CheckJsonBounds(deep, {64ull << 20, 8, 1'000'000}, "manifest.json");
  EXPECT_NE(s.message().find("deeper than 8"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kc::core
