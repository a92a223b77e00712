#include "initwarm/warmup/drive_rules.h"

#include <gtest/gtest.h>

namespace kc::initwarm {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SplitDriveArgs, Table) {
  struct Case {
    std::vector<std::string> args;
    bool ok;
    std::vector<std::string> drive;
    std::vector<std::string> seal;
    std::string says;
  };
  const Case cases[] = {
      {{"--port=8000", "--", "seal", "--root=/r", "--replace"},
       true,
       {"--port=8000"},
       {"--root=/r", "--replace"},
       ""},
      {{"--", "seal"}, true, {}, {}, ""},
      // A later "--" belongs to the seal.
      {{"--port=1", "--", "seal", "--", "x"}, true, {"--port=1"}, {"--", "x"}, ""},
      {{"--port=8000"}, false, {}, {}, "missing \"-- seal ...\""},
      {{"--port=8000", "--"}, false, {}, {}, "must be \"seal\""},
      {{"--port=8000", "--", "verify", "--root=/r"}, false, {}, {}, "not \"verify\""},
      {{"--", "--fingerprint=x", "seal"}, false, {}, {}, "must be \"seal\""},
  };
  for (const auto& c : cases) {
    auto r = SplitDriveArgs(c.args);
    ASSERT_EQ(r.ok(), c.ok) << c.args.size();
    if (c.ok) {
      EXPECT_EQ(r->drive, c.drive);
      EXPECT_EQ(r->seal, c.seal);
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
    }
  }
}

TEST(DescribeCall, NamesIndexLabelMethodPath) {
  EXPECT_EQ(DescribeCall(2, {"POST", "/v1/completions", {}, "{}", "prompt=512 #1"}),
            "call 2 \"prompt=512 #1\" (POST /v1/completions)");
  EXPECT_EQ(DescribeCall(0, {"GET", "/v1/models", {}, "", ""}), "call 0 (GET /v1/models)");
}

TEST(CallReplyStatus, Table) {
  const core::WarmupCall call{"POST", "/v1/completions", {}, "{}", "p=8"};
  const std::string long_body = std::string(300, 'e') + "TAIL";
  struct Case {
    unsigned status;
    std::string body;
    bool ok;
    std::string says;
  };
  const Case cases[] = {
      {200, "{}", true, ""},
      {204, "", true, ""},
      {299, "", true, ""},
      {199, "", false, "answered HTTP 199"},
      {301, "moved", false, "answered HTTP 301: moved"},
      {400, "{\"error\":\"prompt too long\"}", false, "prompt too long"},
      {500, "boom", false, "call 3 \"p=8\" (POST /v1/completions) answered HTTP 500: boom"},
  };
  for (const auto& c : cases) {
    Status s = CallReplyStatus(3, call, {c.status, c.body});
    EXPECT_EQ(s.ok(), c.ok) << c.status;
    if (!c.ok) {
      EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    }
  }
  // Only the body's first 200 bytes are quoted.
  Status s = CallReplyStatus(0, call, {503, long_body});
  EXPECT_EQ(s.message().find("TAIL"), std::string::npos);
  EXPECT_NE(s.message().find(std::string(150, 'e')), std::string::npos);
}

TEST(IsReadyStatus, Only2xx) {
  for (unsigned s : {200u, 201u, 204u, 299u}) EXPECT_TRUE(IsReadyStatus(s)) << s;
  for (unsigned s : {0u, 100u, 199u, 300u, 404u, 503u}) EXPECT_FALSE(IsReadyStatus(s)) << s;
}

TEST(NextPoll, Table) {
  const DriveClock::time_point t0{};
  const auto deadline = t0 + seconds(10);
  struct Case {
    milliseconds attempt;  // since t0
    milliseconds now;
    bool more;
    milliseconds next;
  };
  const Case cases[] = {
      {milliseconds(0), milliseconds(5), true, milliseconds(1000)},        // a quick refusal
      {milliseconds(0), milliseconds(1500), true, milliseconds(1000)},     // a slow poll: at once
      {milliseconds(8900), milliseconds(8950), true, milliseconds(9900)},  // the last one
      {milliseconds(9000), milliseconds(9050), false, milliseconds(0)},  // would be at the deadline
      {milliseconds(9500), milliseconds(9600), false, milliseconds(0)},
      {milliseconds(0), milliseconds(10000), false, milliseconds(0)},  // deadline reached
      {milliseconds(9000), milliseconds(12000), false, milliseconds(0)},
  };
  for (const auto& c : cases) {
    auto next = NextPoll(t0 + c.attempt, t0 + c.now, deadline, milliseconds(1000));
    ASSERT_EQ(next.has_value(), c.more) << c.now.count();
    if (c.more) {
      EXPECT_EQ(*next, t0 + c.next) << c.now.count();
    }
  }
}

TEST(ShouldLogProgress, FirstThenEvery30s) {
  const DriveClock::time_point t0{};
  EXPECT_TRUE(ShouldLogProgress(std::nullopt, t0));
  EXPECT_FALSE(ShouldLogProgress(t0, t0 + seconds(1)));
  EXPECT_FALSE(ShouldLogProgress(t0, t0 + seconds(29)));
  EXPECT_TRUE(ShouldLogProgress(t0, t0 + seconds(30)));
  EXPECT_TRUE(ShouldLogProgress(t0, t0 + seconds(95)));
}

TEST(IsSettled, Table) {
  const TreeListing a = {{"triton", 4096, 1}, {"triton/k.cubin", 10, 5}};
  struct Case {
    TreeListing after;
    bool settled;
  };
  const Case cases[] = {
      {a, true},
      {{{"triton", 4096, 1}, {"triton/k.cubin", 11, 5}}, false},  // grew
      {{{"triton", 4096, 1}, {"triton/k.cubin", 10, 6}}, false},  // rewritten
      {{{"triton", 4096, 1}}, false},                             // removed
      {{{"triton", 4096, 1}, {"triton/k.cubin", 10, 5}, {"triton/k.json", 0, 7}}, false},
  };
  for (const auto& c : cases) EXPECT_EQ(IsSettled(a, c.after), c.settled) << c.after.size();
  EXPECT_TRUE(IsSettled({}, {}));
}

}  // namespace
}  // namespace kc::initwarm
