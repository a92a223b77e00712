#include "operator/decide/termination_message.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

const std::string kDigest(64, 'a');

std::string Msg(const std::string& fp, const std::string& extra = "") {
  return R"({"fingerprint":")" + fp + R"(","manifestDigest":")" + kDigest +
         R"(","bytes":1024,"files":3)" + extra + "}";
}

TEST(TerminationMessage, Good) {
  auto r = CheckSealResult(
      Msg("3f9a1c2b7d4e5f60", R"(,"durations":{"hashMs":1500,"totalMs":2250},"x":1)"),
      "3f9a1c2b7d4e5f60");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bytes, 1024);
  EXPECT_EQ(r->files, 3);
  EXPECT_EQ(r->manifest_digest, kDigest);
  EXPECT_DOUBLE_EQ(r->durations.at("hash"), 1.5);  // seal writes milliseconds
  EXPECT_DOUBLE_EQ(r->durations.at("total"), 2.25);
}

TEST(TerminationMessage, ReportedFailureIsSealFailed) {
  auto r = CheckSealResult(
      R"({"fingerprint":"3f9a1c2b7d4e5f60","outcome":"Failed","reason":"ResourceExhausted","message":"disk full"})",
      "3f9a1c2b7d4e5f60");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "SealFailed: seal reported ResourceExhausted: disk full");
}

TEST(TerminationMessage, Mismatch) {
  auto r = CheckSealResult(Msg("0000000000000000"), "3f9a1c2b7d4e5f60");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "FingerprintMismatch: sealed 0000000000000000, expected 3f9a1c2b7d4e5f60");
}

TEST(TerminationMessage, Malformed) {
  struct Case {
    std::string msg;
    std::string field;
  } cases[] = {
      {"", "not a JSON object"},
      {"sealed ok", "not a JSON object"},
      {"[]", "not a JSON object"},
      {R"({"manifestDigest":")" + kDigest + R"(","bytes":1,"files":1})", "\"fingerprint\""},
      {Msg("3F9A1C2B7D4E5F60"), "\"fingerprint\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":"abc","bytes":1,"files":1})",
       "\"manifestDigest\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" + kDigest +
           R"(","bytes":-1,"files":1})",
       "\"bytes\""},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","manifestDigest":")" + kDigest + R"(","bytes":1})",
       "\"files\""},
      {Msg("3f9a1c2b7d4e5f60", R"(,"durations":[1])"), "\"durations\""},
  };
  for (const auto& c : cases) {
    auto r = ParseSealResult(c.msg);
    ASSERT_FALSE(r.ok()) << c.msg;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find("BadTerminationMessage"), std::string::npos);
  }
}

// The typed verdict: its problem names the Event reason, which is the
// message's prefix.
TEST(TerminationMessage, JudgeNamesTheProblem) {
  struct Case {
    std::string msg;
    SealProblem problem;
  } cases[] = {
      {Msg("3f9a1c2b7d4e5f60"), SealProblem::kNone},
      {"sealed ok", SealProblem::kBadTerminationMessage},
      {Msg("3F9A1C2B7D4E5F60"), SealProblem::kBadTerminationMessage},
      {R"({"fingerprint":"3f9a1c2b7d4e5f60","outcome":"Failed","reason":"Internal","message":"x"})",
       SealProblem::kSealFailed},
      {Msg("0000000000000000"), SealProblem::kFingerprintMismatch},
  };
  for (const auto& c : cases) {
    const SealVerdict v = JudgeSealResult(c.msg, "3f9a1c2b7d4e5f60");
    EXPECT_EQ(v.problem, c.problem) << c.msg;
    if (c.problem == SealProblem::kNone) {
      EXPECT_EQ(v.result.bytes, 1024);
      EXPECT_TRUE(v.message.empty());
    } else {
      EXPECT_EQ(v.message.rfind(std::string(SealProblemName(c.problem)) + ": ", 0), 0u)
          << v.message;
    }
  }
}

}  // namespace
}  // namespace kc::op
