// The argv the operator writes (core/job_args.h's encoders) is accepted by
// the real flag parser of each initwarm command: every flag name is one the
// command declares (run with --help appended, which checks the names and
// stops before doing anything), and seal's values decode too.
#include "core/job_args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "core/exit_codes.h"
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seal_flags.h"

namespace kc::initwarm {
namespace {

using Argv = std::vector<std::string>;
constexpr char kFp[] = "0123456789abcdef";

// The flags of `argv` up to "--" (without the command), then --help.
Argv FlagsWithHelp(const Argv& argv) {
  Argv out(argv.begin() + 1, std::find(argv.begin() + 1, argv.end(), "--"));
  out.push_back("--help");
  return out;
}

// Runs `run` on `args`, its help text swallowed; the exit code.
int Quietly(int (*run)(const Argv&), const Argv& args) {
  std::ostringstream sink;
  std::streambuf* old = std::cout.rdbuf(sink.rdbuf());
  const int rc = run(args);
  std::cout.rdbuf(old);
  return rc;
}

core::SealArgs Seal() {
  core::SealArgs s;
  s.fingerprint = kFp;
  s.staging_id = "job-1";
  s.replace = true;
  s.convergence_record = "/tmp/record.json";
  s.on_not_converged = core::NotConvergedPolicy::kFail;
  return s;
}

TEST(JobArgs, EveryEncodedFlagIsDeclaredByItsCommand) {
  core::PrepareArgs prepare;
  prepare.fingerprint = kFp;
  prepare.staging_id = "job-1";
  prepare.install_runner = "/tmp/kc-converge";
  prepare.break_lock_of = {"job-0"};
  core::GcArgs gc;
  gc.remove = {{kFp, "sha256:ab"}};
  gc.break_lock_of = {"job-0"};
  core::HarvestArgs harvest;
  harvest.fingerprint = kFp;
  harvest.base_digest = "sha256:ab";
  core::DriveArgs drive;
  drive.port = 8000;
  drive.ready_path = "/health";
  drive.max_passes = 2;
  drive.convergence_record = "/tmp/record.json";
  drive.seal = Seal();
  core::MissesArgs misses;
  misses.interval = std::chrono::seconds(30);
  misses.report_url = "http://kc-operator:8080";
  misses.token_file = "/tmp/token";
  misses.inbox = "/tmp/inbox";
  misses.harvest_max_files = 10;
  misses.harvest_max_bytes = "64Mi";
  core::ConvergeArgs converge;
  converge.command = {"python", "warm.py"};
  const std::vector<std::pair<int (*)(const Argv&), Argv>> cases = {
      {RunPrepare, core::PrepareArgv(prepare)},
      {RunSeal, core::SealArgv(Seal())},
      {RunGc, core::GcArgv(gc)},
      {RunHarvest, core::HarvestArgv(harvest)},
      {RunDrive, core::DriveArgv(drive)},
      {RunMisses, core::MissesArgv(misses)},
      {RunConverge, core::ConvergeArgv(converge)},
  };
  for (const auto& [run, argv] : cases) {
    EXPECT_EQ(Quietly(run, FlagsWithHelp(argv)), core::kExitOk) << argv[0];
  }
  // The check has teeth: a flag the command does not declare is refused
  // before --help.
  EXPECT_EQ(Quietly(RunPrepare, {"--nope=1", "--help"}), core::kExitUsage);
}

TEST(JobArgs, SealsFlagsDecodeWhatTheOperatorWrites) {
  const Argv argv = core::SealArgv(Seal());
  FlagSet f("usage: initwarm seal [flags]");
  SealFlags flags;
  AddSealFlags(&f, &flags);
  ASSERT_TRUE(f.Parse(Argv(argv.begin() + 1, argv.end()), [](const std::string&) {
                 return std::optional<std::string>();
               }).ok());
  EXPECT_EQ(flags.fingerprint, kFp);
  EXPECT_EQ(flags.owner.staging_id, "job-1");
  EXPECT_TRUE(flags.replace);
  EXPECT_EQ(flags.termination_log, core::kTerminationLogPath);
  auto policy = NotConvergedPolicyFlag(flags);
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(*policy, core::NotConvergedPolicy::kFail);
}

}  // namespace
}  // namespace kc::initwarm
