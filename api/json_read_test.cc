#include "api/json_read.h"

#include <gtest/gtest.h>

namespace kc::api {
namespace {

const Json kDoc = Json::parse(R"json({
  "s": "x", "n": 7, "big": 4294967298, "huge": 18446744073709551615, "f": 1.5, "b": true,
  "null": null, "list": ["a", 1, "b"], "map": {"cpu": 8, "gpu": "2", "on": true},
  "t": "2026-12-02T09:33:17Z", "badt": "yesterday", "obj": {"k": "v"}, "objs": [{}, 1]
})json");

TEST(JsonReadTest, SilentReadersKeepDefaultsOnMismatch) {
  std::string s = "keep";
  Read(kDoc, "n", &s);
  Read(kDoc, "null", &s);
  Read(kDoc, "missing", &s);
  EXPECT_EQ(s, "keep");
  Read(kDoc, "s", &s);
  EXPECT_EQ(s, "x");

  int i = -1;
  Read(kDoc, "big", &i);  // out of int range: the default stays
  Read(kDoc, "f", &i);
  EXPECT_EQ(i, -1);
  Read(kDoc, "n", &i);
  EXPECT_EQ(i, 7);
  int64_t l = -1;
  Read(kDoc, "huge", &l);  // beyond int64: the default stays
  EXPECT_EQ(l, -1);
  Read(kDoc, "big", &l);
  EXPECT_EQ(l, 4294967298);

  bool b = false;
  Read(kDoc, "b", &b);
  EXPECT_TRUE(b);

  std::vector<std::string> list;
  Read(kDoc, "list", &list);
  EXPECT_EQ(list, (std::vector<std::string>{"a", "b"}));

  std::map<std::string, std::string> m;
  Read(kDoc, "map", &m);  // quantities may be numbers
  EXPECT_EQ(m, (std::map<std::string, std::string>{{"cpu", "8"}, {"gpu", "2"}}));

  std::optional<Time> t;
  Read(kDoc, "badt", &t);
  EXPECT_FALSE(t.has_value());
  Read(kDoc, "t", &t);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(FormatTime(*t), "2026-12-02T09:33:17Z");

  EXPECT_EQ(Object(kDoc, "obj").at("k"), "v");
  EXPECT_TRUE(Object(kDoc, "s").empty());
  EXPECT_TRUE(Object(Json::array(), "obj").empty());
  EXPECT_EQ(Field(kDoc, "missing"), nullptr);
  ASSERT_NE(Field(kDoc, "null"), nullptr);  // present, and null
  EXPECT_EQ(Field(Json("x"), "s"), nullptr);

  std::vector<Json> seen;
  ReadList(kDoc, "objs", &seen, [](const Json& j, Json* out) { *out = j; });
  EXPECT_EQ(seen.size(), 1u);
}

TEST(JsonReadTest, ReportingReadersNameTheField) {
  FieldErrors errors;
  std::string s;
  ReadString(kDoc, "n", "spec", &errors, &s);
  int32_t i = 0;
  ReadInt(kDoc, "big", "spec", &errors, &i);
  ReadInt(kDoc, "f", "spec", &errors, &i);
  bool b = false;
  ReadBool(kDoc, "s", "spec", &errors, &b);
  std::vector<std::string> list;
  ReadStringList(kDoc, "list", "spec", &errors, &list);
  std::map<std::string, std::string> m;
  ReadStringMap(kDoc, "map", "spec", &errors, &m);
  std::optional<Time> t;
  ReadTime(kDoc, "badt", "spec", &errors, &t);
  std::vector<Json> objs;
  ReadObjectList(kDoc, "objs", "spec", &errors, &objs);
  ReadObject(kDoc, "s", "spec", &errors);
  ReadString(kDoc, "null", "spec", &errors, &s);  // null is absent, not an error
  EXPECT_EQ(errors,
            (FieldErrors{"spec.n: expected a string",
                         "spec.big: 4294967298 is out of range -2147483648..2147483647",
                         "spec.f: expected an integer", "spec.s: expected true or false",
                         "spec.list[1]: expected a string",
                         "spec.map.cpu: expected a string (quote numbers and booleans)",
                         "spec.map.on: expected a string (quote numbers and booleans)",
                         "spec.badt: malformed time \"yesterday\": want RFC 3339, e.g. "
                         "2026-12-02T09:33:17Z",
                         "spec.objs[1]: expected an object", "spec.s: expected an object"}));
  EXPECT_EQ(list, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m, (std::map<std::string, std::string>{{"gpu", "2"}}));
  EXPECT_EQ(JoinPath("", "a"), "a");
  EXPECT_EQ(JoinPath("a", "b"), "a.b");
}

}  // namespace
}  // namespace kc::api
