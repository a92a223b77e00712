// Validate: the validation ladder a cache passes before a model pod may use it.
//
//   1 Manifest     READY present, its digest equals sha256(manifest.json),
//                  the manifest parses (strict) and its schema is known;
//                  every listed file is a regular file of its listed size
//                  and every listed symlink a symlink with its listed target
//                  (what a reader may open is what the manifest says); no
//                  special file, hard-linked file or symlink leaving the
//                  cache anywhere in the directory
//   2 Fingerprint  the manifest's fingerprint equals the pod's own (and, when
//                  the node's facts are known, its node inputs equal them)
//   3 Checksums    every file's size and sha256 match; nothing on disk that the
//                  manifest does not list (staging leftovers); symlinks as
//                  listed; every Triton __grp__*.json child path resolves to a
//                  listed file of this cache through the fixed view path
//   4 TargetArch   every Triton kernel metadata JSON's target.arch equals the
//                  node's compute capability ("9.0" -> 90)
//   5 LoadTest     every *.cubin loads on this GPU (cuModuleLoadData)
//
// This header holds the pure checks, each returning the first bad file and
// why; initwarm's verify driver does the I/O and walks the levels in order.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"

namespace kc::core {

enum class Level {
  kManifest = 1,
  kFingerprint = 2,
  kChecksums = 3,
  kTargetArch = 4,
  kLoadTest = 5
};

std::string_view LevelName(Level l);
// "Manifest", "Fingerprint", "Checksums", "TargetArch", "LoadTest" (case-insensitive;
// InvalidArgument "\"All\" is not one of Manifest, ..." otherwise, the caller
// naming the field or flag).
StatusOr<Level> ParseLevel(std::string_view name);

// The first failure found: the level, the file (relative to the cache
// directory; empty when not about one file) and a sentence why.
struct Finding {
  Level level = Level::kManifest;
  std::string file;
  std::string reason;
  std::string ToString() const;  // "checksums: triton/a/k.cubin: sha256 mismatch (...)"
};

// Level 1, first: READY's content (trailing whitespace ignored) against the
// manifest digest the operator recorded when the cache was sealed, before
// manifest.json is read or parsed, so a rewritten cache is refused for the
// cost of reading 64 bytes. `expected` empty: no check.
std::optional<Finding> CheckExpectedDigest(std::string_view ready, std::string_view expected);

// Level 1: READY's content (trailing whitespace ignored) against the
// manifest bytes, then a strict parse.
StatusOr<Manifest> CheckReadyAndManifest(std::string_view ready, std::string_view manifest_bytes,
                                         Finding* finding);

// Level 2. `expected_id` empty skips the id comparison; `node` null skips
// the node-input comparison.
std::optional<Finding> CheckFingerprint(const Manifest& m, std::string_view expected_id,
                                        const NodeFacts* node);

// What is on disk for one path under the cache directory.
struct ObservedEntry {
  std::string path;
  bool is_link = false;
  std::uint64_t size = 0;
  std::string sha256;       // empty when not hashed
  std::string link_target;  // for links
};

// Level 3, files: compares the manifest with what is on disk (observed
// sorted by path, reserved top-level names excluded). Missing file, size
// mismatch (truncated), sha256 mismatch (changed bytes), unlisted file
// (staging leftover), link mismatch.
std::optional<Finding> CompareWithDisk(const Manifest& m,
                                       const std::vector<ObservedEntry>& observed);

// Level 1, entries: the manifest's files and links against what is on disk,
// type and size only (observed sorted by path; unlisted entries are level
// 3's). A Finding at level Manifest.
std::optional<Finding> CheckListedOnDisk(const Manifest& m,
                                         const std::vector<ObservedEntry>& observed);

// Level 3, Triton groups: `text` is the __grp__ JSON at `rel`; each child path
// must be an absolute path under `view_prefix` whose remainder is a file the
// manifest lists (`listed`).
std::optional<Finding> CheckTritonGroup(std::string_view rel, std::string_view text,
                                        std::string_view view_prefix,
                                        const std::set<std::string, std::less<>>& listed);

// True for Triton's per-kernel files this ladder reads: triton/**/__grp__*.json
// (group) and other triton/**/*.json (metadata).
bool IsTritonGroupFile(std::string_view rel);
bool IsTritonMetadataFile(std::string_view rel);

// "9.0" -> 90, "10.0" -> 100, "12.1" -> 121; InvalidArgument otherwise.
StatusOr<int> ArchFromComputeCapability(std::string_view cc);

// Level 4: a Triton metadata JSON at `rel`; files without a CUDA "target"
// (autotune results, other backends) pass.
std::optional<Finding> CheckTritonTargetArch(std::string_view rel, std::string_view text,
                                             int want_arch);

}  // namespace kc::core
