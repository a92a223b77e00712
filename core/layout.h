// Layout: where a cache lives on the volume, and path-safety rules.
//
//   <root>/v1/<fingerprint>/manifest.json     files, sizes, sha256, inputs
//   <root>/v1/<fingerprint>/READY             written last: the manifest's sha256
//   <root>/v1/<fingerprint>/{triton,inductor,vllm,nv}/
//   <root>/v1/.staging/<fingerprint>-<uid>/   a warmup writes here; publish = rename
//   <root>/v1/.quarantine/<fingerprint>-<time>[-<why>]/   failed validation (REASON inside)
//   <root>/v1/.locks/<fingerprint>.lock       single-writer lock (JSON owner record)
//   <root>/v1/.inbox/<fingerprint>/<pod uid>/  what a gated pod compiled after its
//                                              gate, for a harvest (core/harvest.h)
//
// Layout only computes paths; it never touches the filesystem. The
// path-safety helpers decide whether a relative path taken from a manifest
// or a directory walk may be used under a cache root (no absolute paths, no
// "..", no empty or "." components, no NUL), and whether a symlink target
// stays inside the cache. Lexical: callers that need to rule out symlinks
// on disk walk with lstat (see initwarm's walker).
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::core {

inline constexpr std::string_view kLayoutVersionDir = "v1";
inline constexpr std::string_view kStagingDirName = ".staging";
inline constexpr std::string_view kQuarantineDirName = ".quarantine";
inline constexpr std::string_view kLocksDirName = ".locks";
inline constexpr std::string_view kInboxDirName = ".inbox";
inline constexpr std::string_view kReadyFileName = "READY";
inline constexpr std::string_view kManifestFileName = "manifest.json";
inline constexpr std::string_view kReasonFileName = "REASON";
inline constexpr std::string_view kDefaultRoot = "/var/cache/kernelcache";
inline constexpr std::string_view kDefaultView = "/var/run/kernelcache/view";
// In a warmup pod's run volume (beside the view): the static convergence
// runner prepare installs for the warmup container (kc-converge runs the
// warmup command inside the model image), and the record the seal reads.
inline constexpr std::string_view kDefaultRunner = "/var/run/kernelcache/bin/kc-converge";
inline constexpr std::string_view kDefaultConvergenceRecord =
    "/var/run/kernelcache/convergence.json";
// The framework directories every cache (and every view) has.
inline constexpr std::array<std::string_view, 4> kFrameworkDirs = {"triton", "inductor", "vllm",
                                                                   "nv"};

class Layout {
 public:
  explicit Layout(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path VersionDir() const { return root_ / kLayoutVersionDir; }
  std::filesystem::path Published(std::string_view fp) const { return VersionDir() / fp; }
  std::filesystem::path Ready(std::string_view fp) const { return Published(fp) / kReadyFileName; }
  std::filesystem::path Manifest(std::string_view fp) const {
    return Published(fp) / kManifestFileName;
  }
  std::filesystem::path StagingRoot() const { return VersionDir() / kStagingDirName; }
  std::filesystem::path Staging(std::string_view fp, std::string_view uid) const {
    return StagingRoot() / StagingName(fp, uid);
  }
  std::filesystem::path QuarantineRoot() const { return VersionDir() / kQuarantineDirName; }
  // <fp>-<UTC yyyymmddThhmmssZ>[-<tag>]
  std::filesystem::path Quarantine(std::string_view fp, std::string_view time_tag,
                                   std::string_view why = {}) const;
  std::filesystem::path LocksRoot() const { return VersionDir() / kLocksDirName; }
  std::filesystem::path Lock(std::string_view fp) const {
    return LocksRoot() / (std::string(fp) + ".lock");
  }

  std::filesystem::path InboxRoot() const { return VersionDir() / kInboxDirName; }
  std::filesystem::path Inbox(std::string_view fp) const { return InboxRoot() / fp; }
  std::filesystem::path InboxOf(std::string_view fp, std::string_view pod_uid) const {
    return InboxOfUnder(InboxRoot(), fp, pod_uid);
  }
  // A pod's inbox directory beneath an inbox root mounted on its own (the
  // miss watcher mounts only InboxSubPath() of the volume).
  static std::filesystem::path InboxOfUnder(const std::filesystem::path& inbox_root,
                                            std::string_view fp, std::string_view pod_uid) {
    return inbox_root / fp / pod_uid;
  }
  // "v1/.inbox": the inbox root relative to the volume root (a subPath).
  static std::string InboxSubPath() {
    return std::string(kLayoutVersionDir) + "/" + std::string(kInboxDirName);
  }

  static std::string StagingName(std::string_view fp, std::string_view uid) {
    return std::string(fp) + "-" + std::string(uid);
  }

 private:
  std::filesystem::path root_;
};

// A staging or quarantine directory name split into fingerprint and suffix
// ("3f9a1c2b7d4e5f60-abc" -> {"3f9a1c2b7d4e5f60", "abc"}). NotFound-free:
// InvalidArgument when the name does not start with "<16 hex>-".
struct SplitName {
  std::string fingerprint;
  std::string suffix;
};
StatusOr<SplitName> SplitFingerprintName(std::string_view name);

// A job or pod uid usable in a directory name: 1..128 characters of
// [A-Za-z0-9._-], not "." or "..".
bool IsSafeUid(std::string_view uid);

// A relative path from a manifest or a walk: non-empty, relative, components
// separated by single '/', none empty, ".", or "..", no NUL or backslash, at
// most 4096 bytes. The error names the path and the rule it breaks.
Status CheckRelativePath(std::string_view rel);

// True when `path` equals `dir` or lies below it, compared lexically on
// normalised absolute paths.
bool IsWithin(const std::filesystem::path& dir, const std::filesystem::path& path);

// A symlink at `link_rel` (relative to a cache root) with target `target`:
// OK when the target, resolved lexically from the link's directory, stays
// inside the cache root. Absolute targets are refused unless they lie under
// `view_prefix` (the fixed cache view, which maps onto the cache root), in
// which case they are checked against it.
Status CheckSymlinkTarget(std::string_view link_rel, std::string_view target,
                          std::string_view view_prefix = kDefaultView);

// UTC time tag used in quarantine names: "20261202T093216Z".
std::string TimeTag(std::int64_t unix_seconds);

}  // namespace kc::core
