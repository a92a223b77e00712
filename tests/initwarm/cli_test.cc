// The initwarm binary end to end: subcommands, their exit codes and output.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/exit_codes.h"
#include "core/gate_args.h"
#include "core/layout.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunProcess;
using testing::WriteFile;

const std::string kBin = KC_INITWARM_BIN;
// initwarm with its test seams (files for facts and resolve answers).
const std::string kTestingBin = KC_INITWARM_TESTING_BIN;
const std::string kConvergeBin = KC_CONVERGE_BIN;
const std::string kFp = "0123456789abcdef";
const std::string kNode =
    R"({"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04","cudaDriver":"13.0","arch":"amd64"})";

class Cli : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args, std::string* out = nullptr) {
    // The seams' flags exist only in the test build.
    bool seams = false;
    for (const std::string& a : args) {
      seams |= a == "--resolve-file" || a == "--probe-file" || a == "--facts-file";
    }
    args.insert(args.begin(), seams ? kTestingBin : kBin);
    std::string o;
    int rc = RunProcess(args, {}, &o);
    if (out != nullptr) *out = o;
    last_ = o;
    return rc;
  }
  void Publish() {
    ASSERT_EQ(Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--view",
                   (d_.path() / "warm" / "view").string()}),
              0)
        << last_;
    testing::WriteTritonCache(d_.path() / "warm" / "view", 2);
    ASSERT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1",
                   "--termination-log", (d_.path() / "term").string()}),
              0)
        << last_;
  }
  std::string root() const { return (d_.path() / "vol").string(); }
  std::string ResolveFile(const std::string& state) {
    fs::path p = d_.path() / "resolve.json";
    WriteFile(
        p, R"({"fingerprint":")" + kFp + R"(","state":")" + state + R"(","directory":"v1/)" + kFp +
               R"(","manifestDigest":"","message":"warmup Job kc-warm-x running for 1m","node":)" +
               kNode + "}");
    return p.string();
  }

  testing::ScratchDir d_;
  std::string last_;
};

// A root-owned 0755 export and the non-root initwarm: exit 11 and the fix
// on stderr (docs/permissions.md). As root the binary runs under setpriv as
// 65532; otherwise against an export of our own that is not writable.
TEST_F(Cli, PrepareOnAnUnwritableExportExits11WithTheFix) {
  fs::create_directories(root());
  std::vector<std::string> argv = {kBin, "prepare",   "--root", root(),   "--fingerprint",
                                   kFp,  "--job-uid", "j1",     "--view", ""};
  if (::geteuid() == 0) {
    if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs setpriv to drop to 65532";
    fs::permissions(d_.path(), fs::perms::owner_all | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read |
                                   fs::perms::others_exec);
    fs::permissions(root(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    argv.insert(argv.begin(),
                {"/usr/bin/setpriv", "--reuid=65532", "--regid=65532", "--clear-groups"});
  } else {
    fs::permissions(root(), fs::perms::owner_read | fs::perms::owner_exec);
  }
  std::string out;
  const int rc = RunProcess(argv, {}, &out);
  fs::permissions(root(), fs::perms::owner_all);
  EXPECT_EQ(rc, core::kExitPermissionDenied) << out;
  EXPECT_NE(out.find("PermissionDenied"), std::string::npos) << out;
  EXPECT_NE(out.find("chmod 2775 <export>"), std::string::npos) << out;
  EXPECT_NE(out.find("spec.securityContext.fsGroup"), std::string::npos) << out;
}

TEST_F(Cli, HelpAndUsage) {
  std::string out;
  EXPECT_EQ(Run({"--help"}, &out), 0);
  for (const char* c : {"prepare", "seal", "wait", "verify", "gc", "inspect"}) {
    EXPECT_NE(out.find(c), std::string::npos) << c;
    std::string h;
    EXPECT_EQ(Run({c, "--help"}, &h), 0) << c;
    EXPECT_NE(h.find("exit codes"), std::string::npos) << c << ": " << h;
  }
  EXPECT_EQ(Run({"nope"}), core::kExitUsage);
  EXPECT_EQ(Run({"seal", "--bogus"}), core::kExitUsage);
}

// Hostile flag values: exit 2 (usage) with a message naming the flag, never
// a crash or an overflowed clock (--timeout 999999999999d was 8.6e16 s,
// times 1000 for milliseconds: int64 overflow).
TEST_F(Cli, HostileFlagValuesExitTwoNamingTheFlag) {
  const std::string huge(400, '9');
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{"wait", "--root", root(), "--timeout", "999999999999d"}, "--timeout"},
      {{"wait", "--root", root(), "--poll-initial", huge}, "--poll-initial"},
      {{"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j", "--threads", huge},
       "--threads"},
      {{"verify", "--root", root(), "--fingerprint", kFp, "--threads", "-1"}, "--threads"},
      {{"gc", "--root", root(), "--staging-max-age", huge + "h"}, "--staging-max-age"},
      {{"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j", "--lock-stale-after",
        "1e400"},
       "--lock-stale-after"},
  };
  for (const auto& c : cases) {
    std::string out;
    EXPECT_EQ(Run(c.args, &out), core::kExitUsage) << c.args[0] << " " << c.want << ": " << out;
    EXPECT_NE(out.find(c.want), std::string::npos) << c.args[0] << ": " << out;
  }
}

// initwarm must run on GPU machines we did not build: nothing but glibc may
// be loaded dynamically (NVML and libcuda come later, through dlopen).
TEST_F(Cli, LinksOnlyGlibcDynamically) {
  if (!fs::exists("/usr/bin/ldd")) GTEST_SKIP() << "no ldd";
  std::string out;
  ASSERT_EQ(RunProcess({"/usr/bin/ldd", kBin}, {}, &out), 0) << out;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    bool allowed = false;
    for (const char* lib : {"linux-vdso", "libc.so", "ld-linux", "libm.so", "libdl.so",
                            "libpthread.so", "librt.so"}) {
      allowed |= line.find(lib) != std::string::npos;
    }
    EXPECT_TRUE(allowed) << "unexpected dynamic dependency: " << line;
  }
}

// The command form's warmup container as a Job runs it: prepare installs
// the static runner into the run directory, the runner runs a warmup that
// compiles one more kernel on its second run until a pass adds nothing,
// and seal publishes the record with the cache and reports the summary.
TEST_F(Cli, ConvergencePassesFromPrepareToSeal) {
  const fs::path run = d_.path() / "run";
  const std::string view = (run / "view").string();
  const std::string runner = (run / "bin" / "kc-converge").string();
  const std::string record = (run / "convergence.json").string();
  ASSERT_EQ(Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--view",
                 view, "--install-runner", runner, "--runner-source", kConvergeBin}),
            0)
      << last_;
  const std::string counter = (d_.path() / "runs").string();
  const std::string warmup =
      "n=$(cat " + counter + " 2>/dev/null || echo 0); n=$((n+1)); echo $n > " + counter +
      "; mkdir -p $V/triton/A && printf '{\"name\":\"k\"}' > $V/triton/A/k.json; "
      "if [ $n -ge 2 ]; then mkdir -p $V/triton/B && printf '{\"name\":\"late\"}' > "
      "$V/triton/B/late.json; fi";
  std::string out;
  ASSERT_EQ(RunProcess({runner, "--max-passes=3", "--view=" + view, "--record=" + record, "--",
                        "/bin/sh", "-c", warmup},
                       {"V=" + view}, &out),
            0)
      << out;
  EXPECT_NE(out.find("converged after 2 passes"), std::string::npos) << out;
  ASSERT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1",
                 "--termination-log", (d_.path() / "term").string(), "--convergence-record", record,
                 "--on-not-converged", "Fail"}),
            0)
      << last_;
  const std::string term = ReadFile(d_.path() / "term");
  EXPECT_NE(term.find(R"("convergence":{"converged":true,"lastAutotune":0,"lastEntries":0,)"
                      R"("passes":2,"still":[]})"),
            std::string::npos)
      << term;
  const fs::path sealed = core::Layout(root()).Published(kFp) / "kernelcache/convergence.json";
  EXPECT_EQ(ReadFile(sealed), ReadFile(record));
  EXPECT_NE(ReadFile(core::Layout(root()).Manifest(kFp)).find("kernelcache/convergence.json"),
            std::string::npos);
}

TEST_F(Cli, NotConvergedWithPolicyFailExits14AndPublishesNothing) {
  const fs::path run = d_.path() / "run";
  const std::string view = (run / "view").string();
  const std::string record = (run / "convergence.json").string();
  ASSERT_EQ(
      Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--view", view}),
      0)
      << last_;
  // Another configuration of one kernel every run: an autotuner that never settles.
  const std::string warmup =
      "d=$V/triton/$(date +%s%N); mkdir -p $d && printf '{\"name\":\"k\"}' > $d/k.json";
  std::string out;
  ASSERT_EQ(RunProcess({kConvergeBin, "--max-passes=2", "--view=" + view, "--record=" + record,
                        "--", "/bin/sh", "-c", warmup},
                       {"V=" + view}, &out),
            0)
      << out;
  EXPECT_NE(out.find("not converged after 2 passes"), std::string::npos) << out;
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1",
                 "--termination-log", (d_.path() / "term").string(), "--convergence-record", record,
                 "--on-not-converged", "Fail"}),
            core::kExitNotConverged)
      << last_;
  const std::string term = ReadFile(d_.path() / "term");
  EXPECT_NE(term.find("NotConverged: not converged after 2 passes: the last pass still compiled 1 "
                      "entry, all nondeterministic autotune"),
            std::string::npos)
      << term;
  EXPECT_FALSE(fs::exists(core::Layout(root()).Ready(kFp)));
  // A record that is not one is a usage error naming the flag.
  WriteFile(record, "{}");
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1",
                 "--convergence-record", record}),
            core::kExitUsage);
  EXPECT_NE(last_.find("--convergence-record: convergence record: maxPasses"), std::string::npos)
      << last_;
}

TEST_F(Cli, ConvergeRunnerIsFullyStatic) {
  if (!fs::exists("/usr/bin/ldd")) GTEST_SKIP() << "no ldd";
  std::string out;
  RunProcess({"/usr/bin/ldd", kConvergeBin}, {}, &out);
  EXPECT_NE(out.find("not a dynamic executable"), std::string::npos) << out;
}

TEST_F(Cli, SealWritesTerminationMessage) {
  Publish();
  std::string term = ReadFile(d_.path() / "term");
  EXPECT_NE(term.find("\"outcome\":\"Published\""), std::string::npos) << term;
  EXPECT_NE(term.find("\"manifestDigest\""), std::string::npos) << term;
  // A second seal of the same fingerprint is refused with its own code.
  fs::create_directories(core::Layout(root()).Staging(kFp, "j2") / "triton");
  WriteFile(core::Layout(root()).Staging(kFp, "j2") / "triton/x", "x");
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j2"}),
            core::kExitAlreadyReady)
      << last_;
}

// A warmup whose user container failed never ran seal: its prepare-held
// lock stays. The next Job's prepare is refused until the operator names
// the dead owner; a live owner's lock is never broken that way.
TEST_F(Cli, PrepareBreaksTheLockOfAnOwnerDeclaredDead) {
  auto prepare = [&](const std::string& uid, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"prepare",   root(), "--fingerprint", kFp,
                                     "--job-uid", uid,    "--view",        ""};
    args.insert(args.begin() + 1, "--root");
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args);
  };
  ASSERT_EQ(prepare("job-failed"), 0) << last_;
  EXPECT_EQ(prepare("job-next"), core::kExitLockHeld) << last_;
  EXPECT_NE(last_.find("job-failed"), std::string::npos) << last_;
  EXPECT_EQ(prepare("job-next", {"--break-lock-of", "job-unrelated"}), core::kExitLockHeld)
      << last_;
  ASSERT_EQ(prepare("job-next", {"--break-lock-of=job-unrelated,job-failed"}), 0) << last_;
  // job-next is live now: a third writer naming only the old owner is refused.
  EXPECT_EQ(prepare("job-third", {"--break-lock-of", "job-failed"}), core::kExitLockHeld) << last_;
  EXPECT_NE(last_.find("job-next"), std::string::npos) << last_;
  // Naming oneself dead is a usage error.
  EXPECT_EQ(prepare("job-next", {"--break-lock-of", "job-next"}), core::kExitUsage) << last_;
}

// A warmup the operator cancelled left its prepare-held lock and staging,
// and the fingerprint is collected: GC removes them only when told the
// owner is dead, and then the next prepare needs no --break-lock-of.
TEST_F(Cli, GcRemovesTheLockAndStagingOfAnOwnerDeclaredDead) {
  const core::Layout l(root());
  ASSERT_EQ(Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "job-gone",
                 "--view", ""}),
            0)
      << last_;
  ASSERT_TRUE(fs::exists(l.Staging(kFp, "job-gone")));
  std::string out;
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp}, &out), 0) << out;
  EXPECT_TRUE(fs::exists(l.Lock(kFp))) << out;
  EXPECT_TRUE(fs::exists(l.Staging(kFp, "job-gone"))) << out;
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp, "--break-lock-of", "../job-gone"}, &out),
            core::kExitUsage);
  EXPECT_NE(out.find("--break-lock-of"), std::string::npos) << out;
  EXPECT_EQ(
      Run({"gc", "--root", root(), "--remove", kFp, "--break-lock-of=job-other,job-gone"}, &out), 0)
      << out;
  EXPECT_FALSE(fs::exists(l.Lock(kFp))) << out;
  EXPECT_FALSE(fs::exists(l.Staging(kFp, "job-gone"))) << out;
  EXPECT_EQ(Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "job-new",
                 "--view", ""}),
            0)
      << last_;
}

TEST_F(Cli, EmptySealRefused) {
  ASSERT_EQ(
      Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--view", ""}), 0);
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1"}),
            core::kExitEmpty);
  EXPECT_EQ(
      Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--allow-empty"}), 0)
      << last_;
}

// A tree seal refuses (a symlink leaving the cache, a FIFO) is exit 12,
// not the bad-flags code 2, with the refusal in the termination message.
TEST_F(Cli, RefusedTreeHasItsOwnExitCode) {
  core::Layout l(root());
  const fs::path term = d_.path() / "term";
  auto seal = [&] {
    return Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1",
                "--termination-log", term.string()});
  };
  ASSERT_EQ(Run({"prepare", "--root", root(), "--fingerprint", kFp, "--job-uid", "j1", "--view",
                 (d_.path() / "view").string()}),
            0)
      << last_;
  const fs::path staging = l.Staging(kFp, "j1");
  testing::WriteTritonCache(staging, 1);
  fs::create_symlink("/etc/passwd", staging / "evil");
  EXPECT_EQ(seal(), core::kExitRefused) << last_;
  EXPECT_NE(ReadFile(term).find("evil"), std::string::npos) << ReadFile(term);
  EXPECT_FALSE(fs::exists(l.Ready(kFp)));
  fs::remove(staging / "evil");
  ASSERT_EQ(::mkfifo((staging / "fifo").c_str(), 0644), 0);
  EXPECT_EQ(seal(), core::kExitRefused) << last_;
  EXPECT_NE(last_.find("special file"), std::string::npos) << last_;
  // Bad options stay the usage code.
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", "nothex", "--job-uid", "j1"}),
            core::kExitUsage)
      << last_;
  EXPECT_EQ(Run({"seal", "--root", root(), "--fingerprint", kFp, "--job-uid", "../x"}),
            core::kExitUsage)
      << last_;
  fs::remove(staging / "fifo");
  EXPECT_EQ(seal(), 0) << last_;
  std::string help;
  Run({"seal", "--help"}, &help);
  EXPECT_NE(help.find("12 the staging tree was refused"), std::string::npos) << help;
}

TEST_F(Cli, VerifyFailsQuarantinesAndNamesTheFile) {
  Publish();
  core::Layout l(root());
  fs::path f = l.Published(kFp) / "triton/H1001ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_1.cubin";
  fs::resize_file(f, 10);
  std::string out;
  EXPECT_EQ(Run({"verify", "--root", root(), "--fingerprint", kFp, "--node-facts", kNode}, &out),
            core::kExitInvalid);
  EXPECT_NE(out.find("kernel_1.cubin"), std::string::npos) << out;
  EXPECT_NE(out.find("truncated"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(l.Published(kFp)));
  bool reason = false;
  for (const auto& e : fs::directory_iterator(l.QuarantineRoot())) {
    reason |= fs::exists(e.path() / "REASON");
  }
  EXPECT_TRUE(reason);
}

TEST_F(Cli, WaitExitCodes) {
  std::string view = (d_.path() / "run" / "view").string();
  // Nothing published: Fail -> 3, StartCold -> 0 with an empty view.
  EXPECT_EQ(Run({"wait", "--root", root(), "--resolve-file", ResolveFile("Warming"), "--view", view,
                 "--timeout", "1s", "--no-probe"}),
            core::kExitTimeout)
      << last_;
  EXPECT_NE(last_.find("warmup Job kc-warm-x running for 1m"), std::string::npos) << last_;
  EXPECT_EQ(Run({"wait", "--root", root(), "--resolve-file", ResolveFile("Warming"), "--view", view,
                 "--timeout", "1s", "--no-probe", "--on-timeout", "StartCold"}),
            0)
      << last_;
  EXPECT_NE(last_.find("\"outcome\":\"Cold\""), std::string::npos) << last_;
  // Probe disagreeing with the resolver -> 4.
  Publish();
  fs::path probe = d_.path() / "probe.json";
  std::string other = kNode;
  other.replace(other.find("580.159.04"), 10, "570.86.155");
  WriteFile(probe, other);
  EXPECT_EQ(Run({"wait", "--root", root(), "--resolve-file", ResolveFile("Ready"), "--view", view,
                 "--probe-file", probe.string()}),
            core::kExitMismatch)
      << last_;
  // Agreeing probe, READY cache -> 0, warm view.
  WriteFile(probe, kNode);
  EXPECT_EQ(Run({"wait", "--root", root(), "--resolve-file", ResolveFile("Ready"), "--view", view,
                 "--view-prefix", std::string(core::kDefaultView), "--probe-file", probe.string(),
                 "--verify", "TargetArch"}),
            0)
      << last_;
  EXPECT_NE(last_.find("\"outcome\":\"Warm\""), std::string::npos) << last_;
  EXPECT_TRUE(fs::exists(fs::path(view) / "manifest.json"));
  EXPECT_EQ(Run({"wait", "--mode", "Sideways"}), core::kExitUsage);
}

// The operator's final answer ends the wait at once (no 900s timeout), with
// exit 10 under Fail and a cold view under StartCold; the gate report goes
// to the termination log named by KC_TERMINATION_LOG.
TEST_F(Cli, WaitFinalAnswerAndGateReport) {
  std::string view = (d_.path() / "run" / "view").string();
  fs::path answer = d_.path() / "final.json";
  WriteFile(answer,
            R"({"fingerprint":"","state":"Unknown","final":true,"reason":"NodeHasNoFingerprint",)"
            R"("message":"node n has no GPU fingerprint"})");
  const fs::path term = d_.path() / "wait-term";
  std::vector<std::string> args = {kTestingBin,      "wait",          "--root", root(),
                                   "--resolve-file", answer.string(), "--view", view,
                                   "--no-probe"};
  std::string out;
  EXPECT_EQ(RunProcess(args, {"KC_TERMINATION_LOG=" + term.string()}, &out), core::kExitNoCache)
      << out;
  EXPECT_NE(out.find("NodeHasNoFingerprint"), std::string::npos) << out;
  const std::string report = ReadFile(term);
  EXPECT_NE(report.find("\"outcome\":\"Failed\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"reason\":\"NodeHasNoFingerprint\""), std::string::npos) << report;
  args.insert(args.end(), {"--on-timeout", "StartCold"});
  EXPECT_EQ(RunProcess(args, {}, &out), 0) << out;
  EXPECT_NE(out.find("\"outcome\":\"Cold\""), std::string::npos) << out;
}

// The webhook's gate arguments (core/gate_args.h) are what `initwarm wait`
// parses: GateArgs -> argv (as the webhook writes it, the $(VAR) references
// expanded as the kubelet does) -> a wait that uses root, view, mode and
// verify as given.
TEST_F(Cli, WaitParsesTheWebhooksGateArgs) {
  Publish();
  const std::string view = (d_.path() / "gate" / "view").string();
  core::GateArgs a;
  a.root = root();
  a.view = view;
  a.mode = core::ConsumeMode::kShared;
  a.verify = core::Level::kChecksums;
  a.timeout_seconds = 5;
  a.on_timeout = core::OnTimeout::kFail;
  a.kernelcache = "llama";
  a.ns = core::EnvRef(core::gate_env::kNamespace);
  a.node = core::EnvRef(core::gate_env::kNodeName);
  std::vector<std::string> argv = core::GateArgv(a);
  for (std::string& arg : argv) {
    for (const auto& [ref, value] :
         {std::pair<std::string, std::string>{a.ns, "ml"}, {a.node, "gpu-1"}}) {
      const size_t at = arg.find(ref);
      if (at != std::string::npos) arg.replace(at, ref.size(), value);
    }
  }
  // The webhook's view is the fixed cache-view path the cache was written
  // under; this test cannot use that path, so it says where it was written.
  argv.insert(argv.end(), {"--view-prefix", std::string(core::kDefaultView), "--resolve-file",
                           ResolveFile("Ready"), "--no-probe", "--termination-log",
                           (d_.path() / "gate-term").string()});
  ASSERT_EQ(Run(argv), 0) << last_;
  const std::string report = ReadFile(d_.path() / "gate-term");
  EXPECT_NE(report.find("\"outcome\":\"Warm\""), std::string::npos) << report;
  // Shared: the view links to the pod's layered tree, whose files link into
  // the volume.
  ASSERT_TRUE(fs::is_symlink(view));
  const fs::path tree = fs::read_symlink(view);
  EXPECT_EQ(tree.parent_path(), fs::path(view).parent_path() / "local") << tree;
  EXPECT_EQ(fs::read_symlink(tree / "manifest.json").string().rfind(root(), 0), 0u)
      << fs::read_symlink(tree / "manifest.json");
  EXPECT_TRUE(fs::exists(fs::path(view) / "manifest.json"));
}

TEST_F(Cli, GcAndInspect) {
  Publish();
  std::string out;
  EXPECT_EQ(Run({"inspect", "--root", root()}, &out), 0);
  EXPECT_NE(out.find(kFp + "  READY"), std::string::npos) << out;
  EXPECT_NE(out.find("2 Triton kernels"), std::string::npos) << out;
  const std::string digest = ReadFile(core::Layout(root()).Ready(kFp)).substr(0, 64);
  // Not listed: never removed (a shared claim holds other KernelCaches' caches).
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", "fedcba9876543210"}, &out), 0) << out;
  EXPECT_TRUE(fs::exists(core::Layout(root()).Ready(kFp)));
  // Listed with another digest (it was sealed again since): kept.
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp + ":" + std::string(64, 'e')}, &out), 0);
  EXPECT_TRUE(fs::exists(core::Layout(root()).Ready(kFp))) << out;
  EXPECT_NE(out.find("sealed again"), std::string::npos) << out;
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp + ":" + digest, "--dry-run"}, &out), 0);
  EXPECT_NE(out.find("would remove"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(core::Layout(root()).Ready(kFp)));
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp + ":" + digest}, &out), 0) << out;
  EXPECT_FALSE(fs::exists(core::Layout(root()).Published(kFp)));
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", "not-a-fingerprint"}), core::kExitUsage);
  EXPECT_EQ(Run({"gc", "--root", root(), "--remove", kFp, "--keep", kFp}), core::kExitUsage);
}

}  // namespace
// The shipped initwarm has no test seams: its wait and probe refuse the
// file flags (exit 2, naming the flag) and do not list them in --help.
TEST_F(Cli, TheShippedProgramHasNoTestSeams) {
  std::string out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{kBin, "wait", "--resolve-file", "/dev/null"},
        std::vector<std::string>{kBin, "wait", "--probe-file", "/dev/null"},
        std::vector<std::string>{kBin, "probe", "--facts-file", "/dev/null"}}) {
    EXPECT_EQ(RunProcess(args, {}, &out), core::kExitUsage) << args[2] << ": " << out;
    EXPECT_NE(out.find(args[2].substr(2)), std::string::npos) << out;
  }
  for (const char* cmd : {"wait", "probe"}) {
    ASSERT_EQ(RunProcess({kBin, cmd, "--help"}, {}, &out), 0) << out;
    for (const char* flag : {"resolve-file", "probe-file", "facts-file"}) {
      EXPECT_EQ(out.find(flag), std::string::npos) << cmd << " --help lists " << flag;
    }
    ASSERT_EQ(RunProcess({kTestingBin, cmd, "--help"}, {}, &out), 0) << out;
    EXPECT_NE(out.find(std::string(cmd) == "wait" ? "resolve-file" : "facts-file"),
              std::string::npos)
        << out;
  }
}

}  // namespace kc::initwarm
