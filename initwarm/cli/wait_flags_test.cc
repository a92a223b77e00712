// `initwarm wait`'s flags: parsed from argv (no environment), decoded into
// the options a wait runs with, and the exit code of each ending.
#include "initwarm/cli/wait_flags.h"

#include <gtest/gtest.h>

#include "core/exit_codes.h"
#include "initwarm/cli/seams.h"
#include "initwarm/testing/file_sources.h"

namespace kc::initwarm {
namespace {

std::optional<std::string> NoEnv(const std::string&) { return std::nullopt; }

// `seams`: as initwarm-testing (with --probe-file and --resolve-file), else
// as the shipped initwarm.
StatusOr<WaitCommand> Decode(const std::vector<std::string>& args, bool seams = true) {
  InstallSeams(seams ? testing::FileSeams() : Seams{});
  FlagSet f("usage: initwarm wait [flags]");
  WaitFlags flags;
  AddWaitFlags(&f, &flags);
  KC_RETURN_IF_ERROR(f.Parse(args, NoEnv));
  return DecodeWaitFlags(flags);
}

TEST(WaitFlags, DefaultsAreTheGatesAndWaitOptions) {
  auto c = Decode({});
  ASSERT_TRUE(c.ok()) << c.status();
  const WaitOptions want;
  const WaitOptions& o = c->options;
  using Paths = std::vector<std::filesystem::path>;
  EXPECT_EQ((Paths{o.root, o.view, o.view_prefix}), (Paths{want.root, want.view, want.view}));
  EXPECT_EQ(o.mode, want.mode);
  EXPECT_EQ(o.verify, want.verify);
  EXPECT_EQ(o.start_cold_on_timeout, want.start_cold_on_timeout);
  // timeout, first poll, poll cap, log interval, digest grace
  const std::vector<std::int64_t> got = {o.timeout_s, o.poll_initial_ms, o.poll_max_ms,
                                         o.log_every_s, o.digest_grace_s};
  EXPECT_EQ(got, (std::vector<std::int64_t>{want.timeout_s, want.poll_initial_ms, want.poll_max_ms,
                                            want.log_every_s, want.digest_grace_s}));
  EXPECT_TRUE(o.quarantine);
  EXPECT_TRUE(c->probe);
  EXPECT_TRUE(c->resolve_url.empty());
}

TEST(WaitFlags, DecodesEveryFlag) {
  auto c = Decode({"--root=/vol",
                   "--view=/run/kc/view",
                   "--view-prefix=/old/view",
                   "--local-dir=/run/kc/local",
                   "--mode=Copy",
                   "--verify=Checksums",
                   "--timeout=2m",
                   "--on-timeout=StartCold",
                   "--namespace=ml",
                   "--kernelcache=llama",
                   "--node=gpu-1",
                   "--resolve-url=http://op:8080",
                   "--fingerprint=0123456789abcdef",
                   "--poll-initial=2s",
                   "--poll-max=0s",
                   "--log-every=30s",
                   "--digest-grace=1m",
                   "--no-probe",
                   "--no-quarantine",
                   "--probe-file=/p.json",
                   "--resolve-file=/r.json"});
  ASSERT_TRUE(c.ok()) << c.status();
  const WaitOptions& o = c->options;
  EXPECT_EQ(o.root, "/vol");
  EXPECT_EQ(o.view, "/run/kc/view");
  EXPECT_EQ(o.view_prefix, "/old/view");
  EXPECT_EQ(o.local_dir, "/run/kc/local");
  EXPECT_EQ(o.mode, core::ConsumeMode::kCopy);
  EXPECT_EQ(o.verify, core::Level::kChecksums);
  EXPECT_EQ(o.timeout_s, 120);
  EXPECT_TRUE(o.start_cold_on_timeout);
  EXPECT_EQ(o.ns, "ml");
  EXPECT_EQ(o.kernelcache, "llama");
  EXPECT_EQ(o.node, "gpu-1");
  EXPECT_EQ(o.fingerprint, "0123456789abcdef");
  EXPECT_EQ(o.poll_initial_ms, 2000);
  EXPECT_EQ(o.poll_max_ms, 1000);  // at least a second
  EXPECT_EQ(o.log_every_s, 30);
  EXPECT_EQ(o.digest_grace_s, 60);
  EXPECT_FALSE(o.quarantine);
  EXPECT_FALSE(c->probe);
  EXPECT_EQ(c->resolve_url, "http://op:8080");
  EXPECT_EQ(c->resolve_file, "/r.json");
  EXPECT_EQ(c->probe_file, "/p.json");
}

TEST(WaitFlags, RelativePathsBecomeAbsolute) {
  auto c = Decode({"--root=vol", "--view=view"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->options.root.is_absolute());
  EXPECT_TRUE(c->options.view.is_absolute());
  EXPECT_EQ(c->options.view_prefix, c->options.view);
}

TEST(WaitFlags, BadValuesAreRefused) {
  struct Case {
    std::vector<std::string> args;
    const char* want;
  } cases[] = {
      {{"--mode=Link"}, "--mode: \"Link\""},
      {{"--verify=All"}, "--verify"},
      {{"--on-timeout=Retry"}, "--on-timeout"},
      {{"--timeout=soon"}, "--timeout"},
      {{"--resolve-url=http://op:8080", "--namespace=ml"},
       "--resolve-url needs --namespace, --kernelcache and --node"},
  };
  for (const auto& c : cases) {
    auto r = Decode(c.args);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status();
  }
  // A resolve file needs no namespace, KernelCache or node.
  EXPECT_TRUE(Decode({"--resolve-url=http://op:8080", "--resolve-file=/r.json"}).ok());
}

// The shipped program has no test seams: their flags are unknown there.
TEST(WaitFlags, TheFileFlagsExistOnlyWithTheTestSeams) {
  for (const char* flag : {"--probe-file=/p.json", "--resolve-file=/r.json"}) {
    auto r = Decode({flag}, /*seams=*/false);
    ASSERT_FALSE(r.ok()) << flag;
    EXPECT_NE(r.status().message().find(std::string(flag).substr(2, 10)), std::string::npos)
        << r.status();
    EXPECT_TRUE(Decode({flag}).ok()) << flag;
  }
}

TEST(WaitFlags, ExitCodes) {
  EXPECT_EQ(WaitExitCode(OkStatus()), core::kExitOk);
  EXPECT_EQ(WaitExitCode(DeadlineExceededError("x")), core::kExitTimeout);
  EXPECT_EQ(WaitExitCode(FailedPreconditionError("x")), core::kExitMismatch);
  EXPECT_EQ(WaitExitCode(DataLossError("x")), core::kExitInvalid);
  EXPECT_EQ(WaitExitCode(NotFoundError("x")), core::kExitNoCache);
  EXPECT_EQ(WaitExitCode(InvalidArgumentError("x")), core::kExitUsage);
  EXPECT_EQ(WaitExitCode(UnavailableError("x")), core::kExitError);
  EXPECT_EQ(WaitExitCode(InternalError("x")), core::kExitError);
}

}  // namespace
}  // namespace kc::initwarm
