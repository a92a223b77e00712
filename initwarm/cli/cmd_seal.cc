// `initwarm seal`: hash, write the manifest, publish atomically.
#include <iostream>

#include "core/exit_codes.h"
#include "initwarm/cache/seal.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seal_flags.h"

namespace kc::initwarm {

namespace {

constexpr char kSealHelp[] =
    "Seals the staging directory of this warmup: walks it, hashes every file (sha256, "
    "all cores), writes manifest.json, renames it to v1/<fingerprint> and writes READY "
    "last. Prints one JSON result line and writes it to the termination log.\n\n"
    "exit codes: 0 published; 2 bad flags; 5 another live writer holds the lock; 6 the "
    "fingerprint is already READY (pass --replace); 7 the staging directory is empty "
    "(pass --allow-empty); 8 the volume is full (nothing published, staging kept); 12 the "
    "staging tree was refused: a symlink leaving the cache, a FIFO, socket or device, or "
    "a name a cache may not hold (nothing published); 14 the warmup did not converge within "
    "its passes and --on-not-converged is Fail (nothing published); 1 any other error (nothing "
    "published).";

// The JSON result line on stdout and in the termination log.
void ReportSeal(const FlagSet& f, const SealFlags& flags, const std::string& json) {
  std::cout << json << "\n";
  WriteTerminationMessage(f, flags.termination_log, json);
}

}  // namespace

int RunSeal(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("seal"), kSealHelp);
  SealFlags flags;
  AddSealFlags(&f, &flags);
  // Every failure after the flags' names are known, bad values included,
  // is a JSON result on stdout and in the termination log.
  auto fail = [&](const Status& s, int code) {
    PrintError("seal", s);
    ReportSeal(f, flags, SealFailureJson(flags.fingerprint, s));
    return code;
  };
  if (int rc =
          ParseOrExit("seal", &f, args, [&](const Status& s) { return fail(s, core::kExitUsage); });
      rc >= 0) {
    return rc;
  }
  auto options = DecodeSealFlags(flags);
  if (!options.ok()) return fail(options.status(), core::kExitUsage);
  if (Status read = ReadConvergenceRecord(flags, &*options); !read.ok()) {
    return fail(read, core::kExitUsage);
  }
  if (options->convergence) {
    const Status policy =
        core::CheckConvergencePolicy(*options->convergence, *NotConvergedPolicyFlag(flags));
    if (!policy.ok()) return fail(policy, core::kExitNotConverged);
  }
  auto r = Seal(*options);
  if (!r.ok()) return fail(r.status(), SealExitCode(r.status()));
  ReportSeal(f, flags, SealResultJson(*r));
  if (!r->warning.empty()) std::cerr << "initwarm seal: warning: " << r->warning << "\n";
  return core::kExitOk;
}

}  // namespace kc::initwarm
