// Test helpers for initwarm's filesystem tests: scratch directories, file
// writers, a small realistic Triton cache, and running the initwarm binary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/fingerprint.h"
#include "initwarm/cache/seal.h"

namespace kc::initwarm::testing {

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small tmpfs mounted at `path` for the full-volume cases (needs root or
// CAP_SYS_ADMIN: `mounted` says whether it worked), unmounted at the end.
class SmallVolume {
 public:
  SmallVolume(std::filesystem::path path, const char* options);
  ~SmallVolume();
  SmallVolume(const SmallVolume&) = delete;
  SmallVolume& operator=(const SmallVolume&) = delete;
  bool mounted() const { return mounted_; }

 private:
  std::filesystem::path path_;
  bool mounted_ = false;
};

void WriteFile(const std::filesystem::path& p, const std::string& content);
std::string ReadFile(const std::filesystem::path& p);
// Deterministic pseudo-random bytes.
std::string Bytes(std::uint64_t n, std::uint32_t seed);

core::NodeFacts H200Facts();
core::RuntimeFacts TestRuntime();
// Seal options of `owner` under `root` with H200Facts and TestRuntime (the
// fingerprint is computed from them).
SealOptions H200SealOptions(const std::filesystem::path& root, const std::string& owner);

// Writes a Triton-like cache under `dir` (the fingerprint or staging dir):
// `kernels` kernel directories triton/<hash>/ each with <name>.json
// (target.arch = `arch`, triton_version 3.6.0), <name>.cubin, <name>.ptx and
// a __grp__<name>.json whose child paths point under `view`/triton/...; plus
// one inductor file. Returns the relative paths written.
std::vector<std::string> WriteTritonCache(const std::filesystem::path& dir, int kernels,
                                          int arch = 90,
                                          const std::string& view = "/var/run/kernelcache/view");

// Prepares, fills (by `fill`, in the staging directory) and seals a cache
// of fingerprint `fp` under `root` as `owner`, with H200Facts and
// TestRuntime; returns the manifest digest.
StatusOr<std::string> SealTestCache(const std::filesystem::path& root, const std::string& fp,
                                    const std::string& owner,
                                    const std::function<void(const std::filesystem::path&)>& fill,
                                    bool replace = false);

// Prepares the staging directory of the fingerprint of (H200Facts,
// TestRuntime) under `root` as `owner`, lets `fill` write into it, and
// seals it. Returns the published directory.
StatusOr<std::filesystem::path> PublishH200Cache(
    const std::filesystem::path& root,
    const std::function<void(const std::filesystem::path&)>& fill,
    const std::string& owner = "job-1");

// Runs `argv` (argv[0] is a path), with extra environment "K=V" entries;
// captures stdout+stderr into *output. Returns the exit code, or 128+signal.
// `peak_kib`, when set: the child's peak resident memory (ru_maxrss, KiB).
int RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               std::string* output, long* peak_kib = nullptr);

}  // namespace kc::initwarm::testing
