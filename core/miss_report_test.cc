#include "core/miss_report.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::core {
namespace {

MissReport Sample() {
  return {"0123456789abcdef",
          {{MissFramework::kTriton, "H1", "kernel k num_warps=4", 3, 1200},
           {MissFramework::kComputeCache, "ComputeCache", "CUDA ComputeCache", 2, 310}}};
}

TEST(MissReportTest, RoundTrips) {
  const std::string text = MissReportToJson(Sample());
  EXPECT_EQ(text,
            R"({"fingerprint":"0123456789abcdef","misses":[{"bytes":1200,"detail":"kernel k )"
            R"(num_warps=4","files":3,"framework":"triton","key":"H1"},{"bytes":310,"detail":)"
            R"("CUDA ComputeCache","files":2,"framework":"computecache","key":"ComputeCache"}]})");
  auto back = ParseMissReport(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Sample());
}

TEST(MissReportTest, EncoderBoundsCountAndText) {
  MissReport r{"0123456789abcdef", {}};
  for (std::size_t i = 0; i < kMaxReportedMisses + 10; ++i) {
    r.misses.push_back({MissFramework::kOther, std::string(2000, 'k'), "d", 1, 1});
  }
  auto back = ParseMissReport(MissReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->misses.size(), kMaxReportedMisses);
  EXPECT_EQ(back->misses[0].key.size(), kMaxMissTextBytes);
}

TEST(MissReportTest, BadFieldsAreNamed) {
  struct Case {
    const char* text;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           {"garbage", "not a JSON object"},
           {R"({"misses":[]})", "fingerprint must be 16"},
           {R"({"fingerprint":"0123456789abcdef"})", "misses must be an array"},
           {R"({"fingerprint":"0123456789abcdef","misses":[7]})", "misses[0] must be an object"},
           {R"({"fingerprint":"0123456789abcdef","misses":[{"framework":"Triton","key":"k",)"
            R"("detail":"d","files":1,"bytes":1}]})",
            "misses[0].framework \"Triton\" is not one of triton"},
           {R"({"fingerprint":"0123456789abcdef","misses":[{"framework":"triton","key":"k",)"
            R"("detail":"d","files":-1,"bytes":1}]})",
            "misses[0].files must be an integer >= 0"},
           {R"({"fingerprint":"0123456789abcdef","misses":[{"framework":"triton","key":3,)"
            R"("detail":"d","files":1,"bytes":1}]})",
            "misses[0].key must be a string"},
       }) {
    auto r = ParseMissReport(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status();
  }
  const std::string long_key = R"({"fingerprint":"0123456789abcdef","misses":[{"framework":)"
                               R"("other","key":")" +
                               std::string(kMaxMissTextBytes + 1, 'k') +
                               R"(","detail":"d","files":1,"bytes":1}]})";
  auto r = ParseMissReport(long_key);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("misses[0].key is longer than 512"), std::string::npos);
}

TEST(MissReportTest, TheHarvestListRefRoundTripsAndIsChecked) {
  MissReport r{"0123456789abcdef", {}, HarvestListRef{3, 120, std::string(64, 'a')}};
  auto back = ParseMissReport(MissReportToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  // Without harvest files the field is absent (an older operator ignores it).
  EXPECT_EQ(MissReportToJson({"0123456789abcdef", {}, std::nullopt}).find("harvest"),
            std::string::npos);
  const std::string head = R"({"fingerprint":"0123456789abcdef","misses":[],"harvest":)";
  for (const auto& [body, want] : std::vector<std::pair<std::string, std::string>>{
           {"[]", "harvest must be an object"},
           {R"({"files":-1,"bytes":1,"sha256":")" + std::string(64, 'a') + R"("})",
            "harvest.files"},
           {R"({"files":1,"bytes":1,"sha256":"xyz"})", "harvest.sha256"},
       }) {
    auto bad = ParseMissReport(head + body + "}");
    ASSERT_FALSE(bad.ok()) << body;
    EXPECT_NE(bad.status().message().find(want), std::string::npos) << bad.status();
  }
}

TEST(MissReportAnswer, RoundTripsAndNamesABadField) {
  const MissReportAnswer a{12, 3, 1};
  EXPECT_EQ(MissReportAnswerToJson(a), R"({"accepted":12,"dropped":1,"new":3})");
  auto back = ParseMissReportAnswer(MissReportAnswerToJson(a));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a);
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"<html>", "not a JSON object"},
           {R"({"accepted":1,"new":0})", "answer.dropped must be an integer >= 0"},
           {R"({"accepted":-1,"new":0,"dropped":0})", "answer.accepted must be"},
       }) {
    auto r = ParseMissReportAnswer(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status();
  }
}

}  // namespace
}  // namespace kc::core
