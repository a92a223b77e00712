#include "initwarm/gpu/isolated_run.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

namespace kc::initwarm {
namespace {

// A handler that echoes, fails on "bad", and crashes on "crash".
StatusOr<IsolatedProcess::Handler> EchoChild() {
  return IsolatedProcess::Handler([](std::string_view name, std::string_view payload) -> Status {
    if (payload == "crash") ::raise(SIGSEGV);
    if (payload == "bad") return FailedPreconditionError(std::string(name) + ": bad");
    return OkStatus();
  });
}

TEST(IsolatedProcessTest, RepliesCarryTheHandlersStatus) {
  auto p = IsolatedProcess::Start("echo", EchoChild);
  ASSERT_TRUE(p.ok()) << p.status();
  std::string died;
  std::optional<Status> ok = (*p)->Call("a", "fine", &died);
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->ok()) << *ok;
  std::optional<Status> bad = (*p)->Call("b", "bad", &died);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(bad->message(), "b: bad");
  // A large payload crosses the socket whole.
  std::optional<Status> big = (*p)->Call("c", std::string(8 << 20, 'x'), &died);
  ASSERT_TRUE(big.has_value());
  EXPECT_TRUE(big->ok()) << *big;
}

// A crash fails that request, says how, and the next request gets a fresh
// child.
TEST(IsolatedProcessTest, ACrashFailsOneRequestNotTheProcess) {
  auto p = IsolatedProcess::Start("echo", EchoChild);
  ASSERT_TRUE(p.ok()) << p.status();
  std::string died;
  EXPECT_FALSE((*p)->Call("x", "crash", &died).has_value());
  EXPECT_NE(died.find("signal 11"), std::string::npos) << died;
  std::optional<Status> after = (*p)->Call("y", "fine", &died);
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->ok()) << *after;
}

TEST(IsolatedProcessTest, StartReportsTheChildsInitError) {
  auto failing = IsolatedProcess::Start(
      "x", []() -> StatusOr<IsolatedProcess::Handler> { return UnavailableError("no GPU"); });
  ASSERT_FALSE(failing.ok());
  EXPECT_EQ(failing.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(failing.status().message(), "no GPU");
  auto dying =
      IsolatedProcess::Start("CUDA module loader", []() -> StatusOr<IsolatedProcess::Handler> {
        ::raise(SIGKILL);
        return UnavailableError("not reached");
      });
  ASSERT_FALSE(dying.ok());
  EXPECT_EQ(dying.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(dying.status().message().find("CUDA module loader process killed by signal 9"),
            std::string::npos)
      << dying.status();
}

}  // namespace
}  // namespace kc::initwarm
