#include "initwarm/warmup/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kc::initwarm {
namespace {

TEST(RunToCompletionTest, ReportsExitCodesAndSignals) {
  struct Case {
    std::vector<std::string> argv;
    int code;
    std::string how;
  };
  const std::vector<Case> cases = {
      {{"sh", "-c", "exit 0"}, 0, "exited with 0"},
      {{"sh", "-c", "exit 3"}, 3, "exited with 3"},
      {{"sh", "-c", "kill -9 $$"}, 137, "killed by signal 9"},
      {{"/nonexistent/warmup"}, 127, "exited with 127"},
  };
  for (const Case& c : cases) {
    auto r = RunToCompletion(c.argv);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->exit_code, c.code) << c.argv.back();
    EXPECT_TRUE(r->how.starts_with(c.how)) << r->how;
  }
  EXPECT_EQ(RunToCompletion({}).status().code(), StatusCode::kInvalidArgument);
}

// A run that leaves a process behind (a compile worker still running when
// the command exits): when RunToCompletion returns, it is gone and reaped,
// so nothing of the run can write after the caller looks.
TEST(RunToCompletionTest, NothingOfTheRunOutlivesIt) {
  char dir[] = "/tmp/kc-child-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string pidfile = std::string(dir) + "/pid";
  auto r = RunToCompletion({"sh", "-c", "sleep 1000 & echo $! > " + pidfile + "; exit 0"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 0);
  std::ifstream in(pidfile);
  pid_t left = 0;
  in >> left;
  ASSERT_GT(left, 0);
  errno = 0;
  EXPECT_EQ(::kill(left, 0), -1);
  EXPECT_EQ(errno, ESRCH) << "the background process of the run is still there";
  std::remove(pidfile.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace kc::initwarm
