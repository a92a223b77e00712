// `initwarm gc` and `initwarm inspect`.
#include <iostream>

#include "core/exit_codes.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "initwarm/cache/gc.h"
#include "initwarm/cache/inspect.h"
#include "initwarm/cache/lock.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/fs/fsutil.h"

namespace kc::initwarm {

int RunGc(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("gc"),
            "Removes only what it is asked to remove (a volume may be shared by several "
            "KernelCaches). --remove <fingerprint>:<manifest digest> removes that published "
            "cache while its READY still holds that digest (never one sealed since), under the "
            "fingerprint lock; with --remove, only the named fingerprints' staging (older than "
            "--staging-max-age, no live writer), quarantine (older than --quarantine-max-age) "
            "and dead locks go too; so do the staging and lock of every --break-lock-of owner, at "
            "any age. Without --remove, only such leftovers are removed, volume "
            "wide, and no published cache. --keep protects fingerprints. --dry-run lists only.\n\n"
            "exit codes: 0 done; 2 bad flags; 1 a removal failed or was skipped because a live "
            "writer holds the fingerprint (the rest were still tried; retry later).");
  std::string root;
  std::vector<std::string> remove;
  std::vector<std::string> keep;
  std::vector<std::string> dead;
  GcPolicy p;  // its ages are the flags' defaults
  std::chrono::seconds staging_max_age{p.staging_max_age_s};
  std::chrono::seconds quarantine_max_age{p.quarantine_max_age_s};
  std::chrono::seconds lock_stale_after{LockOptions().stale_after_s};
  bool dry_run = false;
  AddRootFlag(&f, &root);
  f.List(core::gc_flag::kRemove, &remove,
         "<fingerprint>[:<manifest digest>] to remove; without the digest only its "
         "leftovers (staging, quarantine, dead lock) go")
      .Repeatable();
  f.List(core::gc_flag::kKeep, &keep, "fingerprint ids never to touch").Repeatable();
  f.List(core::gc_flag::kBreakLockOf, &dead,
         "owner ids (Job uids) of warmups the operator saw end: their locks are broken and "
         "their staging removed at any age")
      .Repeatable();
  f.Duration(core::gc_flag::kStagingMaxAge, &staging_max_age, kInitwarmDurations,
             "remove staging directories older than this");
  f.Duration(core::gc_flag::kQuarantineMaxAge, &quarantine_max_age, kInitwarmDurations,
             "remove quarantine directories older than this");
  f.Duration(core::gc_flag::kLockStaleAfter, &lock_stale_after, kInitwarmDurations,
             "a lock older than this is dead");
  f.Bool(core::gc_flag::kDryRun, &dry_run, "list what would be removed, remove nothing");
  if (int rc = ParseOrExit("gc", &f, args); rc >= 0) return rc;
  p.staging_max_age_s = staging_max_age.count();
  p.quarantine_max_age_s = quarantine_max_age.count();
  p.now = NowSeconds();
  auto policy = GcPolicyOf({remove, keep, dead, f.IsSet("remove")}, p);
  if (!policy.ok()) {
    PrintError("gc", policy.status());
    return core::kExitUsage;
  }
  core::Layout layout(root);
  auto entries = ScanVolume(layout, lock_stale_after.count(), dead);
  if (!entries.ok()) {
    PrintError("gc", entries.status());
    return core::kExitError;
  }
  auto plan = PlanGc(*entries, *policy);
  const bool dry = dry_run;
  int removed = 0;
  for (const auto& d : plan) {
    std::cout << (d.remove ? (dry ? "would remove " : "remove ") : "keep ") << d.entry.path.string()
              << ": " << d.why << "\n";
    removed += d.remove ? 1 : 0;
  }
  std::cout << (dry ? "dry run: " : "") << removed << " of " << plan.size() << " entries "
            << (dry ? "would be " : "") << "removed\n";
  if (dry) return core::kExitOk;
  Status s = ApplyGc(layout, plan, lock_stale_after.count(), dead);
  if (!s.ok()) {
    PrintError("gc", s);
    return core::kExitError;
  }
  return core::kExitOk;
}

int RunInspect(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("inspect"),
            "Summarises a cache volume: fingerprints (READY or not), files and bytes, counts by "
            "framework directory, Triton kernels, versions, age; staging and quarantine.\n\n"
            "exit codes: 0 done; 2 bad flags; 1 the volume cannot be read.");
  std::string root;
  bool json = false;
  AddRootFlag(&f, &root);
  f.Bool("json", &json, "print a JSON array instead");
  if (int rc = ParseOrExit("inspect", &f, args); rc >= 0) return rc;
  auto s = InspectVolume(core::Layout(root), NowSeconds());
  if (!s.ok()) {
    PrintError("inspect", s.status());
    return core::kExitError;
  }
  std::cout << (json ? SummariesJson(*s) + "\n" : FormatSummaries(*s));
  return core::kExitOk;
}

}  // namespace kc::initwarm
