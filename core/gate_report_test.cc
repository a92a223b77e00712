#include "core/gate_report.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

GateReport Sample() {
  GateReport r;
  r.outcome = GateOutcome::kFailed;
  r.reason = std::string(gate_reason::kQuarantined);
  r.fingerprint = "3f9a1c2b7d4e5f60";
  r.message = "cache for fingerprint 3f9a1c2b7d4e5f60 failed validation";
  r.view = "/var/run/kernelcache/view";
  r.waited_ms = 1234;
  r.quarantined.push_back({"3f9a1c2b7d4e5f60", std::string(64, 'a'), std::string(64, 'b'),
                           "Checksums", "triton/x/k.cubin", "sha256 mismatch",
                           "/var/cache/kernelcache/v1/.quarantine/3f9a1c2b7d4e5f60-t"});
  return r;
}

TEST(GateReport, RoundTrip) {
  const GateReport r = Sample();
  auto back = ParseGateReport(GateReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  GateReport warm;
  warm.outcome = GateOutcome::kWarm;
  warm.reason = std::string(gate_reason::kValidated);
  warm.manifest_digest = std::string(64, 'c');
  warm.parity = "env: VLLM_X is \"1\" in the warmup, \"2\" in container server";
  back = ParseGateReport(GateReportToJson(warm));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, warm);
}

TEST(GateReport, EveryOutcomeRoundTripsThroughItsName) {
  for (GateOutcome o : {GateOutcome::kWarm, GateOutcome::kCold, GateOutcome::kFailed}) {
    auto back = ParseGateOutcome(GateOutcomeName(o));
    ASSERT_TRUE(back.ok()) << GateOutcomeName(o) << ": " << back.status();
    EXPECT_EQ(*back, o);
  }
  EXPECT_EQ(ParseGateOutcome("warm").status().message(),
            "\"warm\" is not one of Warm, Cold, Failed");
}

TEST(GateReport, StaysUnderTheKubeletCap) {
  GateReport r = Sample();
  r.message = std::string(100000, 'm');
  for (int i = 0; i < 20; ++i) r.quarantined.push_back(r.quarantined[0]);
  for (auto& q : r.quarantined) q.reason = std::string(5000, 'r');
  const std::string json = GateReportToJson(r);
  EXPECT_LE(json.size(), kMaxReportBytes);
  auto back = ParseGateReport(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->quarantined.size(), 4u);
  EXPECT_EQ(back->quarantined[0].fingerprint, "3f9a1c2b7d4e5f60");
}

TEST(GateReport, BadInputIsAnErrorNamingTheField) {
  struct Case {
    std::string json, field;
  } cases[] = {
      {"not json", "not a JSON object"},
      {"[]", "not a JSON object"},
      {R"({"outcome":"Sideways"})", "outcome"},
      {R"({"outcome":7})", "outcome"},
      {R"({"outcome":"Warm","waitedMs":"1"})", "waitedMs"},
      {R"({"outcome":"Warm","quarantined":{}})", "quarantined"},
      {R"({"outcome":"Warm","quarantined":[1]})", "quarantined[0]"},
      {R"({"outcome":"Warm","quarantined":[{"foundDigest":5}]})", "quarantined[0].foundDigest"},
  };
  for (const auto& c : cases) {
    auto r = ParseGateReport(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status();
  }
  // Unknown fields are ignored (a newer initwarm).
  EXPECT_TRUE(ParseGateReport(R"({"outcome":"Cold","future":{"x":1}})").ok());
}

}  // namespace
}  // namespace kc::core
