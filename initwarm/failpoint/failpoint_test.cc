#include "initwarm/failpoint/failpoint.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "initwarm/testing/crash_at.h"

namespace kc::initwarm {
namespace {

TEST(Failpoint, PhasesHaveOneNameEach) {
  for (auto p : {CrashPhase::kHash, CrashPhase::kBytes, CrashPhase::kFsync, CrashPhase::kDirsync,
                 CrashPhase::kManifest, CrashPhase::kPublish, CrashPhase::kLoad}) {
    auto back = ParseCrashPhase(CrashPhaseName(p));
    ASSERT_TRUE(back.ok()) << CrashPhaseName(p);
    EXPECT_EQ(*back, p);
  }
  auto bad = ParseCrashPhase("hsah");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("publish"), std::string::npos) << bad.status();
}

// Without a hook (the shipped program) KC_CRASH_AT does nothing; with the
// test hook installed the named point kills the process.
TEST(FailpointDeathTest, OnlyTheTestHookCrashes) {
  setenv(testing::kCrashEnv, "publish:2", 1);
  SetCrashHook(nullptr);
  MaybeCrash(CrashPhase::kPublish, 5);  // no hook: still alive
  EXPECT_EXIT(
      {
        testing::InstallCrashAtFromEnv();
        MaybeCrash(CrashPhase::kPublish, 1);  // before the point
        MaybeCrash(CrashPhase::kHash, 9);     // another phase
        MaybeCrash(CrashPhase::kPublish, 2);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  unsetenv(testing::kCrashEnv);
}

}  // namespace
}  // namespace kc::initwarm
