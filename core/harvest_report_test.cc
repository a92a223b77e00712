#include "core/harvest_report.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

const std::string kFp = "0123456789abcdef";
const std::string kA(64, 'a');
const std::string kB(64, 'b');

TEST(HarvestReport, MergedRoundTripsWithShortLists) {
  HarvestReport r;
  r.fingerprint = kFp;
  r.outcome = HarvestOutcome::kMerged;
  r.base_digest = kA;
  r.manifest_digest = kB;
  r.bytes = 100;
  r.files = 9;
  r.added_files = 3;
  r.added_bytes = 30;
  r.added_entries = {"triton/ab"};
  r.conflict_count = 1;
  r.conflicts = {"triton/cd/k.cubin"};
  r.pods = 2;
  auto back = ParseHarvestReport(HarvestReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, r);

  // Long lists are cut to kMaxHarvestListed names: a termination message
  // stays under 4 KiB whatever a merge met.
  for (int i = 0; i < 100; ++i) r.rejected.push_back(std::string(1000, 'x'));
  r.rejected_count = 100;
  const std::string json = HarvestReportToJson(r);
  EXPECT_LT(json.size(), 4096u);
  back = ParseHarvestReport(json);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->rejected.size(), kMaxHarvestListed);
  EXPECT_EQ(back->rejected_count, 100);
}

TEST(HarvestReport, FailedAndUnchanged) {
  HarvestReport f{.fingerprint = kFp, .outcome = HarvestOutcome::kFailed};
  f.reason = "ResourceExhausted";
  f.message = "no space left";
  auto back = ParseHarvestReport(HarvestReportToJson(f));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->reason, "ResourceExhausted");
  HarvestReport u{.fingerprint = kFp, .outcome = HarvestOutcome::kUnchanged, .base_digest = kA};
  u.duplicate_count = 4;
  back = ParseHarvestReport(HarvestReportToJson(u));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->duplicate_count, 4);
  EXPECT_TRUE(back->manifest_digest.empty());
}

TEST(HarvestReport, RefusesMalformedMessages) {
  struct Case {
    std::string json;
    std::string says;
  };
  const Case cases[] = {
      {"not json", "not a JSON object"},
      {R"({"fingerprint":"x","outcome":"Merged"})", "\"fingerprint\""},
      {R"({"fingerprint":")" + kFp + R"(","outcome":"Done"})", "\"outcome\""},
      {R"({"fingerprint":")" + kFp + R"(","outcome":"Merged","baseDigest":")" + kA + R"("})",
       "\"manifestDigest\""},
      {R"({"fingerprint":")" + kFp + R"(","outcome":"Unchanged"})", "\"baseDigest\""},
      {R"({"fingerprint":")" + kFp + R"(","outcome":"Unchanged","baseDigest":")" + kA +
           R"(","addedFiles":-2})",
       "\"addedFiles\""},
      {R"({"fingerprint":")" + kFp + R"(","outcome":"Unchanged","baseDigest":")" + kA +
           R"(","conflicts":[1]})",
       "\"conflicts\""},
  };
  for (const auto& c : cases) {
    auto r = ParseHarvestReport(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("BadTerminationMessage: ", 0), 0u);
  }
}

TEST(HarvestOutcome, NamesRoundTrip) {
  for (HarvestOutcome o : kHarvestOutcomes) {
    auto parsed = ParseHarvestOutcome(HarvestOutcomeName(o));
    ASSERT_TRUE(parsed.ok()) << HarvestOutcomeName(o);
    EXPECT_EQ(*parsed, o);
  }
  auto bad = ParseHarvestOutcome("merged");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Merged, Unchanged, Failed"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace kc::core
