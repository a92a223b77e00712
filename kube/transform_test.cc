#include "kube/transform.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::kube {
namespace {

using Json = nlohmann::json;

struct ProjectCase {
  std::string name;
  Json object;
  Json mask;
  Json want;
};

TEST(TransformTest, ProjectKeepsOnlyWhatTheMaskNames) {
  const Json meta = {{"name", "n"}, {"resourceVersion", "7"}, {"managedFields", {{{"m", 1}}}}};
  const std::vector<ProjectCase> cases = {
      {"true keeps a field whole",
       {{"a", {{"x", 1}, {"y", 2}}}, {"b", 3}},
       {{"a", true}},
       {{"a", {{"x", 1}, {"y", 2}}}}},
      {"a nested mask recurses",
       {{"metadata", meta}, {"spec", {{"big", "..."}}}},
       {{"metadata", {{"name", true}, {"resourceVersion", true}}}},
       {{"metadata", {{"name", "n"}, {"resourceVersion", "7"}}}}},
      {"a field the object lacks stays absent",
       {{"a", 1}},
       {{"a", true}, {"b", true}, {"c", {{"d", true}}}},
       {{"a", 1}}},
      {"an array has the mask applied to each object element",
       {{"conditions",
         {{{"type", "Ready"}, {"status", "True"}, {"message", "long"}},
          {{"type", "Disk"}},
          "odd",
          4}}},
       {{"conditions", {{"type", true}, {"status", true}}}},
       {{"conditions", {{{"type", "Ready"}, {"status", "True"}}, {{"type", "Disk"}}, "odd", 4}}}},
      {"a nested mask over a scalar keeps the scalar",
       {{"a", 5}},
       {{"a", {{"b", true}}}},
       {{"a", 5}}},
      {"an empty mask keeps nothing", {{"a", 1}}, Json::object(), Json::object()},
      {"a non-object is returned as is", Json::array({1, 2}), {{"a", true}}, Json::array({1, 2})},
      {"null stays null", Json(), {{"a", true}}, Json()},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Project(c.object, c.mask), c.want) << c.name;
  }
}

TEST(TransformTest, WithoutManagedFieldsDropsOnlyThem) {
  const std::vector<std::pair<Json, Json>> cases = {
      {{{"metadata", {{"name", "n"}, {"managedFields", {{{"manager", "kubelet"}}}}}}, {"spec", 1}},
       {{"metadata", {{"name", "n"}}}, {"spec", 1}}},
      {{{"metadata", {{"name", "n"}}}}, {{"metadata", {{"name", "n"}}}}},
      {{{"metadata", "odd"}}, {{"metadata", "odd"}}},
      {{{"spec", 1}}, {{"spec", 1}}},
      {Json(), Json()},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(WithoutManagedFields(in), want) << in.dump();
}

}  // namespace
}  // namespace kc::kube
