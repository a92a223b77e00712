// `initwarm prepare`: staging directory + view symlink + single-writer lock.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/exit_codes.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"

namespace kc::initwarm {

int RunPrepare(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("prepare"),
            "Creates v1/.staging/<fingerprint>-<job-uid>/ on the cache volume, takes the "
            "fingerprint's single-writer lock for the job uid, and points the cache view at the "
            "staging directory. Runs as the warmup Job's first init container.\n\n"
            "exit codes: 0 ready to warm; 2 bad flags; 5 another live writer holds the lock "
            "(the message names it); 11 the cache volume is not writable by this uid/gid (the "
            "message says how to fix the export; docs/permissions.md); 1 any other error.");
  PrepareOptions o;  // its lock age is the flag's default
  std::string root;
  std::string view = std::string(core::kDefaultView);
  OwnerFlags owner;
  std::chrono::seconds stale{o.lock_stale_after_s};
  AddRootFlag(&f, &root);
  f.String(core::prepare_flag::kFingerprint, &o.fingerprint, "fingerprint id (16 hex digits)")
      .Env("KC_FINGERPRINT");
  AddOwnerFlag(&f, &owner);
  f.String(core::prepare_flag::kView, &view, "the cache view path").Env("KC_VIEW");
  f.Duration(core::prepare_flag::kLockStaleAfter, &stale, kInitwarmDurations,
             "a lock older than this is taken as dead and broken");
  f.List(core::prepare_flag::kBreakLockOf, &o.break_lock_of,
         "owner ids (Job uids) whose Jobs are finished or deleted: a lock they hold is "
         "broken at once (the operator passes the dead warmups of this fingerprint)")
      .Repeatable();
  std::string runner;
  std::string runner_source;
  f.String(core::prepare_flag::kInstallRunner, &runner,
           "copy the convergence runner (kc-converge) to this path, for the warmup container, "
           "which runs the model image");
  f.String(core::prepare_flag::kRunnerSource, &runner_source,
           "the kc-converge executable to install")
      .DefaultText("kc-converge beside this initwarm");
  if (int rc = ParseOrExit("prepare", &f, args); rc >= 0) return rc;
  if (!runner.empty()) {
    o.runner = AbsolutePath(runner);
    o.runner_source =
        runner_source.empty()
            ? std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kc-converge"
            : std::filesystem::path(AbsolutePath(runner_source));
  }
  // Absolute paths: the view becomes a symlink to a staging path under root.
  o.root = AbsolutePath(root);
  o.owner = ResolveOwner(owner, /*allow_random=*/true);
  o.view = AbsolutePath(view);
  o.lock_stale_after_s = stale.count();
  auto r = Prepare(o);
  if (!r.ok()) {
    PrintError("prepare", r.status());
    if (IsConflict(r.status())) return core::kExitLockHeld;
    if (r.status().code() == StatusCode::kInvalidArgument) return core::kExitUsage;
    if (r.status().code() == StatusCode::kPermissionDenied) return core::kExitPermissionDenied;
    return core::kExitError;
  }
  std::cout << nlohmann::json{{"fingerprint", o.fingerprint},   {"owner", o.owner},
                              {"staging", r->staging.string()}, {"view", o.view.string()},
                              {"lock", r->lock.string()},       {"reused", r->reused}}
                   .dump()
            << "\n";
  return core::kExitOk;
}

}  // namespace kc::initwarm
