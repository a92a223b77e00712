// `initwarm seal`'s flags: parsed from argv (no environment), decoded into
// the options a seal runs with, and the exit code of each ending.
#include "initwarm/cli/seal_flags.h"

#include <gtest/gtest.h>

#include "core/exit_codes.h"
#include "core/manifest.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

constexpr char kFp[] = "0123456789abcdef";

std::optional<std::string> NoEnv(const std::string&) { return std::nullopt; }

StatusOr<SealOptions> Decode(const std::vector<std::string>& args) {
  FlagSet f("usage: initwarm seal [flags]");
  SealFlags flags;
  AddSealFlags(&f, &flags);
  KC_RETURN_IF_ERROR(f.Parse(args, NoEnv));
  return DecodeSealFlags(flags);
}

TEST(SealFlags, DefaultsAreSealOptions) {
  auto o = Decode({"--fingerprint=" + std::string(kFp), "--job-uid=job-1"});
  ASSERT_TRUE(o.ok()) << o.status();
  const SealOptions want;
  EXPECT_EQ(o->fingerprint, kFp);
  EXPECT_EQ(o->owner, "job-1");
  EXPECT_FALSE(o->root.empty());
  EXPECT_TRUE(o->staging.empty());  // the layout's, for the fingerprint and owner
  EXPECT_FALSE(o->node.has_value());
  EXPECT_FALSE(o->runtime.has_value());
  EXPECT_EQ(o->allow_empty, want.allow_empty);
  EXPECT_EQ(o->replace, want.replace);
  EXPECT_EQ(o->threads, want.threads);
  EXPECT_EQ(o->lock_stale_after_s, want.lock_stale_after_s);
}

TEST(SealFlags, DecodesEveryFlag) {
  auto o = Decode({"--root=/vol", "--staging-id=job-2", "--staging=/vol/v1/.staging/x",
                   "--node-facts=" + core::NodeFactsToJson(testing::H200Facts()),
                   "--runtime-facts=" + core::RuntimeFactsToJson(testing::TestRuntime()),
                   "--allow-empty", "--replace", "--threads=3", "--lock-stale-after=10m",
                   "--termination-log=/tmp/t"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->root, "/vol");
  EXPECT_EQ(o->owner, "job-2");
  EXPECT_EQ(o->staging, "/vol/v1/.staging/x");
  EXPECT_EQ(o->node, testing::H200Facts());
  EXPECT_EQ(o->runtime, testing::TestRuntime());
  EXPECT_TRUE(o->fingerprint.empty());  // Seal computes it from the facts
  EXPECT_TRUE(o->allow_empty);
  EXPECT_TRUE(o->replace);
  EXPECT_EQ(o->threads, 3);
  EXPECT_EQ(o->lock_stale_after_s, 600);
}

TEST(SealFlags, BadValuesAreRefused) {
  const std::string fp = "--fingerprint=" + std::string(kFp);
  const std::string node = "--node-facts=" + core::NodeFactsToJson(testing::H200Facts());
  struct Case {
    std::vector<std::string> args;
    const char* want;
  } cases[] = {
      {{"--fingerprint=XYZ", "--job-uid=job-1"}, "--fingerprint"},
      {{fp, "--job-uid=../escape"}, "--job-uid"},
      {{node, "--job-uid=job-1"}, "--node-facts and --runtime-facts must be given together"},
      {{"--node-facts={", "--job-uid=job-1"}, "--node-facts"},
      {{fp, node, "--runtime-facts=" + core::RuntimeFactsToJson(testing::TestRuntime()),
        "--job-uid=job-1"},
       "does not match the node and runtime facts"},
  };
  for (const auto& c : cases) {
    auto r = Decode(c.args);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status();
  }
}

TEST(SealFlags, ExitCodes) {
  EXPECT_EQ(SealExitCode(OkStatus()), core::kExitOk);
  EXPECT_EQ(SealExitCode(InvalidArgumentError("x")), core::kExitRefused);
  EXPECT_EQ(SealExitCode(ConflictError("x")), core::kExitLockHeld);
  EXPECT_EQ(SealExitCode(AlreadyExistsError("x")), core::kExitAlreadyReady);
  EXPECT_EQ(SealExitCode(FailedPreconditionError("x")), core::kExitEmpty);
  EXPECT_EQ(SealExitCode(ResourceExhaustedError("x")), core::kExitNoSpace);
  EXPECT_EQ(SealExitCode(NotFoundError("x")), core::kExitError);
  EXPECT_EQ(SealExitCode(InternalError("x")), core::kExitError);
}

}  // namespace
}  // namespace kc::initwarm
