#include "initwarm/cli/seal_flags.h"

#include <utility>

#include "core/exit_codes.h"
#include "core/job_args.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace {
// A record holds at most 11 runs of 64 entries of about 1.5 KiB.
constexpr std::uint64_t kMaxConvergenceRecordBytes = 4 << 20;
}  // namespace

SealFlags::SealFlags() {
  const SealOptions o;  // its threads and lock age are the flags' defaults
  threads = o.threads;
  lock_stale_after = std::chrono::seconds{o.lock_stale_after_s};
}

void AddSealFlags(FlagSet* f, SealFlags* s) {
  AddRootFlag(f, &s->root);
  f->String(core::seal_flag::kFingerprint, &s->fingerprint,
            "fingerprint id; computed from --node-facts/--runtime-facts when omitted")
      .Env("KC_FINGERPRINT");
  AddOwnerFlag(f, &s->owner);
  f->String(core::seal_flag::kStaging, &s->staging, "staging directory")
      .DefaultText("v1/.staging/<fingerprint>-<job-uid>");
  f->String(core::seal_flag::kNodeFacts, &s->node_facts,
            "node part of the fingerprint: inline JSON or a file, "
            "{\"gpuProduct\",\"computeCapability\",\"driver\",\"cudaDriver\",\"arch\"}")
      .Env("KC_NODE_FACTS");
  f->String(core::seal_flag::kRuntimeFacts, &s->runtime_facts,
            "runtime part: inline JSON or a file, {\"image\",\"versions\":{},\"env\":{}}")
      .Env("KC_RUNTIME_FACTS");
  f->Bool(core::seal_flag::kAllowEmpty, &s->allow_empty,
          "publish even when the warmup wrote no files");
  f->Bool(core::seal_flag::kReplace, &s->replace,
          "replace a READY cache of the same fingerprint (the old one is quarantined)");
  f->Int(core::seal_flag::kThreads, &s->threads, 0, 1024, "hashing threads (0: twice the cores)");
  f->Duration(core::seal_flag::kLockStaleAfter, &s->lock_stale_after, kInitwarmDurations,
              "a lock older than this is taken as dead and broken");
  AddTerminationLogFlag(f, &s->termination_log);
  f->String(core::seal_flag::kConvergenceRecord, &s->convergence_record,
            "the record `initwarm converge` wrote: sealed into the cache as "
            "kernelcache/convergence.json and summarised in the result");
  f->String(core::seal_flag::kOnNotConverged, &s->on_not_converged,
            "with --convergence-record: Publish (seal a warmup that did not converge, and say "
            "so) or Fail (refuse it, exit 14)");
}

Status ReadConvergenceRecord(const SealFlags& s, SealOptions* o) {
  if (s.convergence_record.empty()) return OkStatus();
  auto text = ReadFileNoFollow(s.convergence_record, kMaxConvergenceRecordBytes);
  if (!text.ok()) {
    return text.status().WithContext(
        "--convergence-record (did the warmup run its passes: kc-converge, or initwarm drive "
        "--max-passes?)");
  }
  auto record = core::ParseConvergenceRecord(*text);
  if (!record.ok()) return record.status().WithContext("--convergence-record");
  o->convergence = std::move(*record);
  return OkStatus();
}

StatusOr<core::NotConvergedPolicy> NotConvergedPolicyFlag(const SealFlags& s) {
  auto p = core::ParseNotConvergedPolicy(s.on_not_converged);
  if (!p.ok()) return p.status().WithContext("--on-not-converged");
  return p;
}

StatusOr<SealOptions> DecodeSealFlags(const SealFlags& s) {
  SealOptions o;
  o.root = s.root;
  o.fingerprint = s.fingerprint;
  o.owner = ResolveOwner(s.owner, /*allow_random=*/false);
  o.staging = s.staging;
  o.allow_empty = s.allow_empty;
  o.replace = s.replace;
  o.threads = s.threads;
  o.lock_stale_after_s = s.lock_stale_after.count();
  KC_ASSIGN_OR_RETURN(o.node, NodeFactsArg(s.node_facts));
  KC_ASSIGN_OR_RETURN(o.runtime, RuntimeFactsArg(s.runtime_facts));
  KC_RETURN_IF_ERROR(NotConvergedPolicyFlag(s).status());
  KC_RETURN_IF_ERROR(SealFingerprint(o).status());
  return o;
}

int SealExitCode(const Status& s) {
  static constexpr std::pair<StatusCode, int> kExitCodes[] = {
      {StatusCode::kOk, core::kExitOk},
      {StatusCode::kInvalidArgument, core::kExitRefused},
      {StatusCode::kConflict, core::kExitLockHeld},
      {StatusCode::kAlreadyExists, core::kExitAlreadyReady},
      {StatusCode::kFailedPrecondition, core::kExitEmpty},
      {StatusCode::kResourceExhausted, core::kExitNoSpace},
  };
  return ExitCodeOf(s, kExitCodes);
}

}  // namespace kc::initwarm
