#include "core/warmup_plan.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

std::vector<WarmupCall> TwoCalls() {
  return {
      {"POST",
       "/v1/completions",
       {{"Content-Type", "application/json"}, {"X-Trace", "warmup"}},
       R"({"prompt":"hello","max_tokens":1})",
       "completions prompt=512 #1"},
      {"GET", "/health", {}, "", ""},
  };
}

TEST(WarmupPlan, RoundTrip) {
  const auto calls = TwoCalls();
  const std::string json = WarmupCallsToJson(calls);
  auto back = ParseWarmupCalls(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, calls);
  // Optional fields that are empty are left out.
  EXPECT_EQ(json.find("\"label\":\"\""), std::string::npos) << json;
  EXPECT_EQ(WarmupCallsToJson({}), "[]");
  auto empty = ParseWarmupCalls("[]");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(WarmupPlan, OptionalFieldsAndUnknownKeys) {
  auto calls = ParseWarmupCalls(
      R"([{"method":"DELETE","path":"/x?y=1","future":true},{"method":"PATCH","path":"/"}])");
  ASSERT_TRUE(calls.ok()) << calls.status().message();
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].method, "DELETE");
  EXPECT_EQ((*calls)[0].path, "/x?y=1");
  EXPECT_TRUE((*calls)[0].headers.empty());
  EXPECT_EQ((*calls)[0].body, "");
  EXPECT_EQ((*calls)[1].label, "");
}

TEST(WarmupPlan, Refusals) {
  struct Case {
    std::string json;
    std::string says;  // the message holds this
  };
  const std::string ok = R"({"method":"GET","path":"/a"})";
  const std::string big_body(kMaxWarmupBodyBytes + 1, 'x');
  const std::string big_header(kMaxWarmupHeaderBytes + 1, 'x');
  const std::string big_path = "/" + std::string(kMaxWarmupPathBytes, 'p');
  const std::string big_label(kMaxWarmupLabelBytes + 1, 'l');
  std::string too_many = "[";
  for (size_t i = 0; i <= kMaxWarmupCalls; ++i) too_many += (i == 0 ? "" : ",") + ok;
  too_many += "]";
  const Case cases[] = {
      {"", "KC_WARMUP_REQUESTS: not a JSON array"},
      {"{\"method\":\"GET\"}", "KC_WARMUP_REQUESTS: not a JSON array"},
      {"[1,", "KC_WARMUP_REQUESTS: not a JSON array"},
      {"\"\xff\"", "KC_WARMUP_REQUESTS: not a JSON array"},
      {too_many, "KC_WARMUP_REQUESTS: has more than 1024 calls"},
      {"[" + ok + ",7]", "KC_WARMUP_REQUESTS[1]: must be an object"},
      {R"([{"path":"/a"}])", "KC_WARMUP_REQUESTS[0].method: must be one of"},
      {R"([{"method":"get","path":"/a"}])", "KC_WARMUP_REQUESTS[0].method: must be one of"},
      {R"([{"method":"HEAD","path":"/a"}])", "KC_WARMUP_REQUESTS[0].method: must be one of"},
      {R"([{"method":1,"path":"/a"}])", "KC_WARMUP_REQUESTS[0].method: must be one of"},
      {"[" + ok + R"(,{"method":"GET"}])", "KC_WARMUP_REQUESTS[1].path: must be a string"},
      {R"([{"method":"GET","path":"a"}])", "KC_WARMUP_REQUESTS[0].path: must start with '/'"},
      {R"([{"method":"GET","path":""}])", "KC_WARMUP_REQUESTS[0].path: must start with '/'"},
      {R"([{"method":"GET","path":"/a b"}])", "KC_WARMUP_REQUESTS[0].path: must not hold spaces"},
      {R"([{"method":"GET","path":"/a\r\nX: y"}])",
       "KC_WARMUP_REQUESTS[0].path: must not hold spaces"},
      {R"([{"method":"GET","path":")" + big_path + R"("}])",
       "KC_WARMUP_REQUESTS[0].path: has more than 2048 bytes"},
      {R"([{"method":"GET","path":"/","headers":[]}])",
       "KC_WARMUP_REQUESTS[0].headers: must be an object"},
      {R"([{"method":"GET","path":"/","headers":{"X Y":"v"}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"X Y\"]: the name is not an HTTP token"},
      {R"([{"method":"GET","path":"/","headers":{"":"v"}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"\"]: the name is not an HTTP token"},
      {R"([{"method":"GET","path":"/","headers":{"X":1}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"X\"]: must be a string"},
      {R"([{"method":"GET","path":"/","headers":{"X":"a\r\nEvil: 1"}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"X\"]: must not hold CR, LF or NUL"},
      {R"([{"method":"GET","path":"/","headers":{"X":")" + big_header + R"("}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"X\"]: has more than 8192 bytes"},
      {R"([{"method":"GET","path":"/","headers":{"content-length":"3"}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"content-length\"]: is set by the driver"},
      {R"([{"method":"GET","path":"/","headers":{"Host":"x"}}])",
       "KC_WARMUP_REQUESTS[0].headers[\"Host\"]: is set by the driver"},
      {R"([{"method":"GET","path":"/","headers":{"X-A":"1","x-a":"2"}}])", "is listed twice"},
      {R"([{"method":"POST","path":"/","body":{"prompt":"x"}}])",
       "KC_WARMUP_REQUESTS[0].body: must be a string"},
      {R"([{"method":"POST","path":"/","body":")" + big_body + R"("}])",
       "KC_WARMUP_REQUESTS[0].body: has more than 1048576 bytes"},
      {R"([{"method":"POST","path":"/","label":3}])",
       "KC_WARMUP_REQUESTS[0].label: must be a string"},
      {R"([{"method":"POST","path":"/","label":")" + big_label + R"("}])",
       "KC_WARMUP_REQUESTS[0].label: has more than 256 bytes"},
      {R"([{"method":"POST","path":"/","label":"a\nb"}])",
       "KC_WARMUP_REQUESTS[0].label: must not hold CR, LF or NUL"},
  };
  for (const auto& c : cases) {
    auto r = ParseWarmupCalls(c.json);
    ASSERT_FALSE(r.ok()) << c.json.substr(0, 200);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << r.status().message() << " (want " << c.says << ")";
  }
}

TEST(WarmupPlan, HostileInputNeverThrows) {
  const std::string inputs[] = {
      std::string(100000, '['),
      std::string("[{\"method\":\"GET\",\"path\":\"/\",\"headers\":{\"a\":") +
          std::string(1000, '[') + "]}]",
      std::string("\0\0\0", 3),
      "[null]",
      "[[]]",
      "[{\"method\":\"GET\",\"path\":\"/\\u0000\"}]",
  };
  for (const auto& in : inputs) {
    EXPECT_FALSE(ParseWarmupCalls(in).ok()) << in.substr(0, 80);
  }
}

}  // namespace
}  // namespace kc::core
