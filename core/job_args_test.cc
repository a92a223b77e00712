#include "core/job_args.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

using Argv = std::vector<std::string>;

constexpr char kFp[] = "0123456789abcdef";

PrepareArgs Prepare() {
  PrepareArgs a;
  a.fingerprint = kFp;
  a.staging_id = "$(KC_JOB_UID)";
  a.install_runner = std::string(kDefaultRunner);
  a.break_lock_of = {"uid-1", "uid-2"};
  return a;
}

SealArgs Seal() {
  SealArgs a;
  a.fingerprint = kFp;
  a.staging_id = "$(KC_JOB_UID)";
  a.replace = true;
  a.convergence_record = std::string(kDefaultConvergenceRecord);
  a.on_not_converged = NotConvergedPolicy::kFail;
  return a;
}

GcArgs Gc() {
  GcArgs a;
  a.remove = {{kFp, "sha256:ab"}, {"fedcba9876543210", ""}};
  a.break_lock_of = {"uid-1"};
  return a;
}

HarvestArgs Harvest() {
  HarvestArgs a;
  a.fingerprint = kFp;
  a.base_digest = "sha256:ab";
  a.caps = {10, 1 << 20, 100, 3LL << 30};
  return a;
}

DriveArgs Drive() {
  DriveArgs a;
  a.port = 8000;
  a.ready_path = "/health";
  a.timeout = std::chrono::seconds(3240);
  a.request_timeout = std::chrono::seconds(120);
  a.max_passes = 2;
  a.convergence_record = std::string(kDefaultConvergenceRecord);
  a.seal = Seal();
  return a;
}

MissesArgs Misses() {
  MissesArgs a;
  a.interval = std::chrono::seconds(30);
  a.report_url = "http://kc-operator.kc-system.svc:8080";
  a.token_file = "/var/run/secrets/kernelcache/token";
  a.inbox = "/var/run/kernelcache/inbox";
  a.harvest_max_files = 64;
  a.harvest_max_bytes = "64Mi";
  return a;
}

ConvergeArgs Converge() {
  ConvergeArgs a;
  a.max_passes = 4;
  a.command = {"python", "warm.py", "--", "--shapes=1"};
  return a;
}

TEST(JobArgs, EncodersWriteTheOperatorsArgv) {
  const std::string root = "--root=/var/cache/kernelcache";
  const std::string view = "--view=/var/run/kernelcache/view";
  const std::string fp = std::string("--fingerprint=") + kFp;
  const std::string tlog = "--termination-log=/dev/termination-log";
  const std::string record = "--convergence-record=" + std::string(kDefaultConvergenceRecord);
  SealArgs seal_min;
  seal_min.fingerprint = kFp;
  seal_min.staging_id = "u";
  const Argv seal_min_argv = {"seal", root, fp, "--staging-id=u", tlog};
  DriveArgs drive_min;
  drive_min.port = 80;
  drive_min.seal = seal_min;
  Argv drive_min_argv = {"drive", "--port=80", "--timeout=1800", "--request-timeout=600", view,
                         tlog,    "--"};
  drive_min_argv.insert(drive_min_argv.end(), seal_min_argv.begin(), seal_min_argv.end());
  PrepareArgs prepare_min;
  prepare_min.fingerprint = kFp;
  prepare_min.staging_id = "u";
  MissesArgs misses_min;
  misses_min.interval = std::chrono::seconds(5);

  const std::vector<std::pair<Argv, Argv>> cases = {
      {PrepareArgv(Prepare()),
       {"prepare", root, view, fp, "--staging-id=$(KC_JOB_UID)",
        "--install-runner=" + std::string(kDefaultRunner), "--break-lock-of=uid-1,uid-2"}},
      {PrepareArgv(prepare_min), {"prepare", root, view, fp, "--staging-id=u"}},
      {SealArgv(Seal()),
       {"seal", root, fp, "--staging-id=$(KC_JOB_UID)", tlog, "--replace", record,
        "--on-not-converged=Fail"}},
      {SealArgv(seal_min), seal_min_argv},
      {GcArgv(Gc()),
       {"gc", root, std::string("--remove=") + kFp + ":sha256:ab", "--remove=fedcba9876543210",
        "--break-lock-of=uid-1"}},
      {GcArgv(GcArgs{}), {"gc", root}},
      {HarvestArgv(Harvest()),
       {"harvest", root, fp, "--base-digest=sha256:ab", "--max-files-per-pod=10",
        "--max-bytes-per-pod=1048576", "--max-files=100", "--max-bytes=3221225472", tlog}},
      {DriveArgv(Drive()),
       {"drive", "--port=8000", "--ready-path=/health", "--timeout=3240", "--request-timeout=120",
        view, tlog, "--max-passes=2", record, "--", "seal", root, fp, "--staging-id=$(KC_JOB_UID)",
        tlog, "--replace", record, "--on-not-converged=Fail"}},
      {DriveArgv(drive_min), drive_min_argv},
      {MissesArgv(Misses()),
       {"misses", "--view", "/var/run/kernelcache/view", "--interval", "30s", "--report-url",
        "http://kc-operator.kc-system.svc:8080", "--token-file",
        "/var/run/secrets/kernelcache/token", "--inbox", "/var/run/kernelcache/inbox",
        "--harvest-max-files", "64", "--harvest-max-bytes", "64Mi"}},
      {MissesArgv(misses_min),
       {"misses", "--view", "/var/run/kernelcache/view", "--interval", "5s"}},
      {ConvergeArgv(Converge()),
       {std::string(kDefaultRunner), "--max-passes=4", view,
        "--record=" + std::string(kDefaultConvergenceRecord), "--", "python", "warm.py", "--",
        "--shapes=1"}},
  };
  for (const auto& [got, want] : cases) EXPECT_EQ(got, want);
}

// decode(encode(x)) == x, for a typical and a minimal struct of each command.
template <class Args, class Encode, class Parse>
void ExpectRoundTrip(const Args& a, Encode encode, Parse parse) {
  auto back = parse(encode(a));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, a);
}

TEST(JobArgs, DecodingTheEncodingGivesTheArgumentsBack) {
  ExpectRoundTrip(Prepare(), PrepareArgv, ParsePrepareArgv);
  ExpectRoundTrip(PrepareArgs{}, PrepareArgv, ParsePrepareArgv);
  ExpectRoundTrip(Seal(), SealArgv, ParseSealArgv);
  ExpectRoundTrip(SealArgs{}, SealArgv, ParseSealArgv);
  SealArgs publish = Seal();
  publish.on_not_converged = NotConvergedPolicy::kPublish;
  publish.root = "/mnt/with=equals";  // only the first '=' separates
  ExpectRoundTrip(publish, SealArgv, ParseSealArgv);
  ExpectRoundTrip(Gc(), GcArgv, ParseGcArgv);
  ExpectRoundTrip(GcArgs{}, GcArgv, ParseGcArgv);
  ExpectRoundTrip(Harvest(), HarvestArgv, ParseHarvestArgv);
  ExpectRoundTrip(HarvestArgs{}, HarvestArgv, ParseHarvestArgv);
  ExpectRoundTrip(Drive(), DriveArgv, ParseDriveArgv);
  ExpectRoundTrip(DriveArgs{}, DriveArgv, ParseDriveArgv);
  ExpectRoundTrip(Misses(), MissesArgv, ParseMissesArgv);
  ExpectRoundTrip(MissesArgs{}, MissesArgv, ParseMissesArgv);
  ExpectRoundTrip(Converge(), ConvergeArgv, ParseConvergeArgv);
  ExpectRoundTrip(ConvergeArgs{}, ConvergeArgv, ParseConvergeArgv);
}

TEST(JobArgs, DecodersTakeBothFormsAndKeepDefaults) {
  auto m = ParseMissesArgv({"misses", "--interval=1m", "--harvest-max-files", "7"});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->interval, std::chrono::seconds(60));
  EXPECT_EQ(m->harvest_max_files, 7);
  EXPECT_EQ(m->view, kDefaultView);
  auto g = ParseGcArgv({"gc", "--remove", "a, b:d", "--remove=c", "--break-lock-of=x,,y"});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->remove, (std::vector<GcRemoval>{{"a", ""}, {"b", "d"}, {"c", ""}}));
  EXPECT_EQ(g->break_lock_of, (std::vector<std::string>{"x", "y"}));
  auto s = ParseSealArgv({"seal", "--replace=false"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->replace);
  EXPECT_EQ(s->termination_log, kTerminationLogPath);
}

TEST(JobArgs, RefusalsNameTheFlag) {
  struct Case {
    StatusOr<bool> got;
    std::string want;
  };
  auto ok = [](const auto& r) -> StatusOr<bool> {
    if (!r.ok()) return r.status();
    return true;
  };
  const std::string long_value(100, 'x');
  const std::vector<Case> cases = {
      {ok(ParseSealArgv({"seal", "--color=blue"})),
       "--color is not a flag the operator writes for initwarm seal"},
      {ok(ParseSealArgv({"seal", "--threads=4"})), "--threads is not a flag"},
      {ok(ParseHarvestArgv({"harvest", "--max-files=many"})),
       "--max-files: \"many\" is not an integer"},
      {ok(ParseHarvestArgv({"harvest", "--max-bytes=-1"})), "--max-bytes: -1 is out of range 0.."},
      {ok(ParseHarvestArgv({"harvest", "--max-files=" + long_value})),
       "--max-files: \"" + std::string(64, 'x') + "\" is not"},
      {ok(ParseDriveArgv({"drive", "--port=70000", "--", "seal"})),
       "--port: 70000 is out of range 0..65535"},
      {ok(ParseDriveArgv({"drive", "--timeout=soon", "--", "seal"})), "--timeout:"},
      {ok(ParseDriveArgv({"drive", "--port=1"})), "end with \"-- seal ...\""},
      {ok(ParseDriveArgv({"drive", "--", "gc"})), "after \"--\": initwarm seal arguments"},
      {ok(ParsePrepareArgv({"prepare", "--root=/a", "--root=/b"})), "--root is given twice"},
      {ok(ParseMissesArgv({"misses", "--view", "v", "--view", "w"})), "--view is given twice"},
      {ok(ParseSealArgv({"seal", "--on-not-converged=Maybe"})), "--on-not-converged: "},
      {ok(ParseSealArgv({"seal", "--replace=yes"})), "--replace: \"yes\" is not true or false"},
      {ok(ParseMissesArgv({"misses", "--interval"})), "--interval: missing value"},
      {ok(ParseMissesArgv({"misses", "stray"})), "argument \"stray\" is not --<flag>"},
      {ok(ParseGcArgv({"gc", "--=x"})), "argument \"--=x\""},
      {ok(ParseGcArgv({"prepare"})), "initwarm gc arguments must start with \"gc\""},
      {ok(ParseGcArgv({})), "must start with \"gc\""},
      {ok(ParseConvergeArgv({"kc-converge", "--max-passes=3"})), "end with \"-- <command>\""},
      {ok(ParseConvergeArgv({"kc-converge", "--record", "--", "x"})), "--record: missing value"},
      {ok(ParseConvergeArgv({})), "start with its path"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.got.ok()) << c.want;
    EXPECT_EQ(c.got.status().code(), StatusCode::kInvalidArgument) << c.want;
    EXPECT_NE(c.got.status().message().find(c.want), std::string::npos) << c.got.status();
  }
}

}  // namespace
}  // namespace kc::core
