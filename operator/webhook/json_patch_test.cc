#include "operator/webhook/json_patch.h"

#include <gtest/gtest.h>

#include <random>

namespace kc::webhook {
namespace {

TEST(JsonPatchTest, EscapesTildeAndSlash) {
  struct Case {
    std::string token, escaped;
  } cases[] = {
      {"", ""},
      {"plain", "plain"},
      {"kernelcache.io/injected", "kernelcache.io~1injected"},
      {"a~b", "a~0b"},
      {"~/", "~0~1"},
      {"/~", "~1~0"},
      {"~1", "~01"},  // a literal "~1" must not come back as "/"
      {"a//b", "a~1~1b"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(EscapePointerToken(c.token), c.escaped) << c.token;
    auto back = UnescapePointerToken(c.escaped);
    ASSERT_TRUE(back.ok()) << c.escaped;
    EXPECT_EQ(*back, c.token);
  }
}

TEST(JsonPatchTest, UnescapeRefusesALoneTilde) {
  for (const char* bad : {"~", "a~", "~2", "~a"}) {
    EXPECT_FALSE(UnescapePointerToken(bad).ok()) << bad;
  }
}

TEST(JsonPatchTest, AnnotationKeyPathIsEscaped) {
  Json a = {{"metadata", {{"annotations", {{"x", "1"}}}}}};
  Json b = a;
  b["metadata"]["annotations"]["kernelcache.io/injected"] = "llama";
  Json patch = Diff(a, b);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0]["op"], "add");
  EXPECT_EQ(patch[0]["path"], "/metadata/annotations/kernelcache.io~1injected");
  EXPECT_EQ(patch[0]["value"], "llama");
}

TEST(JsonPatchTest, EqualDocumentsGiveAnEmptyPatch) {
  Json a = {{"a", {1, 2, {{"b", nullptr}}}}, {"c", "d"}};
  EXPECT_EQ(Diff(a, a), Json::array());
  EXPECT_EQ(Diff(Json(), Json()), Json::array());
}

TEST(JsonPatchTest, InsertAtTheFrontIsOneAdd) {
  Json a = {{"l", {{{"name", "a"}}, {{"name", "b"}}}}};
  Json b = {{"l", {{{"name", "gate"}}, {{"name", "a"}}, {{"name", "b"}}}}};
  Json patch = Diff(a, b);
  ASSERT_EQ(patch.size(), 1u) << patch.dump();
  EXPECT_EQ(patch[0], (Json{{"op", "add"}, {"path", "/l/0"}, {"value", {{"name", "gate"}}}}));
}

TEST(JsonPatchTest, TypeChangeIsReplace) {
  Json patch = Diff({{"a", 1}}, {{"a", "1"}});
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0], (Json{{"op", "replace"}, {"path", "/a"}, {"value", "1"}}));
  EXPECT_EQ(Diff(Json(1), Json::array()),
            (Json::array({{{"op", "replace"}, {"path", ""}, {"value", Json::array()}}})));
}

// apply(diff(a, b), a) == b on hand-picked pairs.
TEST(JsonPatchTest, ApplyOfDiffGivesTheTarget) {
  const std::vector<std::pair<Json, Json>> pairs = {
      {Json::object(), {{"a", 1}}},
      {{{"a", 1}}, Json::object()},
      {{{"a", {1, 2, 3}}}, {{"a", {3, 2, 1}}}},
      {{{"a", {1, 2, 3}}}, {{"a", Json::array()}}},
      {{{"a", Json::array()}}, {{"a", {1, 2, 3}}}},
      {{{"a", {1, 2, 3, 4}}}, {{"a", {1, 9, 4}}}},
      {{{"a", {1, 2}}}, {{"a", {0, 1, 2, 3}}}},
      {{{"a/b", 1}, {"c~d", 2}}, {{"a/b", 2}, {"e~/f", 3}}},
      {{{"x", {{"y", {{"z", 1}}}}}}, {{"x", {{"y", {{"z", 2}, {"w", {1}}}}}}}},
      {Json(1), Json("s")},
      {Json::array({1}), Json::object()},
      {{{"", 1}}, {{"", 2}}},  // the empty key: path "/"
      {{{"a", nullptr}}, {{"a", false}}},
  };
  for (const auto& [a, b] : pairs) {
    Json patch = Diff(a, b);
    auto applied = ApplyPatch(a, patch);
    ASSERT_TRUE(applied.ok()) << a.dump() << " -> " << b.dump() << ": "
                              << applied.status().message();
    EXPECT_EQ(*applied, b) << a.dump() << " -> " << b.dump() << " patch " << patch.dump();
  }
}

Json RandomJson(std::mt19937_64& rng, int depth) {
  auto below = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  static const char* kKeys[] = {"a", "b", "a/b", "~", "~1", "", "env", "x~0y"};
  const int kind = depth <= 0 ? below(4) : below(6);
  switch (kind) {
    case 0:
      return below(5);
    case 1:
      return std::string(kKeys[below(8)]);
    case 2:
      return nullptr;
    case 3:
      return below(2) == 0;
    case 4: {
      Json a = Json::array();
      for (int i = below(5); i > 0; --i) a.push_back(RandomJson(rng, depth - 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int i = below(5); i > 0; --i) o[kKeys[below(8)]] = RandomJson(rng, depth - 1);
      return o;
    }
  }
}

// Mutates `j` a little: the pairs are near each other, like a pod before
// and after injection, and far apart.
Json Perturb(Json j, std::mt19937_64& rng) {
  if (rng() % 4 == 0) return RandomJson(rng, 3);
  if (j.is_array()) {
    if (!j.empty() && rng() % 2 == 0) j.erase(j.begin() + static_cast<long>(rng() % j.size()));
    j.insert(j.begin() + static_cast<long>(rng() % (j.size() + 1)), RandomJson(rng, 2));
    if (!j.empty()) j[rng() % j.size()] = Perturb(j[rng() % j.size()], rng);
    return j;
  }
  if (j.is_object() && !j.empty()) {
    auto it = j.begin();
    std::advance(it, static_cast<long>(rng() % j.size()));
    *it = Perturb(*it, rng);
    if (rng() % 3 == 0) j["new~/key"] = RandomJson(rng, 2);
    return j;
  }
  return RandomJson(rng, 3);
}

TEST(JsonPatchTest, ApplyOfDiffGivesTheTargetOnManyRandomPairs) {
  std::mt19937_64 rng(20261203);
  for (int i = 0; i < 3000; ++i) {
    const Json a = RandomJson(rng, 4);
    const Json b = i % 2 == 0 ? Perturb(a, rng) : RandomJson(rng, 4);
    const Json patch = Diff(a, b);
    auto applied = ApplyPatch(a, patch);
    ASSERT_TRUE(applied.ok()) << "case " << i << ": " << a.dump() << " -> " << b.dump() << ": "
                              << applied.status().message();
    ASSERT_EQ(*applied, b) << "case " << i << ": " << a.dump() << " -> " << b.dump() << " patch "
                           << patch.dump();
    if (a == b) {
      EXPECT_TRUE(patch.empty());
    }
  }
}

TEST(JsonPatchTest, ApplyRefusesMalformedPatches) {
  const Json doc = {{"a", {1, 2}}, {"o", {{"k", 1}}}};
  const std::vector<Json> bad = {
      Json::object(),                                                   // not an array
      Json::array({1}),                                                 // op not an object
      Json::array({{{"path", "/a"}}}),                                  // no op
      Json::array({{{"op", "add"}, {"value", 1}}}),                     // no path
      Json::array({{{"op", "add"}, {"path", "/x"}}}),                   // no value
      Json::array({{{"op", "move"}, {"path", "/x"}, {"from", "/a"}}}),  // unsupported
      Json::array({{{"op", "remove"}, {"path", "/missing"}}}),
      Json::array({{{"op", "replace"}, {"path", "/missing"}, {"value", 1}}}),
      Json::array({{{"op", "add"}, {"path", "a"}, {"value", 1}}}),      // no leading "/"
      Json::array({{{"op", "add"}, {"path", "/a/3"}, {"value", 1}}}),   // past the end
      Json::array({{{"op", "add"}, {"path", "/a/01"}, {"value", 1}}}),  // leading zero
      Json::array({{{"op", "remove"}, {"path", "/a/-"}}}),
      Json::array({{{"op", "add"}, {"path", "/o/k/deeper"}, {"value", 1}}}),  // in a scalar
      Json::array({{{"op", "add"}, {"path", "/x/y"}, {"value", 1}}}),         // no parent
      Json::array({{{"op", "add"}, {"path", "/o/~2"}, {"value", 1}}}),        // bad escape
      Json::array({{{"op", "test"}, {"path", "/o/k"}, {"value", 2}}}),        // test fails
      Json::array({{{"op", "remove"}, {"path", ""}}}),
  };
  for (const Json& p : bad) EXPECT_FALSE(ApplyPatch(doc, p).ok()) << p.dump();
}

TEST(JsonPatchTest, ApplyHandlesEndOfArrayAndTest) {
  const Json doc = {{"a", {1, 2}}};
  auto r = ApplyPatch(doc, Json::array({{{"op", "test"}, {"path", "/a/1"}, {"value", 2}},
                                        {{"op", "add"}, {"path", "/a/-"}, {"value", 3}},
                                        {{"op", "add"}, {"path", "/a/0"}, {"value", 0}}}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (Json{{"a", {0, 1, 2, 3}}}));
}

}  // namespace
}  // namespace kc::webhook
