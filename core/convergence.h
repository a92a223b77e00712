// Convergence: a warmup proves itself by running again, in fresh
// processes, until a run adds nothing to the staged cache.
//
//   run 0     the user's warmup (the command form's command), as before
//   pass 1..  the same command again, each in a fresh process over the same
//             staged view (`initwarm converge`, initwarm/warmup/converge.h)
// What a run added is what it wrote into the staging tree: files that were
// not there before it, and files it changed outside nv/ (the CUDA driver
// rewrites its ComputeCache index in place on every process; its new
// entries are new files). Those files are grouped into entries by the
// runtime-miss classifier (core/runtime_miss.h), the one that names what a
// serving pod compiled after its gate. An entry is
//   new       a kernel, graph or module no earlier run compiled, or
//   autotune  another configuration of a kernel an earlier run compiled
//             (same Triton kernel name and signature, another hash: other
//             num_warps/num_stages/constants), or an autotune result
//             (Triton's <fn>.autotune.json, Inductor's .best_config):
//             timing noise picked another choice in this process.
// Converged after N passes: pass N added no entry. Not converged: the last
// pass allowed (maxPasses) still added entries; the policy says whether
// such a warmup publishes anyway (Publish, the default) or fails (Fail).
//
// The record (the runner writes it, the seal reads it, checks the policy,
// and seals it into the cache at kConvergenceRecordPath):
//   {"maxPasses": 3, "converged": true,
//    "runs": [{"index": 0, "durationMs": 5120, "exitCode": 0,
//              "filesAdded": 41, "bytesAdded": 903112, "entriesAdded": 9,
//              "autotuneEntries": 0, "byFramework": {"triton": 9},
//              "entries": [{"framework": "triton", "key": "<hash>",
//                           "detail": "kernel k num_warps=4 ...",
//                           "novelty": "new", "files": 4, "bytes": 1200}]}, ...]}
// Pure: no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/runtime_miss.h"

namespace kc::core {

// spec.warmup.convergence.onNotConverged.
enum class NotConvergedPolicy { kPublish, kFail };
inline constexpr std::array<NotConvergedPolicy, 2> kNotConvergedPolicies = {
    NotConvergedPolicy::kPublish, NotConvergedPolicy::kFail};
// "Publish" | "Fail"
std::string_view NotConvergedPolicyName(NotConvergedPolicy p);
StatusOr<NotConvergedPolicy> ParseNotConvergedPolicy(std::string_view name);

// spec.warmup.convergence.maxPasses: its default and bounds. 0 turns the
// passes off (the warmup runs once and is sealed as it is).
inline constexpr std::int32_t kDefaultMaxPasses = 3;
inline constexpr std::int32_t kMaxMaxPasses = 10;

// Where the seal puts the record inside the cache (a file of the manifest
// like any other, so it is hashed, copied and inspected with the cache).
inline constexpr std::string_view kConvergenceRecordPath = "kernelcache/convergence.json";

enum class Novelty { kNew, kAutotune };
inline constexpr std::array<Novelty, 2> kNovelties = {Novelty::kNew, Novelty::kAutotune};
// "new" | "autotune"
std::string_view NoveltyName(Novelty n);
StatusOr<Novelty> ParseNovelty(std::string_view name);

struct AddedEntry {
  MissFramework framework = MissFramework::kOther;
  std::string key;
  std::string detail;
  Novelty novelty = Novelty::kNew;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const AddedEntry&, const AddedEntry&) = default;
};

// A run records at most this many entries by name (the counts cover all).
inline constexpr std::size_t kMaxRecordedEntries = 64;

struct RunRecord {
  std::int32_t index = 0;  // 0: the warmup; 1..: convergence passes
  std::int64_t duration_ms = 0;
  std::int32_t exit_code = 0;
  std::uint64_t files_added = 0;
  std::uint64_t bytes_added = 0;
  std::uint64_t entries_added = 0;
  std::uint64_t autotune_entries = 0;                 // of entries_added
  std::map<std::string, std::uint64_t> by_framework;  // MissFrameworkName -> entries
  std::vector<AddedEntry> entries;                    // at most kMaxRecordedEntries
  friend bool operator==(const RunRecord&, const RunRecord&) = default;
};

struct ConvergenceRecord {
  std::int32_t max_passes = kDefaultMaxPasses;
  bool converged = false;
  std::vector<RunRecord> runs;  // runs[i].index == i
  friend bool operator==(const ConvergenceRecord&, const ConvergenceRecord&) = default;
};

// Convergence passes run (runs after the warmup).
std::int32_t PassesRun(const ConvergenceRecord& r);

// The entries a run added, from what ClassifyMisses made of its files and
// the kernel identities (RuntimeMiss::kernel) of everything the tree held
// before the run. Counts and by_framework cover every entry; `entries`
// keeps the first kMaxRecordedEntries (new before autotune).
RunRecord RecordRun(std::int32_t index, const std::vector<RuntimeMiss>& added,
                    const std::set<std::string>& known_kernels);

// The novelty rule above, for one entry.
Novelty NoveltyOf(const RuntimeMiss& added, const std::set<std::string>& known_kernels);

// What the pass loop does next, given the runs so far.
enum class PassStep {
  kRunPass,       // run the command again
  kConverged,     // the last pass added nothing
  kNotConverged,  // max_passes passes ran and the last one still added entries
  kFailed,        // the last run exited non-zero
};
PassStep NextPassStep(const std::vector<RunRecord>& runs, std::int32_t max_passes);

std::string ConvergenceRecordToJson(const ConvergenceRecord& r);
// Strict about shape and bounded (at most kMaxMaxPasses + 1 runs, each at
// most kMaxRecordedEntries entries, details of at most 1 KiB): an
// InvalidArgument naming the field otherwise. Never throws.
StatusOr<ConvergenceRecord> ParseConvergenceRecord(std::string_view json);

// What the seal reports and the operator shows (status.fingerprints[].convergence).
struct ConvergenceSummary {
  std::int32_t passes = 0;  // convergence passes run
  bool converged = false;
  std::uint64_t last_entries = 0;   // entries the last pass added
  std::uint64_t last_autotune = 0;  // of them, autotune
  std::vector<std::string>
      still;  // up to kMaxSummaryEntries "<framework> <detail>" of the last pass
  friend bool operator==(const ConvergenceSummary&, const ConvergenceSummary&) = default;
};
inline constexpr std::size_t kMaxSummaryEntries = 5;
inline constexpr std::size_t kMaxSummaryEntryBytes = 160;

ConvergenceSummary Summarize(const ConvergenceRecord& r);

// "converged after 2 passes" | "not converged after 3 passes: the last pass
// still compiled 4 entries, all nondeterministic autotune (triton kernel k
// num_warps=8 ...; ...)" | "... 2 entries (1 nondeterministic autotune): ...".
std::string ConvergenceMessage(const ConvergenceSummary& s);

// OK, or FailedPrecondition "NotConverged: <ConvergenceMessage> (spec.warmup.
// convergence.onNotConverged is Fail)" when the record did not converge and
// the policy is Fail.
Status CheckConvergencePolicy(const ConvergenceRecord& r, NotConvergedPolicy policy);

}  // namespace kc::core
