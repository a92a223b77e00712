#include "initwarm/net/miss_sender.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "initwarm/testing/fake_operator.h"

namespace kc::initwarm {
namespace {

using testing::FakeOperator;
using namespace std::chrono_literals;

core::MissReport OneMiss() {
  return {"0123456789abcdef",
          {{core::MissFramework::kTriton, "KEY1", "kernel add_kernel num_warps=4", 8, 54427}}};
}

TEST(SendMissReportTest, PostsTheReportWithTheBearerToken) {
  FakeOperator op(200, R"({"accepted":1,"new":1,"dropped":0})");
  auto a = SendMissReport(op.url() + "/kc", "tok.en", OneMiss(), 5s);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, (core::MissReportAnswer{1, 1, 0}));
  const auto seen = op.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/kc/v1/misses");
  EXPECT_EQ(seen[0].authorization, "Bearer tok.en");
  EXPECT_EQ(seen[0].content_type, "application/json");
  auto body = core::ParseMissReport(seen[0].body);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, OneMiss());
}

TEST(SendMissReportTest, RefusalsAndBadAnswersAreErrors) {
  struct Case {
    unsigned http;
    std::string body;
    StatusCode want;
    std::string substr;
  };
  for (const Case& c : std::vector<Case>{
           {401, R"({"error":"TokenReview did not authenticate the token"})",
            StatusCode::kUnauthenticated, "did not authenticate"},
           {403, R"({"error":"pod ml/p1 was not gated Warm"})", StatusCode::kPermissionDenied,
            "not gated Warm"},
           {503, R"({"error":"not the leader"})", StatusCode::kUnavailable, "not the leader"},
           {200, "ok", StatusCode::kInvalidArgument, "not a JSON object"},
       }) {
    FakeOperator op(c.http, c.body);
    auto a = SendMissReport(op.url(), "t", OneMiss(), 5s);
    ASSERT_FALSE(a.ok()) << c.http;
    EXPECT_EQ(a.status().code(), c.want) << a.status();
    EXPECT_NE(a.status().message().find(c.substr), std::string::npos) << a.status();
    EXPECT_NE(a.status().message().find("POST http://127.0.0.1:"), std::string::npos);
  }
  const auto port = testing::ClosedLoopbackPort();
  auto closed = SendMissReport("http://127.0.0.1:" + std::to_string(port), "t", OneMiss(), 5s);
  EXPECT_EQ(closed.status().code(), StatusCode::kUnavailable) << closed.status();
  EXPECT_EQ(SendMissReport("https://x", "t", OneMiss(), 5s).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ReadMissTokenTest, ReadsThroughTheKubeletsLinkAndTrims) {
  const auto dir = std::filesystem::temp_directory_path() / "kc_miss_token_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "..data");
  { std::ofstream(dir / "..data" / "token") << "  abc.def \n"; }
  std::filesystem::create_symlink("..data/token", dir / "token");
  auto t = ReadMissToken(dir / "token");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "abc.def");
  { std::ofstream(dir / "empty") << "\n"; }
  EXPECT_EQ(ReadMissToken(dir / "empty").status().code(), StatusCode::kInvalidArgument);
  { std::ofstream(dir / "big") << std::string(64 * 1024 + 1, 'a'); }
  EXPECT_EQ(ReadMissToken(dir / "big").status().code(), StatusCode::kInvalidArgument);
  auto missing = ReadMissToken(dir / "absent");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("kernelcache-token"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(SendDueTest, Table) {
  const MissClock::time_point t0{};
  const core::MissReport one = OneMiss();
  const std::string one_json = core::MissReportToJson(one);
  const core::MissReport none{"0123456789abcdef", {}};
  const core::MissReport cold{"", one.misses};
  MissSendState sent;
  sent.sent = one_json;
  sent.sent_at = t0;
  MissSendState failed = AfterSend(MissSendState{}, false, one_json, t0);
  struct Case {
    const char* name;
    MissSendState state;
    const core::MissReport& report;
    std::string json;
    MissClock::duration at;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"first non-empty report", {}, one, one_json, 0s, true},
           {"nothing to say yet", {}, none, core::MissReportToJson(none), 0s, false},
           {"a cold view has no fingerprint", {}, cold, core::MissReportToJson(cold), 0s, false},
           {"unchanged, recently sent", sent, one, one_json, 299s, false},
           {"unchanged, refresh due", sent, one, one_json, 300s, true},
           {"changed", sent, none, "{}", 1s, true},
           {"failed, backoff not over", failed, one, one_json, 4s, false},
           {"failed, backoff over", failed, one, one_json, 5s, true},
       }) {
    EXPECT_EQ(SendDue(c.state, c.report, c.json, t0 + c.at), c.want) << c.name;
  }
}

TEST(AfterSendTest, BackoffDoublesToItsCapAndSuccessClearsIt) {
  const MissClock::time_point t0{};
  MissSendState s;
  std::vector<long> backoffs;
  for (int i = 0; i < 8; ++i) {
    s = AfterSend(s, false, "r", t0);
    backoffs.push_back(static_cast<long>(s.backoff.count()));
  }
  EXPECT_EQ(backoffs, (std::vector<long>{5, 10, 20, 40, 80, 160, 300, 300}));
  EXPECT_EQ(s.retry_at, t0 + 300s);
  EXPECT_TRUE(s.sent.empty());
  s = AfterSend(s, true, "r", t0 + 1s);
  EXPECT_EQ(s.sent, "r");
  EXPECT_EQ(s.sent_at, t0 + 1s);
  EXPECT_EQ(s.backoff.count(), 0);
}

}  // namespace
}  // namespace kc::initwarm
