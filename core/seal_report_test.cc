#include "core/seal_report.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

TEST(SealReport, RoundTripSuccessAndFailure) {
  SealReport ok;
  ok.fingerprint = "3f9a1c2b7d4e5f60";
  ok.outcome = SealOutcome::kReplaced;
  ok.manifest_digest = std::string(64, 'a');
  ok.bytes = 1 << 20;
  ok.files = 42;
  ok.directory = "/var/cache/kernelcache/v1/3f9a1c2b7d4e5f60";
  ok.replaced_to = "/var/cache/kernelcache/v1/.quarantine/3f9a1c2b7d4e5f60-t-replaced";
  ok.durations_ms = {{"walk", 14}, {"hash", 16}, {"publish", 17}, {"total", 53}};
  auto back = ParseSealReport(SealReportToJson(ok));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, ok);
  EXPECT_NE(SealReportToJson(ok).find("\"hashMs\":16"), std::string::npos);

  SealReport failed;
  failed.fingerprint = "3f9a1c2b7d4e5f60";
  failed.outcome = SealOutcome::kFailed;
  failed.reason = "ResourceExhausted";
  failed.message = "no space left on device";
  back = ParseSealReport(SealReportToJson(failed));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, failed);
}

TEST(SealReport, ConvergenceSummaryRoundTripsAndIsChecked) {
  SealReport ok;
  ok.fingerprint = "3f9a1c2b7d4e5f60";
  ok.outcome = SealOutcome::kPublished;
  ok.manifest_digest = std::string(64, 'a');
  ok.convergence = ConvergenceSummary{3, false, 2, 2, {"triton kernel k num_warps=8"}};
  auto back = ParseSealReport(SealReportToJson(ok));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, ok);
  ok.convergence.reset();
  EXPECT_EQ(SealReportToJson(ok).find("convergence"), std::string::npos);

  const std::string head = R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" +
                           std::string(64, 'a') + R"(","bytes":1,"files":1,"convergence":)";
  struct Case {
    std::string convergence, field;
  } cases[] = {
      {"[]", "\"convergence\""},
      {R"({"passes":11,"converged":true,"lastEntries":0,"lastAutotune":0})", "convergence.passes"},
      {R"({"passes":1,"converged":1,"lastEntries":0,"lastAutotune":0})", "convergence.converged"},
      {R"({"passes":1,"converged":true,"lastEntries":-1,"lastAutotune":0})",
       "convergence.lastEntries"},
      {R"({"passes":1,"converged":true,"lastEntries":0,"lastAutotune":0,"still":[1]})",
       "convergence.still"},
  };
  for (const auto& c : cases) {
    auto r = ParseSealReport(head + c.convergence + "}");
    ASSERT_FALSE(r.ok()) << c.convergence;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

TEST(SealReport, MalformedNamesTheField) {
  const std::string d(64, 'a');
  struct Case {
    std::string msg, field;
  } cases[] = {
      {"", "not a JSON object"},
      {"[]", "not a JSON object"},
      {R"({"manifestDigest":")" + d + R"(","bytes":1,"files":1})", "\"fingerprint\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":"x","bytes":1,"files":1})",
       "\"manifestDigest\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" + d + R"(","bytes":-1,"files":1})",
       "\"bytes\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" + d +
           R"(","bytes":1,"files":1,"durations":{"hashMs":"x"}})",
       "\"durations.hashMs\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","outcome":"Sealed","manifestDigest":")" + d +
           R"(","bytes":1,"files":1})",
       "\"outcome\" must be Published, Replaced or Failed"},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","outcome":"failed"})", "\"outcome\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","outcome":1})", "\"outcome\""},
  };
  for (const auto& c : cases) {
    auto r = ParseSealReport(c.msg);
    ASSERT_FALSE(r.ok()) << c.msg;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status();
    EXPECT_EQ(r.status().message().rfind("BadTerminationMessage", 0), 0u) << r.status();
  }
}

TEST(SealOutcome, NamesRoundTripAndAbsentIsPublished) {
  for (SealOutcome o : kSealOutcomes) {
    auto parsed = ParseSealOutcome(SealOutcomeName(o));
    ASSERT_TRUE(parsed.ok()) << SealOutcomeName(o);
    EXPECT_EQ(*parsed, o);
  }
  auto bad = ParseSealOutcome("Replace");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Published, Replaced, Failed"), std::string::npos)
      << bad.status();
  auto r = ParseSealReport(R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" +
                           std::string(64, 'a') + R"(","bytes":1,"files":1})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, SealOutcome::kPublished);
}

}  // namespace
}  // namespace kc::core
