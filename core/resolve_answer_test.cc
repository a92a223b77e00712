#include "core/resolve_answer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "testing/objects.h"

namespace kc::core {
namespace {

TEST(ResolveAnswer, RoundTrip) {
  ResolveAnswer a;
  a.fingerprint = "3f9a1c2b7d4e5f60";
  a.state = ResolveState::kDegraded;
  a.directory = "v1/3f9a1c2b7d4e5f60";
  a.manifest_digest = std::string(64, 'a');
  a.message = "the cache was found bad and is being re-warmed";
  a.node = testutil::H200Facts();
  auto back = ParseResolveAnswer(ResolveAnswerToJson(a));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a);

  ResolveAnswer final_answer;
  final_answer.state = ResolveState::kUnknown;
  final_answer.final = true;
  final_answer.reason = "NodeHasNoFingerprint";
  final_answer.message = "node gpu-7 has no GPU fingerprint";
  back = ParseResolveAnswer(ResolveAnswerToJson(final_answer));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, final_answer);
  EXPECT_EQ(ResolveAnswerToJson(final_answer).find("\"node\""), std::string::npos);

  // A full GPU pool: the warmup cannot be scheduled; StartCold pods go.
  ResolveAnswer cold = a;
  cold.state = ResolveState::kWarming;
  cold.manifest_digest.clear();
  cold.start_cold = true;
  cold.reason = "WarmupUnschedulable";
  cold.message = "warmup Job llama-warm-x pod p unschedulable for 2m: 0/3 nodes are available";
  const std::string text = ResolveAnswerToJson(cold);
  EXPECT_NE(text.find("\"startCold\":true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"reason\":\"WarmupUnschedulable\""), std::string::npos) << text;
  back = ParseResolveAnswer(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, cold);
  // Not set: absent from the JSON, false when read (an older operator).
  EXPECT_EQ(ResolveAnswerToJson(a).find("startCold"), std::string::npos);
  EXPECT_FALSE(ParseResolveAnswer(ResolveAnswerToJson(a))->start_cold);
}

// Fuzzer regression (fuzz/resolve_answer.cc): a "reason" on an answer that
// is neither final nor startCold decodes, so it must survive re-encoding
// (the encoder wrote it only with final or startCold, losing it).
TEST(ResolveAnswer, ReasonWithoutFinalOrStartColdRoundTrips) {
  auto a = ParseResolveAnswer(
      R"({"fingerprint":"9c08515933aae947","state":"Warming","reason":"WarmupUnschedulable",)"
      R"("node":{"arch":"amd64","computeCapability":"9.0","cudaDriver":"13.0",)"
      R"("driver":"580.159.04","gpuProduct":"NVIDIA-H200"}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->reason, "WarmupUnschedulable");
  auto back = ParseResolveAnswer(ResolveAnswerToJson(*a));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *a);
}

TEST(ResolveAnswer, BadInputNamesTheField) {
  struct Case {
    std::string body, want;
  } cases[] = {
      {"[]", "not a JSON object"},
      {R"({"state":"Ready"})", "\"fingerprint\""},
      {R"({"fingerprint":"0123456789abcdef","state":"Sideways"})", "Sideways"},
      {R"({"fingerprint":"xyz","state":"Ready"})", "xyz"},
      {R"({"fingerprint":"0123456789abcdef","state":"Ready"})", "\"node\""},
      {R"({"fingerprint":"","state":"Unknown"})", "fingerprint"},
      {R"({"fingerprint":"","state":"Unknown","final":"yes"})", "\"final\""},
      {R"({"fingerprint":"0123456789abcdef","state":5})", "\"state\""},
      {R"({"fingerprint":"","state":"Unknown","final":true,"startCold":1})", "\"startCold\""},
  };
  for (const auto& c : cases) {
    auto r = ParseResolveAnswer(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status();
  }
}

TEST(ResolveUrl, Forms) {
  struct Case {
    const char* url;
    ResolveUrl want;
  };
  for (const Case& c : std::vector<Case>{
           {"http://kc-operator.kc.svc", {"kc-operator.kc.svc", "80", ""}},
           {"http://10.96.0.50:8080", {"10.96.0.50", "8080", ""}},
           {"http://10.96.0.50/v1/resolve", {"10.96.0.50", "80", ""}},
           {"http://h:81/kc/", {"h", "81", "/kc"}},
           {"http://h/kc/v1/resolve", {"h", "80", "/kc"}},
           {"http://h//v1/resolve", {"h", "80", ""}},
           {"http://h/kc//v1/resolve/", {"h", "80", "/kc"}},
           {"http://[fd00::1]:9", {"fd00::1", "9", ""}},
           {"http://[fd00::1]/p", {"fd00::1", "80", "/p"}},
       }) {
    auto u = ParseResolveUrl(c.url);
    ASSERT_TRUE(u.ok()) << c.url << ": " << u.status();
    EXPECT_EQ(u->host, c.want.host) << c.url;
    EXPECT_EQ(u->port, c.want.port) << c.url;
    EXPECT_EQ(u->prefix, c.want.prefix) << c.url;
  }
}

TEST(ResolveUrl, BadFormsNameTheProblem) {
  struct Case {
    const char* url;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {"https://kc.example", "must start with http://"},
           {"kc-operator:80", "must start with http://"},
           {"", "must start with http://"},
           {"http://", "has no host or port"},
           {"http://:80", "has no host or port"},
           {"http://h:", "has no host or port"},
           {"http://h:http", "port \"http\" is not a number"},
           {"http://h:0", "is not a number in 1..65535"},
           {"http://[fd00::1", "unclosed '['"},
           {"http://[fd00::1]x", "want [address]:port"},
           {"http://h:65536", "is not a number in 1..65535"},
           {"http://h:99999999999999999999", "is not a number in 1..65535"},
       }) {
    auto u = ParseResolveUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << c.url;
    EXPECT_NE(u.status().message().find(c.want), std::string::npos) << u.status();
  }
}

// The wire's states are the fingerprint states (core/api_types.h) but
// Absent, plus Unknown: one list, derived, not a second spelling.
TEST(ResolveAnswer, WireStatesAreTheFingerprintStatesButAbsentPlusUnknown) {
  for (std::string_view s : fp_state::kAll) {
    EXPECT_EQ(ParseResolveState(s).ok(), s != fp_state::kAbsent) << s;
  }
  EXPECT_EQ(ResolveStateName(kResolveStates.back()), kResolveUnknown);
  ResolveAnswer a;
  a.fingerprint = "0123456789abcdef";
  a.node.gpu_product = "NVIDIA-H200";
  for (ResolveState s : kResolveStates) {
    auto parsed = ParseResolveState(ResolveStateName(s));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, s);
    a.state = s;
    auto back = ParseResolveAnswer(ResolveAnswerToJson(a));
    ASSERT_TRUE(back.ok()) << ResolveStateName(s) << ": " << back.status();
    EXPECT_EQ(back->state, s);
  }
  std::string absent = ResolveAnswerToJson(a);
  absent.replace(absent.find("\"Unknown\""), 9, "\"Absent\"");
  auto refused = ParseResolveAnswer(absent);
  ASSERT_FALSE(refused.ok()) << absent;
  EXPECT_NE(refused.status().message().find("resolve answer state: \"Absent\" is not one of"),
            std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace kc::core
