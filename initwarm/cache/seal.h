// Seal: turn a warmup's staging directory into a published cache.
//
// Protocol (docs/cache-layout.md has the full argument):
//   1. take or adopt the fingerprint lock for `owner` (Conflict when another
//      live writer holds it);
//   2. refuse when v1/<fp> is already READY, unless `replace` (AlreadyExists);
//   3. walk staging (opened beneath --root; no symlinks out, no special
//      files, no hard-linked files, names UTF-8), refuse an empty
//      cache unless `allow_empty` (FailedPrecondition);
//   4. hash every file on all cores, fsync every file and then every
//      directory on an FsyncPool (initwarm/fs/fsync_pool.h), all done before step 5;
//   5. write manifest.json durably (temp + fsync + rename);
//   6. move an existing v1/<fp> aside into .quarantine/ (READY one: "-replaced",
//      leftover without READY: "-incomplete"), rename staging -> v1/<fp>,
//      fsync v1/ and .staging/;
//   7. write READY (the manifest's sha256) durably, fsync v1/<fp>;
//   8. release the lock.
// A reader that trusts only READY sees the old cache, nothing, or the new
// complete cache, whatever step a crash interrupts. ENOSPC anywhere is
// ResourceExhausted with nothing new published (a staging directory already
// renamed is renamed back so the warmup can be retried or collected, and a
// READY cache moved aside by step 6 is renamed back: READY again).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/convergence.h"
#include "core/fingerprint.h"
#include "core/seal_report.h"
#include "initwarm/cache/staged_check.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

struct SealOptions {
  std::filesystem::path root;
  std::string fingerprint;        // may be empty when node+runtime are given
  std::string owner;              // job uid: names the staging dir and owns the lock
  std::filesystem::path staging;  // default: layout staging for fingerprint+owner
  std::optional<core::NodeFacts> node;
  std::optional<core::RuntimeFacts> runtime;
  bool allow_empty = false;
  bool replace = false;
  int threads = 0;
  std::int64_t lock_stale_after_s = 2 * 3600;
  // What `initwarm converge` recorded: sealed into the cache at
  // core::kConvergenceRecordPath (replacing any file the warmup wrote
  // there) and summarised in the result.
  std::optional<core::ConvergenceRecord> convergence;
  // Set by a caller that built staging from verified bytes (a harvest):
  // what seal hashes must be exactly this, or nothing is published
  // (initwarm/cache/staged_check.h).
  std::optional<ExpectedTree> expected;
};

struct SealResult {
  std::string fingerprint;
  std::string manifest_digest;
  core::SealOutcome outcome = core::SealOutcome::kPublished;  // Published or Replaced
  std::string directory;
  std::string replaced_to;  // where the previous cache went, when replaced
  std::string warning;      // published, but something minor went wrong
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  std::int64_t walk_ms = 0;
  std::int64_t hash_ms = 0;
  std::int64_t publish_ms = 0;
  std::int64_t total_ms = 0;
  std::optional<core::ConvergenceSummary> convergence;
};

// The fingerprint id Seal publishes under: --fingerprint, or computed from
// the node and runtime facts. InvalidArgument naming the option when the
// options are inconsistent (facts without each other, an id that is not 16
// hex digits or not the facts', an unsafe --job-uid). Seal checks the same
// first, so any other InvalidArgument from Seal is a refusal of the staging
// tree (a symlink leaving the cache, a special file, a name a cache may not
// hold): exit core::kExitRefused, not core::kExitUsage.
StatusOr<std::string> SealFingerprint(const SealOptions& opts);

StatusOr<SealResult> Seal(const SealOptions& opts);

// {"fingerprint","manifestDigest","bytes","files","durations":{walkMs,hashMs,
// publishMs,totalMs},"outcome", ...} on one line (codec: core/seal_report.h).
std::string SealResultJson(const SealResult& r);
// {"fingerprint","outcome":"Failed","reason":<code>,"message":<text>}.
std::string SealFailureJson(const std::string& fingerprint, const Status& s);

// Framework versions readable from the cache itself: "triton" from the
// "triton_version" field of Triton's kernel metadata JSON. Reads at most a
// few small files.
std::map<std::string, std::string> DetectFrameworks(const SafeDir& dir,
                                                    const std::vector<std::string>& files);

}  // namespace kc::initwarm
