// Verify: run the validation ladder (core/validate.h) on a cache directory.
//
// VerifyCache treats every byte of the cache as hostile: with an expected
// digest it compares READY with it before anything else is read; it opens the
// directory beneath `anchor` and every file in it with initwarm/fs/safe_file.h
// (no symlink followed, only regular files opened, reads bounded: READY
// 4 KiB, manifest.json 64 MiB, a listed file its listed size). Level 1
// reads READY and the manifest and walks the directory (a special file
// anywhere, a symlink leaving the cache, a hard-linked file: refused) and
// compares each listed entry's type and size with disk
// (core::CheckListedOnDisk); level 3 hashes the listed files on all cores and
// reads the Triton group and metadata files, stopping at the first Finding. Levels
// above `level` are not run. TargetArch needs the node's compute capability
// (from `compute_capability`, else `node`, else the manifest's own node
// facts, noted). LoadTest runs `load_cubin` on every *.cubin and is skipped,
// noted, when it is empty (no GPU visible), then `check_packages` on the
// AOTInductor packages (the same for `initwarm verify` and the gate).
//
// Quarantine moves a cache directory to v1/.quarantine/<fp>-<time>/ and
// writes REASON there (the finding, one line, then its JSON).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/layout.h"
#include "core/validate.h"

namespace kc::initwarm {

using CubinLoadFn = std::function<Status(std::string_view image, std::string_view name)>;
// LoadTest's package rung: checks the AOTInductor packages (*.pt2) the
// manifest of `dir` lists; the first that fails, or nullopt; skipped checks
// go to `notes`. AotiPackageCheck() is the real one (initwarm/aoti).
using PackageCheckFn = std::function<std::optional<core::Finding>(
    const std::filesystem::path& dir, const core::Manifest& m, std::vector<std::string>* notes)>;
PackageCheckFn AotiPackageCheck();

inline constexpr std::uint64_t kMaxReadyBytes = 4096;
inline constexpr std::uint64_t kMaxManifestBytes = core::kMaxManifestBytes;

struct VerifyOptions {
  std::filesystem::path dir;
  // A trusted directory `dir` lies beneath (the volume's --root): the path
  // from it to `dir` is resolved without following symlinks. Empty: `dir`
  // itself is trusted (an admin's --dir, a local copy).
  std::filesystem::path anchor;
  core::Level level = core::Level::kTargetArch;
  std::string expected_fingerprint;
  // The manifest digest the operator recorded at seal time: READY must name
  // it, checked before manifest.json is read (empty: not known).
  std::string expected_digest;
  std::optional<core::NodeFacts> node;
  std::string compute_capability;
  std::string view_prefix = std::string(core::kDefaultView);
  int threads = 0;
  CubinLoadFn load_cubin;
  PackageCheckFn check_packages;  // LoadTest, after the cubins; empty: none
};

struct VerifyReport {
  bool ok = false;
  core::Finding finding;  // when !ok
  int passed = 0;         // highest level passed (0: none)
  core::Manifest manifest;
  std::string manifest_digest;
  std::vector<std::string> notes;  // skipped checks and why
  std::uint64_t kernels = 0;       // Triton metadata files checked
  std::uint64_t cubins_loaded = 0;
};

VerifyReport VerifyCache(const VerifyOptions& opts);

// JSON object for --json output and termination messages.
std::string VerifyReportJson(const VerifyReport& r);

// Moves `dir` into the quarantine of `layout` and writes REASON. Returns the
// new path.
StatusOr<std::filesystem::path> Quarantine(const core::Layout& layout, const std::string& fp,
                                           const std::filesystem::path& dir,
                                           const core::Finding& why);

}  // namespace kc::initwarm
