#include "initwarm/warmup/server_restart.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace kc::initwarm {
namespace {

// The marker value of this test process's servers: tests run at once in
// other processes must not see (and signal) each other's.
std::string Marker() { return "test-" + std::to_string(::getpid()); }

RestartOptions Options() {
  RestartOptions o;
  o.marker_value = Marker();
  return o;
}

// A process of "the server": the marker in its environment, running `script`.
pid_t StartServer(const std::string& script) {
  const std::string marker = Marker();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("KC_WARMUP_SERVER", marker.c_str(), 1);
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

bool Has(const std::vector<pid_t>& pids, pid_t p) {
  return std::find(pids.begin(), pids.end(), p) != pids.end();
}

// Whether `pid` ignores SIGTERM now (its /proc status SigIgn mask).
bool IgnoresSigterm(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SigIgn:", 0) != 0) continue;
    const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
    return (mask >> (SIGTERM - 1)) & 1ULL;
  }
  return false;
}

// Polls `done` every millisecond for up to 60 s (a bound no loaded machine
// reaches: the child only has to exec and run one builtin).
template <typename F>
bool Eventually(F done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(RestartServerTest, EndsTheMarkedProcessesAndOnlyThem) {
  const pid_t server = StartServer("exec sleep 1000");
  const pid_t other = ::fork();
  if (other == 0) {
    ::execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Until the child has exec'ed with the marker.
  std::vector<pid_t> found;
  for (int i = 0; i < 1000 && !Has(found, server); ++i) found = ServerPids("/proc", Marker());
  ASSERT_TRUE(Has(found, server));
  EXPECT_FALSE(Has(found, other));
  ASSERT_TRUE(RestartServer(Options()).ok());
  int status = 0;
  ASSERT_EQ(::waitpid(server, &status, 0), server);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(::kill(other, 0), 0) << "an unmarked process was signalled";
  ::kill(other, SIGKILL);
  ::waitpid(other, nullptr, 0);
}

TEST(RestartServerTest, KillsAServerThatIgnoresSigtermAfterTheGrace) {
  const pid_t server = StartServer("trap '' TERM; while :; do sleep 1; done");
  // Until the shell has run its trap: a SIGTERM before that ends it at once.
  ASSERT_TRUE(Eventually([&] { return IgnoresSigterm(server); }));
  ASSERT_TRUE(Has(ServerPids("/proc", Marker()), server));
  RestartOptions o = Options();
  o.grace = std::chrono::milliseconds(200);
  ASSERT_TRUE(RestartServer(o).ok());
  int status = 0;
  ASSERT_EQ(::waitpid(server, &status, 0), server);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(RestartServerTest, NoServerVisibleSaysHowToFixIt) {
  Status s = RestartServer(Options());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("share its process namespace"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kc::initwarm
