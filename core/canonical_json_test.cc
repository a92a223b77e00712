#include "core/canonical_json.h"

#include <gtest/gtest.h>

#include <map>

namespace kc::core {
namespace {

TEST(PutUnlessDefault, LeavesTheDefaultOut) {
  struct Case {
    std::string name;
    int value;
    std::string want;
  };
  const Case cases[] = {
      {"default: absent, the bytes of before the input existed", 1, R"({"a":"x"})"},
      {"other value: written", 8, R"({"a":"x","gpuCount":8})"},
      {"zero is a value like any other when the default is 1", 0, R"({"a":"x","gpuCount":0})"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = {{"a", "x"}};
    PutUnlessDefault(j, "gpuCount", c.value, 1);
    EXPECT_EQ(j.dump(), c.want) << c.name;
  }
}

TEST(PutUnlessDefault, WorksForStringsAndMaps) {
  nlohmann::json j = nlohmann::json::object();
  PutUnlessDefault(j, "mode", std::string("Full"), std::string("Full"));
  PutUnlessDefault(j, "extra", std::map<std::string, std::string>{},
                   std::map<std::string, std::string>{});
  EXPECT_EQ(j.dump(), "{}");
  PutUnlessDefault(j, "extra", std::map<std::string, std::string>{{"k", "v"}},
                   std::map<std::string, std::string>{});
  EXPECT_EQ(j.dump(), R"({"extra":{"k":"v"}})");
}

}  // namespace
}  // namespace kc::core
