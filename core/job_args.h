// The arguments of the initwarm commands the operator writes into its Jobs
// and sidecars, and the flag names initwarm declares for them: one codec
// for both sides, as core/gate_args.h is for `initwarm wait`. The operator
// encodes a typed struct with <Command>Argv(); initwarm declares its flags
// by the names in <command>_flag::* (initwarm/cli/cmd_*.cc), so a rename
// breaks the build on both sides; Parse<Command>Argv() is the encoder's
// inverse (for tests and fuzzing).
//
//   prepare --root=<r> --view=<v> --fingerprint=<id> --staging-id=<uid>
//           [--install-runner=<path>] [--break-lock-of=<uid>,...]
//   seal    --root=<r> --fingerprint=<id> --staging-id=<uid>
//           --termination-log=<path> [--replace]
//           [--convergence-record=<path>] [--on-not-converged=<Publish|Fail>]
//   gc      --root=<r> [--remove=<id>[:<digest>]]... [--break-lock-of=<uid>,...]
//   harvest --root=<r> --fingerprint=<id> --base-digest=<digest>
//           --max-files-per-pod=<n> --max-bytes-per-pod=<n> --max-files=<n>
//           --max-bytes=<n> --termination-log=<path>
//   drive   --port=<n> [--ready-path=<p>] --timeout=<s> --request-timeout=<s>
//           --view=<v> --termination-log=<path> [--max-passes=<n>]
//           [--convergence-record=<path>] -- seal ...
//   misses  --view <v> --interval <n>s [--report-url <url>] [--token-file <f>]
//           [--inbox <dir>] [--harvest-max-files <n>] [--harvest-max-bytes <q>]
//   <kc-converge> --max-passes=<n> --view=<v> --record=<path> -- <command>...
//
// The encoders write each flag in a fixed order and form (misses: "--flag
// value", the others "--flag=value"); an optional flag (std::optional, or
// "" / empty list) is written only when set. The decoders take both forms,
// a bool alone or as =true|false, comma lists trimmed without empty items,
// and keep a struct's default for an absent flag. Errors are InvalidArgument
// naming the flag and quoting at most 64 bytes of the value:
// `--max-files: "many" is not an integer`, `--color is not a flag of
// initwarm seal`, `--root is given twice`. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/convergence.h"
#include "core/harvest.h"
#include "core/layout.h"

namespace kc::core {

// The termination message's path in a Job's container.
inline constexpr char kTerminationLogPath[] = "/dev/termination-log";

// Flag names (without "--") more than one command declares.
namespace job_flag {
inline constexpr char kRoot[] = "root";
inline constexpr char kView[] = "view";
inline constexpr char kFingerprint[] = "fingerprint";
inline constexpr char kJobUid[] = "job-uid";
inline constexpr char kStagingId[] = "staging-id";  // alias of --job-uid
inline constexpr char kTerminationLog[] = "termination-log";
inline constexpr char kBreakLockOf[] = "break-lock-of";
inline constexpr char kLockStaleAfter[] = "lock-stale-after";
inline constexpr char kMaxPasses[] = "max-passes";
inline constexpr char kConvergenceRecord[] = "convergence-record";
inline constexpr char kTimeout[] = "timeout";
inline constexpr char kThreads[] = "threads";
}  // namespace job_flag

// ---- initwarm prepare (the warmup Job's first init container)
inline constexpr char kPrepareCommand[] = "prepare";
namespace prepare_flag {
using job_flag::kBreakLockOf;
using job_flag::kFingerprint;
using job_flag::kJobUid;
using job_flag::kLockStaleAfter;
using job_flag::kRoot;
using job_flag::kStagingId;
using job_flag::kView;
inline constexpr char kInstallRunner[] = "install-runner";
inline constexpr char kRunnerSource[] = "runner-source";
}  // namespace prepare_flag
struct PrepareArgs {
  std::string root = std::string(kDefaultRoot);
  std::string view = std::string(kDefaultView);
  std::string fingerprint;
  std::string staging_id;
  std::string install_runner;              // "" = not passed
  std::vector<std::string> break_lock_of;  // written as one comma list
  friend bool operator==(const PrepareArgs&, const PrepareArgs&) = default;
};
std::vector<std::string> PrepareArgv(const PrepareArgs& a);
StatusOr<PrepareArgs> ParsePrepareArgv(const std::vector<std::string>& argv);

// ---- initwarm seal (the warmup Job's container; after drive's "--")
inline constexpr char kSealCommand[] = "seal";
namespace seal_flag {
using job_flag::kConvergenceRecord;
using job_flag::kFingerprint;
using job_flag::kJobUid;
using job_flag::kLockStaleAfter;
using job_flag::kRoot;
using job_flag::kStagingId;
using job_flag::kTerminationLog;
using job_flag::kThreads;
inline constexpr char kStaging[] = "staging";
inline constexpr char kNodeFacts[] = "node-facts";
inline constexpr char kRuntimeFacts[] = "runtime-facts";
inline constexpr char kAllowEmpty[] = "allow-empty";
inline constexpr char kReplace[] = "replace";
inline constexpr char kOnNotConverged[] = "on-not-converged";
}  // namespace seal_flag
struct SealArgs {
  std::string root = std::string(kDefaultRoot);
  std::string fingerprint;
  std::string staging_id;
  std::string termination_log = kTerminationLogPath;
  bool replace = false;
  std::string convergence_record;  // "" = not passed
  std::optional<NotConvergedPolicy> on_not_converged;
  friend bool operator==(const SealArgs&, const SealArgs&) = default;
};
std::vector<std::string> SealArgv(const SealArgs& a);
StatusOr<SealArgs> ParseSealArgv(const std::vector<std::string>& argv);

// ---- initwarm gc (the GC Job)
inline constexpr char kGcCommand[] = "gc";
namespace gc_flag {
using job_flag::kBreakLockOf;
using job_flag::kLockStaleAfter;
using job_flag::kRoot;
inline constexpr char kRemove[] = "remove";  // repeatable
inline constexpr char kKeep[] = "keep";
inline constexpr char kStagingMaxAge[] = "staging-max-age";
inline constexpr char kQuarantineMaxAge[] = "quarantine-max-age";
inline constexpr char kDryRun[] = "dry-run";
}  // namespace gc_flag
// One --remove: a fingerprint, and the manifest digest of the generation
// to remove ("" = only its leftovers).
struct GcRemoval {
  std::string fingerprint;
  std::string digest;
  friend bool operator==(const GcRemoval&, const GcRemoval&) = default;
};
struct GcArgs {
  std::string root = std::string(kDefaultRoot);
  std::vector<GcRemoval> remove;           // one --remove each
  std::vector<std::string> break_lock_of;  // written as one comma list
  friend bool operator==(const GcArgs&, const GcArgs&) = default;
};
std::vector<std::string> GcArgv(const GcArgs& a);
StatusOr<GcArgs> ParseGcArgv(const std::vector<std::string>& argv);

// ---- initwarm harvest (the harvest Job)
inline constexpr char kHarvestCommand[] = "harvest";
namespace harvest_flag {
using job_flag::kFingerprint;
using job_flag::kJobUid;
using job_flag::kRoot;
using job_flag::kTerminationLog;
using job_flag::kThreads;
inline constexpr char kBaseDigest[] = "base-digest";
inline constexpr char kAccept[] = "accept";
inline constexpr char kMaxFilesPerPod[] = "max-files-per-pod";
inline constexpr char kMaxBytesPerPod[] = "max-bytes-per-pod";
inline constexpr char kMaxFiles[] = "max-files";
inline constexpr char kMaxBytes[] = "max-bytes";
}  // namespace harvest_flag
struct HarvestArgs {
  std::string root = std::string(kDefaultRoot);
  std::string fingerprint;
  std::string base_digest;
  HarvestCaps caps;
  std::string termination_log = kTerminationLogPath;
  friend bool operator==(const HarvestArgs&, const HarvestArgs&) = default;
};
std::vector<std::string> HarvestArgv(const HarvestArgs& a);
StatusOr<HarvestArgs> ParseHarvestArgv(const std::vector<std::string>& argv);

// ---- initwarm drive (a server warmup's main container), then "--" seal
inline constexpr char kDriveCommand[] = "drive";
namespace drive_flag {
using job_flag::kConvergenceRecord;
using job_flag::kMaxPasses;
using job_flag::kTerminationLog;
using job_flag::kTimeout;
using job_flag::kView;
inline constexpr char kHost[] = "host";
inline constexpr char kPort[] = "port";
inline constexpr char kReadyPath[] = "ready-path";
inline constexpr char kRequestTimeout[] = "request-timeout";
inline constexpr char kSettle[] = "settle";
}  // namespace drive_flag
struct DriveArgs {
  int port = 0;
  std::string ready_path;  // "" = not passed
  std::chrono::seconds timeout{1800};
  std::chrono::seconds request_timeout{600};
  std::string view = std::string(kDefaultView);
  std::string termination_log = kTerminationLogPath;
  std::optional<int> max_passes;
  std::string convergence_record;  // "" = not passed
  SealArgs seal;                   // after "--"
  friend bool operator==(const DriveArgs&, const DriveArgs&) = default;
};
std::vector<std::string> DriveArgv(const DriveArgs& a);
StatusOr<DriveArgs> ParseDriveArgv(const std::vector<std::string>& argv);

// ---- initwarm misses (the miss watcher sidecar)
inline constexpr char kMissesCommand[] = "misses";
namespace misses_flag {
using job_flag::kFingerprint;
using job_flag::kView;
inline constexpr char kJson[] = "json";
inline constexpr char kInterval[] = "interval";
inline constexpr char kReportUrl[] = "report-url";
inline constexpr char kTokenFile[] = "token-file";
inline constexpr char kInbox[] = "inbox";
inline constexpr char kPodUid[] = "pod-uid";
inline constexpr char kHarvestMaxFiles[] = "harvest-max-files";
inline constexpr char kHarvestMaxBytes[] = "harvest-max-bytes";
}  // namespace misses_flag
struct MissesArgs {
  std::string view = std::string(kDefaultView);
  std::chrono::seconds interval{0};
  std::string report_url;  // "" = not passed (and so for the strings below)
  std::string token_file;
  std::string inbox;
  std::optional<std::int64_t> harvest_max_files;
  std::string harvest_max_bytes;  // a quantity ("64Mi")
  friend bool operator==(const MissesArgs&, const MissesArgs&) = default;
};
std::vector<std::string> MissesArgv(const MissesArgs& a);
StatusOr<MissesArgs> ParseMissesArgv(const std::vector<std::string>& argv);

// ---- the convergence runner (kc-converge, `initwarm converge` alone): the
// command form's warmup container, its first argument the runner's path.
inline constexpr char kConvergeCommand[] = "converge";
namespace converge_flag {
using job_flag::kMaxPasses;
using job_flag::kView;
inline constexpr char kRecord[] = "record";
}  // namespace converge_flag
struct ConvergeArgs {
  std::string runner = std::string(kDefaultRunner);
  int max_passes = kDefaultMaxPasses;
  std::string view = std::string(kDefaultView);
  std::string record = std::string(kDefaultConvergenceRecord);
  std::vector<std::string> command;  // the user's warmup, after "--"
  friend bool operator==(const ConvergeArgs&, const ConvergeArgs&) = default;
};
std::vector<std::string> ConvergeArgv(const ConvergeArgs& a);
StatusOr<ConvergeArgs> ParseConvergeArgv(const std::vector<std::string>& argv);

}  // namespace kc::core
