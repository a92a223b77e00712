// `initwarm harvest`: merge what gated pods compiled into a new generation.
#include <iostream>

#include "api/quantity.h"
#include "core/exit_codes.h"
#include "core/harvest.h"
#include "core/harvest_report.h"
#include "core/job_args.h"
#include "core/manifest.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/misses/harvest.h"

namespace kc::initwarm {
namespace {

constexpr char kHarvestHelp[] =
    "Merges the files that gated pods compiled after their gates, as their miss watchers "
    "copied them into v1/.inbox/<fingerprint>/<pod uid>/, into a new generation of the "
    "fingerprint's cache: only the files --accept lists, each checked (no symlink, its "
    "listed size and sha256, a Triton kernel's target arch, a cubin's ELF structure); a "
    "path the cache or another pod holds with other bytes is a conflict and kept out. The "
    "new generation is the published files plus the accepted ones, sealed with replace "
    "under the fingerprint's lock; a full volume or a crash leaves the previous generation "
    "READY. Prints one JSON result line and writes it to the termination log.\n\n"
    "exit codes: 0 merged, or nothing new to merge; 2 bad flags; 5 another live writer "
    "holds the lock; 7 the cache is missing or changed since --base-digest (nothing "
    "merged); 8 the volume is full (the previous generation still READY); 1 any other "
    "error (the previous generation still READY).";

struct HarvestFlags {
  std::string root;
  std::string fingerprint;
  OwnerFlags owner;
  std::string base_digest;
  std::string accept;
  int max_files_per_pod = static_cast<int>(core::kDefaultHarvestMaxFilesPerPod);
  std::string max_bytes_per_pod = std::string(core::kDefaultHarvestMaxBytesPerPod);
  int max_files = static_cast<int>(core::kDefaultHarvestMaxFilesPerFingerprint);
  std::string max_bytes = std::string(core::kDefaultHarvestMaxBytesPerFingerprint);
  int threads = 0;
  std::string termination_log;
};

StatusOr<std::int64_t> Bytes(const std::string& flag, const std::string& value) {
  auto b = api::ParseQuantityBytes(value);
  if (!b.ok()) return b.status().WithContext("--" + flag);
  if (*b < 1) return InvalidArgumentError("--" + flag + ": must be at least 1 byte");
  return *b;
}

StatusOr<HarvestOptions> Decode(const HarvestFlags& f) {
  HarvestOptions o;
  o.root = f.root;
  o.fingerprint = f.fingerprint;
  o.owner = f.owner.job_uid.empty() ? f.owner.staging_id : f.owner.job_uid;
  if (o.owner.empty()) {
    if (const char* uid = std::getenv("POD_UID")) o.owner = uid;
  }
  o.base_digest = f.base_digest;
  std::string accept = f.accept;
  if (!accept.empty() && accept[0] != '[') {
    auto text = ReadFileToString(accept, 16 << 20);
    if (!text.ok()) return text.status().WithContext("--accept");
    accept = *text;
  }
  if (accept.empty()) return InvalidArgumentError("--accept: required (the accept list)");
  auto pods = core::ParseHarvestAccept(accept);
  if (!pods.ok()) return pods.status().WithContext("--accept");
  o.accept = std::move(*pods);
  o.caps.max_files_per_pod = f.max_files_per_pod;
  o.caps.max_files_per_fingerprint = f.max_files;
  KC_ASSIGN_OR_RETURN(o.caps.max_bytes_per_pod,
                      Bytes(core::harvest_flag::kMaxBytesPerPod, f.max_bytes_per_pod));
  KC_ASSIGN_OR_RETURN(o.caps.max_bytes_per_fingerprint,
                      Bytes(core::harvest_flag::kMaxBytes, f.max_bytes));
  o.threads = f.threads;
  return o;
}

int HarvestExitCode(const Status& s) {
  static constexpr std::pair<StatusCode, int> kExitCodes[] = {
      {StatusCode::kOk, core::kExitOk},
      {StatusCode::kInvalidArgument, core::kExitUsage},
      {StatusCode::kConflict, core::kExitLockHeld},
      {StatusCode::kFailedPrecondition, core::kExitEmpty},
      {StatusCode::kResourceExhausted, core::kExitNoSpace},
  };
  return ExitCodeOf(s, kExitCodes);
}

}  // namespace

int RunHarvest(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("harvest"), kHarvestHelp);
  HarvestFlags flags;
  AddRootFlag(&f, &flags.root);
  f.String(core::harvest_flag::kFingerprint, &flags.fingerprint,
           "the fingerprint whose cache gains a generation")
      .Env("KC_FINGERPRINT");
  AddOwnerFlag(&f, &flags.owner);
  f.String(core::harvest_flag::kBaseDigest, &flags.base_digest,
           "merge only into the generation whose READY holds this manifest digest");
  f.String(core::harvest_flag::kAccept, &flags.accept,
           "the accept list: inline JSON ([{\"uid\",\"files\":[{\"path\",\"size\",\"sha256\"}]}]) "
           "or a file holding it")
      .Env("KC_HARVEST_ACCEPT");
  f.Int(core::harvest_flag::kMaxFilesPerPod, &flags.max_files_per_pod, 1,
        core::kMaxHarvestFilesPerPod, "files taken from one pod at most");
  f.String(core::harvest_flag::kMaxBytesPerPod, &flags.max_bytes_per_pod,
           "bytes taken from one pod at most");
  f.Int(core::harvest_flag::kMaxFiles, &flags.max_files, 1, core::kMaxHarvestFilesPerFingerprint,
        "files one merge adds at most");
  f.String(core::harvest_flag::kMaxBytes, &flags.max_bytes, "bytes one merge adds at most");
  f.Int(core::harvest_flag::kThreads, &flags.threads, 0, 1024,
        "copy and hash threads (0: twice the cores)");
  AddTerminationLogFlag(&f, &flags.termination_log);
  auto report = [&](const std::string& json) {
    std::cout << json << "\n";
    WriteTerminationMessage(f, flags.termination_log, json);
  };
  auto fail = [&](const Status& s, int code) {
    PrintError("harvest", s);
    core::HarvestReport r;
    r.fingerprint = flags.fingerprint;
    r.outcome = core::HarvestOutcome::kFailed;
    r.reason = std::string(StatusCodeName(s.code()));
    r.message = s.message();
    if (core::IsSha256Hex(flags.base_digest)) r.base_digest = flags.base_digest;
    report(core::HarvestReportToJson(r));
    return code;
  };
  if (int rc = ParseOrExit("harvest", &f, args,
                           [&](const Status& s) { return fail(s, core::kExitUsage); });
      rc >= 0) {
    return rc;
  }
  auto options = Decode(flags);
  if (!options.ok()) return fail(options.status(), core::kExitUsage);
  auto r = Harvest(*options);
  if (!r.ok()) return fail(r.status(), HarvestExitCode(r.status()));
  report(core::HarvestReportToJson(*r));
  return core::kExitOk;
}

}  // namespace kc::initwarm
