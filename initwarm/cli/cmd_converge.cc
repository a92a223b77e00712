// `initwarm converge`: the command form's warmup, run until a pass adds
// nothing (initwarm/warmup/converge.h).
#include <algorithm>
#include <iostream>

#include "core/convergence.h"
#include "core/exit_codes.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/warmup/converge.h"

namespace kc::initwarm {
namespace {

constexpr char kConvergeHelp[] =
    "The warmup container of a command-form warmup Job: runs the warmup command after \"--\" "
    "(in the model image; prepare copied this binary into the pod's run volume), then runs it "
    "again, each time in a fresh process over the same staged view, until a pass adds no "
    "cache entry or --max-passes passes ran. Each run and every process it started are gone "
    "before the staging tree is looked at. What each run added (files, bytes, entries by "
    "framework, new kernels or autotune variants of known ones, its duration) is written to "
    "--record after every run; `initwarm seal --convergence-record` reads it, applies "
    "spec.warmup.convergence.onNotConverged and seals it into the cache as "
    "kernelcache/convergence.json.\n\n"
    "usage: initwarm converge [--max-passes=3] [--view=...] [--record=...] -- <command> "
    "[args...]\n\n"
    "exit codes: 0 the runs finished (converged or not: the seal applies the policy); the "
    "warmup's own exit code when a run failed (the record names the run); 2 bad flags or no "
    "command; 1 any other error (the view is not prepare's symlink, the record could not be "
    "written).";

}  // namespace

int RunConverge(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("converge"), kConvergeHelp);
  ConvergeOptions o;
  std::string view = std::string(core::kDefaultView);
  std::string record = std::string(core::kDefaultConvergenceRecord);
  int max_passes = core::kDefaultMaxPasses;
  f.String(core::converge_flag::kView, &view,
           "the cache view symlink prepare pointed at the staging directory")
      .Env("KC_VIEW");
  f.Int(core::converge_flag::kMaxPasses, &max_passes, 1, core::kMaxMaxPasses,
        "convergence passes at most after the warmup's first run");
  f.String(core::converge_flag::kRecord, &record, "where the convergence record (JSON) is written");
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> own(args.begin(), dashes);
  if (int rc = ParseOrExit("converge", &f, own); rc >= 0) return rc;
  if (dashes == args.end() || dashes + 1 == args.end()) {
    PrintError("converge", InvalidArgumentError("no warmup command: want \"-- <command> ...\""));
    return core::kExitUsage;
  }
  o.command.assign(dashes + 1, args.end());
  o.view = AbsolutePath(view);
  o.record = AbsolutePath(record);
  o.max_passes = max_passes;
  auto r = Converge(o, std::cerr);
  if (!r.ok()) {
    PrintError("converge", r.status());
    return r.status().code() == StatusCode::kInvalidArgument ? core::kExitUsage : core::kExitError;
  }
  if (r->end == core::PassStep::kFailed) return r->exit_code;
  return core::kExitOk;
}

}  // namespace kc::initwarm
