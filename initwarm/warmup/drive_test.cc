// `initwarm drive` against a real loopback server standing in for the
// model server: readiness, the calls in order, the view detached, then the
// in-process seal; and each way a drive fails.
#include "initwarm/warmup/drive.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <set>
#include <sstream>

#include "core/exit_codes.h"
#include "core/layout.h"
#include "core/warmup_plan.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cli/commands.h"
#include "initwarm/testing/fake_operator.h"
#include "initwarm/testing/loopback_server.h"
#include "initwarm/testing/test_util.h"
#include "testing/eventually.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::LoopbackServer;
using testing::ServedRequest;
using testing::ServerAnswer;

constexpr char kFp[] = "0123456789abcdef";
constexpr char kOwner[] = "job-1";
constexpr char kReady[] = "/health";

std::vector<core::WarmupCall> Plan() {
  return {
      {"POST", "/v1/completions", {{"X-Trace", "w1"}}, R"({"prompt":"a"})", "prompt=8 #1"},
      {"POST", "/v1/completions", {{"Content-Type", "text/plain"}}, "b", "prompt=16 #1"},
      {"GET", "/v1/models", {}, "", ""},
  };
}

std::vector<ServedRequest> Calls(LoopbackServer& server) {
  std::vector<ServedRequest> out;
  for (auto& r : server.requests()) {
    if (r.target != kReady) out.push_back(std::move(r));
  }
  return out;
}

class DriveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "cache";
    view_ = dir_.path() / "run" / "view";
    term_ = dir_.path() / "termination-log";
    PrepareOptions p;
    p.root = root_;
    p.fingerprint = kFp;
    p.owner = kOwner;
    p.view = view_;
    auto r = Prepare(p);
    ASSERT_TRUE(r.ok()) << r.status().message();
    staging_ = r->staging;
    SetPlan(core::WarmupCallsToJson(Plan()));
  }
  void TearDown() override { ::unsetenv(std::string(core::kWarmupRequestsEnv).c_str()); }

  static void SetPlan(const std::string& json) {
    ::setenv(std::string(core::kWarmupRequestsEnv).c_str(), json.c_str(), 1);
  }

  // The drive's flags, `extra`, then "-- seal ..." for the prepared staging.
  std::vector<std::string> Args(unsigned short port, const std::vector<std::string>& extra) const {
    std::vector<std::string> a = {"--port=" + std::to_string(port), "--view=" + view_.string(),
                                  "--termination-log=" + term_.string(), "--timeout=60"};
    a.insert(a.end(), extra.begin(), extra.end());
    for (const std::string& s :
         {std::string("--"), std::string("seal"), "--root=" + root_.string(),
          std::string("--fingerprint=") + kFp, std::string("--staging-id=") + kOwner,
          "--termination-log=" + term_.string(), std::string("--replace")}) {
      a.push_back(s);
    }
    return a;
  }

  fs::path Published() const { return core::Layout(root_).Published(kFp); }
  std::string Termination() const { return testing::ReadFile(term_); }

  testing::ScratchDir dir_;
  fs::path root_, view_, term_, staging_;
};

TEST_F(DriveTest, SendsThePlanDetachesTheViewAndSeals) {
  std::atomic<int> ready_polls{0};
  LoopbackServer server([&](const ServedRequest& r) -> ServerAnswer {
    if (r.target == kReady) return {++ready_polls <= 2 ? 503u : 200u, "", false};
    if (r.body == R"({"prompt":"a"})") {
      // The server compiles through the view, into the staging directory.
      testing::WriteFile(view_ / "triton" / "abc" / "k.cubin", "kernel");
    }
    return {200, R"({"ok":true})", false};
  });
  // The still-running server writes once more after the view is detached.
  std::atomic<bool> stop{false};
  auto late = std::async(std::launch::async, [&] {
    const bool detached =
        kc::testutil::Eventually([&] { return stop || fs::read_symlink(view_) != staging_; });
    if (detached && !stop) testing::WriteFile(view_ / "triton" / "late" / "late.bin", "late");
  });

  const int rc = RunDrive(Args(server.port(), {"--ready-path=/health", "--settle=1"}));
  stop = true;
  late.get();
  ASSERT_EQ(rc, core::kExitOk) << Termination();

  EXPECT_GE(ready_polls.load(), 3);
  const auto calls = Calls(server);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].target, "/v1/completions");
  EXPECT_EQ(calls[0].body, R"({"prompt":"a"})");
  EXPECT_EQ(calls[0].Header("X-Trace"), "w1");
  EXPECT_EQ(calls[0].Header("Content-Type"), "application/json");
  EXPECT_EQ(calls[1].body, "b");
  EXPECT_EQ(calls[1].Header("Content-Type"), "text/plain");
  EXPECT_EQ(calls[2].method, "GET");
  EXPECT_EQ(calls[2].target, "/v1/models");
  EXPECT_EQ(calls[2].body, "");

  const fs::path detached = dir_.path() / "run" / "detached";
  EXPECT_EQ(fs::read_symlink(view_), detached);
  EXPECT_TRUE(fs::exists(detached / "triton" / "late" / "late.bin"));
  EXPECT_TRUE(fs::exists(Published() / "READY"));
  EXPECT_EQ(testing::ReadFile(Published() / "triton" / "abc" / "k.cubin"), "kernel");
  EXPECT_FALSE(fs::exists(Published() / "triton" / "late"));
  EXPECT_EQ(Termination().find("Failed"), std::string::npos) << Termination();
  EXPECT_NE(Termination().find(kFp), std::string::npos) << Termination();
}

// Convergence passes in the server form: between passes the view points at
// the staging directory again and the server is restarted (here: a new
// "process" generation of the loopback server); a server that builds one
// more kernel in its second process converges after 2 passes.
TEST_F(DriveTest, PassesRestartTheServerAndReplayThePlanUntilNothingIsAdded) {
  std::atomic<int> generation{1};
  LoopbackServer server([&](const ServedRequest& r) -> ServerAnswer {
    if (r.target == kReady) return {200, "", false};
    if (r.body == R"({"prompt":"a"})") {
      testing::WriteFile(view_ / "triton" / "A" / "k.json", R"({"name":"k"})");
      if (generation >= 2)
        testing::WriteFile(view_ / "triton" / "B" / "late.json", R"({"name":"late"})");
    }
    return {200, "{}", false};
  });
  DriveOptions o;
  o.server = core::ResolveUrl{"127.0.0.1", std::to_string(server.port()), ""};
  o.ready_path = kReady;
  o.view = view_;
  o.settle = std::chrono::milliseconds(50);
  o.poll = std::chrono::milliseconds(10);
  o.calls = Plan();
  o.max_passes = 3;
  o.record = dir_.path() / "run" / "convergence.json";
  int restarts = 0;
  o.restart_server = [&] {
    EXPECT_EQ(fs::read_symlink(view_), staging_) << "the view points at staging again";
    ++restarts;
    ++generation;
    return OkStatus();
  };
  std::ostringstream log;
  auto r = Drive(o, log);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(restarts, 2) << log.str();
  ASSERT_TRUE(r->convergence.has_value());
  ASSERT_EQ(r->convergence->runs.size(), 3u) << log.str();
  EXPECT_EQ(r->convergence->runs[1].entries_added, 1u);
  EXPECT_EQ(r->convergence->runs[2].entries_added, 0u);
  EXPECT_TRUE(r->convergence->converged);
  EXPECT_EQ(Calls(server).size(), 9u);  // the plan three times
  EXPECT_NE(log.str().find("converged after 2 passes"), std::string::npos) << log.str();
  EXPECT_EQ(testing::ReadFile(o.record), core::ConvergenceRecordToJson(*r->convergence));
  EXPECT_TRUE(fs::exists(staging_ / "triton" / "B" / "late.json"));
}

TEST_F(DriveTest, AFailedCallEndsTheDriveNamingItAndPublishesNothing) {
  LoopbackServer server([&](const ServedRequest& r) -> ServerAnswer {
    if (r.body == "b") return {500, "CUDA out of memory", false};
    return {200, "{}", false};
  });
  EXPECT_EQ(RunDrive(Args(server.port(), {"--ready-path=/health"})), core::kExitDriveFailed);
  EXPECT_EQ(Calls(server).size(), 2u);  // the third is never sent
  EXPECT_FALSE(fs::exists(Published() / "READY"));
  EXPECT_EQ(fs::read_symlink(view_), staging_);
  const std::string t = Termination();
  EXPECT_NE(t.find("\"outcome\":\"Failed\""), std::string::npos) << t;
  EXPECT_NE(t.find(kFp), std::string::npos) << t;
  EXPECT_NE(t.find("drive: call 1 \\\"prompt=16 #1\\\" (POST /v1/completions) answered HTTP "
                   "500: CUDA out of memory"),
            std::string::npos)
      << t;
}

TEST_F(DriveTest, AServerNeverReadyFailsByTheTimeout) {
  LoopbackServer server([](const ServedRequest&) { return ServerAnswer{503, "loading", false}; });
  EXPECT_EQ(RunDrive(Args(server.port(), {"--ready-path=/health", "--timeout=2"})),
            core::kExitDriveFailed);
  EXPECT_TRUE(Calls(server).empty());
  EXPECT_FALSE(fs::exists(Published() / "READY"));
  const std::string t = Termination();
  EXPECT_NE(t.find("drive: the server was not ready within --timeout"), std::string::npos) << t;
  EXPECT_NE(t.find("HTTP 503"), std::string::npos) << t;
}

TEST_F(DriveTest, WithoutAReadyPathATcpConnectionIsReady) {
  LoopbackServer server([&](const ServedRequest& r) -> ServerAnswer {
    testing::WriteFile(view_ / "inductor" / "k.py", r.target);
    return {200, "{}", false};
  });
  ASSERT_EQ(RunDrive(Args(server.port(), {"--settle=0"})), core::kExitOk) << Termination();
  std::vector<std::string> targets;
  for (const auto& r : server.requests()) targets.push_back(r.target);
  EXPECT_EQ(targets,
            (std::vector<std::string>{"/v1/completions", "/v1/completions", "/v1/models"}));
  EXPECT_TRUE(fs::exists(Published() / "READY"));
}

TEST_F(DriveTest, NoServerListeningFailsByTheTimeoutWithoutAReadyPath) {
  const unsigned short port = testing::ClosedLoopbackPort();
  EXPECT_EQ(RunDrive(Args(port, {"--timeout=1"})), core::kExitDriveFailed);
  EXPECT_NE(Termination().find("waited for a TCP connection"), std::string::npos) << Termination();
  EXPECT_FALSE(fs::exists(Published() / "READY"));
}

TEST_F(DriveTest, ABadPlanIsAUsageError) {
  LoopbackServer server([](const ServedRequest&) { return ServerAnswer{200, "{}", false}; });
  struct Case {
    std::optional<std::string> plan;
    std::string says;
  };
  const Case cases[] = {
      {std::nullopt, "KC_WARMUP_REQUESTS: not set"},
      {"{", "KC_WARMUP_REQUESTS: not a JSON array"},
      {R"([{"method":"POST","path":"v1"}])", "KC_WARMUP_REQUESTS[0].path: must start with '/'"},
  };
  for (const auto& c : cases) {
    if (c.plan) {
      SetPlan(*c.plan);
    } else {
      ::unsetenv(std::string(core::kWarmupRequestsEnv).c_str());
    }
    EXPECT_EQ(RunDrive(Args(server.port(), {})), core::kExitUsage) << c.says;
    EXPECT_NE(Termination().find("drive: " + c.says), std::string::npos) << Termination();
    EXPECT_NE(Termination().find(kFp), std::string::npos) << Termination();
  }
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(DriveTest, TheCommandAfterDashesMustBeSeal) {
  LoopbackServer server([](const ServedRequest&) { return ServerAnswer{200, "{}", false}; });
  const std::string port = "--port=" + std::to_string(server.port());
  const std::string log = "--termination-log=" + term_.string();
  EXPECT_EQ(RunDrive({port, log, "--", "verify", "--root=/x"}), core::kExitUsage);
  EXPECT_NE(Termination().find("not \\\"verify\\\""), std::string::npos) << Termination();
  EXPECT_EQ(RunDrive({port, log}), core::kExitUsage);
  EXPECT_EQ(RunDrive({port, log, "--", "seal", "--no-such-flag"}), core::kExitUsage);
  EXPECT_NE(Termination().find("-- seal"), std::string::npos) << Termination();
  auto no_port = Args(server.port(), {});
  no_port.erase(no_port.begin());
  EXPECT_EQ(RunDrive(no_port), core::kExitUsage);
  EXPECT_NE(Termination().find("--port: required"), std::string::npos) << Termination();
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace kc::initwarm
