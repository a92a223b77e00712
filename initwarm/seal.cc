#include "initwarm/seal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/layout.h"
#include "core/manifest.h"
#include "core/seal_report.h"
#include "core/security_context.h"
#include "initwarm/failpoint.h"
#include "initwarm/fsutil.h"
#include "initwarm/fsync_pool.h"
#include "initwarm/hasher.h"
#include "initwarm/lock.h"
#include "initwarm/safe_file.h"
#include "initwarm/walk.h"

namespace kc::initwarm {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::map<std::string, std::string> DetectFrameworks(const SafeDir& dir,
                                                    const std::vector<std::string>& files) {
  std::map<std::string, std::string> out;
  int read = 0;
  for (const auto& f : files) {
    if (read >= 16) break;
    if (!f.starts_with("triton/") || !f.ends_with(".json")) continue;
    if (fs::path(f).filename().string().starts_with("__grp__")) continue;
    ++read;
    auto text = dir.ReadFile(f, 1 << 20, true);
    if (!text.ok()) continue;
    json j = json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("triton_version") && j["triton_version"].is_string()) {
      out["triton"] = j["triton_version"].get<std::string>();
      break;
    }
  }
  return out;
}

namespace {

// What is published: directories core::kCacheDirMode (the cache group may
// remove and quarantine them, whatever its uid), files core::kSealedFileMode
// (read-only but for their owner). Returns "" or a warning naming what this
// uid could not change (owned by another uid); the manifest's digests guard
// the content either way.
std::string NormaliseModes(const fs::path& staging, const WalkResult& walk) {
  std::vector<std::string> failed;
  auto set = [&](const fs::path& p, unsigned mode, const std::string& name) {
    if (::chmod(p.c_str(), mode) != 0 && failed.size() < 3) {
      failed.push_back(name + " (" + std::strerror(errno) + ")");
    }
  };
  set(staging, core::kCacheDirMode, ".");
  for (const auto& d : walk.dirs) set(staging / d, core::kCacheDirMode, d);
  for (const auto& f : walk.files) set(staging / f.path, core::kSealedFileMode, f.path);
  if (failed.empty()) return "";
  std::string out = "published, but could not set the modes of";
  for (const auto& f : failed) out += " " + f;
  return out + " (written by another uid? see docs/permissions.md)";
}

Status Prepared(const SealOptions& o, std::string* fp) {
  if (o.node.has_value() != o.runtime.has_value()) {
    return InvalidArgumentError("--node-facts and --runtime-facts must be given together");
  }
  *fp = o.fingerprint;
  if (o.node) {
    std::string computed = core::ComputeFingerprint(*o.node, *o.runtime).id;
    if (!fp->empty() && *fp != computed) {
      return InvalidArgumentError("--fingerprint " + *fp +
                                  " does not match the node and runtime "
                                  "facts given (they give " +
                                  computed + ")");
    }
    *fp = computed;
  }
  if (!core::IsFingerprintId(*fp)) {
    return InvalidArgumentError("--fingerprint \"" + *fp +
                                "\" is not a fingerprint id (16 lower-case hex digits)");
  }
  if (!core::IsSafeUid(o.owner)) {
    return InvalidArgumentError("--job-uid \"" + o.owner +
                                "\" is missing or unsafe (want 1-128 of [A-Za-z0-9._-])");
  }
  return OkStatus();
}

// Every directory's entries, on an FsyncPool (one at a time they cost
// seconds for thousands of directories), the staging root last.
Status SyncDirs(const fs::path& staging, const std::vector<std::string>& dirs, int threads) {
  FsyncPool pool(threads, 256, [](std::uint64_t n) { MaybeCrash(CrashPhase::kDirsync, n); });
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    const fs::path dir = staging / *it;
    int fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0) {
      Status s = ErrnoStatus(errno, "open " + dir.string() + " for fsync");
      (void)pool.Finish();
      return s;
    }
    pool.Add(fd, dir.string());
  }
  KC_RETURN_IF_ERROR(pool.Finish());
  return FsyncPath(staging);
}

fs::path UniqueQuarantine(const core::Layout& l, const std::string& fp, const std::string& why) {
  fs::path p = l.Quarantine(fp, core::TimeTag(NowSeconds()), why);
  if (!Exists(p)) return p;
  return l.Quarantine(fp, core::TimeTag(NowSeconds()), why + "-" + RandomHex());
}

}  // namespace

namespace {
StatusOr<SealResult> SealImpl(const SealOptions& o, fs::path* locked);
}  // namespace

StatusOr<std::string> SealFingerprint(const SealOptions& o) {
  std::string fp;
  KC_RETURN_IF_ERROR(Prepared(o, &fp));
  return fp;
}

StatusOr<SealResult> Seal(const SealOptions& o) {
  fs::path locked;
  auto r = SealImpl(o, &locked);
  if (!r.ok() && !locked.empty()) {
    // Leave staging for a retry or GC, but let the next writer in.
    (void)ReleaseLock(locked, o.owner);
  }
  return r;
}

namespace {

// Where one seal reads and writes.
struct SealPaths {
  core::Layout layout;
  fs::path staging;
  fs::path published;
  fs::path lock;
};

// Phase 1: the fingerprint, the paths, and the staging directory there.
StatusOr<SealPaths> PlanSeal(const SealOptions& o, SealResult* r) {
  KC_RETURN_IF_ERROR(Prepared(o, &r->fingerprint));
  const std::string& fp = r->fingerprint;
  core::Layout layout(o.root);
  SealPaths p{layout, o.staging.empty() ? layout.Staging(fp, o.owner) : o.staging,
              layout.Published(fp), layout.Lock(fp)};
  r->directory = p.published.string();
  if (!IsRealDirectory(p.staging)) {
    return NotFoundError("staging directory " + p.staging.string() +
                         " does not exist (or is not a directory); run `initwarm prepare` with "
                         "the same --fingerprint and --job-uid first");
  }
  return p;
}

// Phase 2: the fingerprint lock, and the refusal of a READY cache unless
// replacing.
Status LockSeal(const SealOptions& o, const SealPaths& p, const std::string& fp, fs::path* locked) {
  LockOptions lo;
  lo.stale_after_s = o.lock_stale_after_s;
  KC_RETURN_IF_ERROR(AcquireLock(p.lock, SelfLockRecord(o.owner, p.staging.string()), lo));
  *locked = p.lock;
  if (Exists(p.layout.Ready(fp)) && !o.replace) {
    return AlreadyExistsError("fingerprint " + fp + " is already published and READY at " +
                              p.published.string() +
                              "; this seal did not replace it (pass --replace to replace it)");
  }
  return OkStatus();
}

// Phase 3: the walk. The staging tree was written by the warmup and sits on
// the shared volume: read as hostile (initwarm/safe_file.h).
StatusOr<WalkResult> WalkStaging(const SealOptions& o, const SafeDir& staged,
                                 const fs::path& staging) {
  KC_ASSIGN_OR_RETURN(WalkResult walk, WalkCache(staged));
  if (walk.files.empty() && walk.links.empty() && !o.allow_empty) {
    return FailedPreconditionError("staging directory " + staging.string() +
                                   " holds no files: the warmup compiled nothing (is "
                                   "TRITON_CACHE_DIR set to the view?); pass --allow-empty to "
                                   "publish an empty cache anyway");
  }
  return walk;
}

// Phase 4: hash and fsync every file, then fsync the directories. The
// files' sha256 in walk order.
StatusOr<std::vector<std::string>> HashStaging(const SealOptions& o, const SafeDir& staged,
                                               const fs::path& staging, const WalkResult& walk) {
  std::vector<HashJob> jobs;
  jobs.reserve(walk.files.size());
  for (const auto& f : walk.files) jobs.push_back({f.path, f.size});
  HashOptions ho;
  ho.dir = &staged;
  ho.threads = o.threads;
  ho.fsync = true;
  ho.on_progress = [](std::uint64_t files, std::uint64_t bytes) {
    MaybeCrash(CrashPhase::kHash, files);
    MaybeCrash(CrashPhase::kBytes, bytes);
  };
  ho.on_fsynced = [](std::uint64_t files) { MaybeCrash(CrashPhase::kFsync, files); };
  KC_ASSIGN_OR_RETURN(std::vector<std::string> sums, HashFiles(jobs, ho));
  KC_RETURN_IF_ERROR(SyncDirs(staging, walk.dirs, ho.fsync_threads));
  return sums;
}

// Phase 5: manifest.json, written durably into staging; its digest, file
// count and bytes go to `r`.
Status WriteSealManifest(const SealOptions& o, const SafeDir& staged, const fs::path& staging,
                         const WalkResult& walk, const std::vector<std::string>& sums,
                         SealResult* r) {
  core::Manifest m;
  m.fingerprint_id = r->fingerprint;
  if (o.node) {
    m.node = o.node;
    m.runtime = o.runtime;
    m.fingerprint_sha256 = core::ComputeFingerprint(*o.node, *o.runtime).sha256;
  }
  std::vector<std::string> paths;
  paths.reserve(walk.files.size());
  for (size_t i = 0; i < walk.files.size(); ++i) {
    m.files.push_back({walk.files[i].path, walk.files[i].size, sums[i]});
    paths.push_back(walk.files[i].path);
  }
  m.links = walk.links;
  m.frameworks = DetectFrameworks(staged, paths);
  m.created_at = core::Rfc3339(NowSeconds());
  m.producer_owner = o.owner;
  m.producer_host = Hostname();
  core::FinalizeManifest(&m);
  KC_RETURN_IF_ERROR(core::CheckManifest(m));
  const std::string text = core::ManifestToJson(m);
  r->manifest_digest = core::Sha256Hex(text);
  r->files = m.total_files;
  r->bytes = m.total_bytes;
  MaybeCrash(CrashPhase::kManifest, 0);
  KC_RETURN_IF_ERROR(WriteFileDurable(staging / core::kManifestFileName, text));
  MaybeCrash(CrashPhase::kManifest, 1);
  return OkStatus();
}

// Phase 6: an existing v1/<fp> moved aside into the quarantine. Returns
// where the READY cache this seal replaces went ("" when none).
StatusOr<fs::path> MoveAside(const SealOptions& o, const SealPaths& p, SealResult* r) {
  const std::string& fp = r->fingerprint;
  if (!Exists(p.published)) return fs::path();
  bool ready = Exists(p.layout.Ready(fp));
  if (ready && !o.replace) {
    return AlreadyExistsError("fingerprint " + fp + " was published by someone else at " +
                              p.published.string() + " while this seal ran");
  }
  KC_RETURN_IF_ERROR(MkdirAll(p.layout.QuarantineRoot()));
  fs::path aside = UniqueQuarantine(p.layout, fp, ready ? "replaced" : "incomplete");
  KC_RETURN_IF_ERROR(Rename(p.published, aside));
  if (!ready) return fs::path();
  r->outcome = "Replaced";
  r->replaced_to = aside.string();
  return aside;
}

// Phase 7: staging renamed to v1/<fp>, then READY written durably. On
// failure nothing is READY: the directory goes back to staging.
Status PublishStaging(const SealPaths& p, const SealResult& r) {
  const std::string& fp = r.fingerprint;
  KC_RETURN_IF_ERROR(Rename(p.staging, p.published));
  Status ready = FsyncPath(p.layout.VersionDir());
  if (ready.ok()) ready = FsyncPath(p.staging.parent_path());
  fs::path ready_tmp = p.layout.Ready(fp);
  ready_tmp += ".tmp." + std::to_string(::getpid());
  if (ready.ok()) {
    MaybeCrash(CrashPhase::kPublish, 2);
    ready = WriteNewFile(ready_tmp, r.manifest_digest + "\n");
  }
  if (ready.ok()) {
    MaybeCrash(CrashPhase::kPublish, 3);
    ready = Rename(ready_tmp, p.layout.Ready(fp));
  }
  if (ready.ok()) ready = FsyncPath(p.published);
  if (!ready.ok()) {
    ::unlink(ready_tmp.c_str());
    ::unlink(p.layout.Ready(fp).c_str());
    // Un-publish: nothing READY; put the directory back for a retry or GC.
    if (Rename(p.published, p.staging).ok()) {
      (void)FsyncPath(p.layout.VersionDir());
    }
  }
  return ready;
}

// Phases 6 and 7. A publish that fails after the move aside (a full volume:
// READY cannot be written) puts the previous READY cache back: a failed
// replacement must not cost the good cache it was replacing. (A crash here
// still leaves it in the quarantine: READY shows nothing then, never a half
// cache.)
Status Publish(const SealOptions& o, const SealPaths& p, SealResult* r) {
  MaybeCrash(CrashPhase::kPublish, 0);
  r->outcome = "Published";
  KC_ASSIGN_OR_RETURN(fs::path previous, MoveAside(o, p, r));
  MaybeCrash(CrashPhase::kPublish, 1);
  Status s = PublishStaging(p, *r);
  if (s.ok() || previous.empty() || Exists(p.published) || !Rename(previous, p.published).ok()) {
    return s;
  }
  (void)FsyncPath(p.layout.VersionDir());
  return Status(s.code(), s.message() + "; the previous cache is READY again");
}

StatusOr<SealResult> SealImpl(const SealOptions& o, fs::path* locked) {
  const std::int64_t t0 = NowMillis();
  SealResult r;
  KC_ASSIGN_OR_RETURN(SealPaths p, PlanSeal(o, &r));
  KC_RETURN_IF_ERROR(LockSeal(o, p, r.fingerprint, locked));
  KC_ASSIGN_OR_RETURN(SafeDir staged, SafeDir::OpenUnder(o.root, p.staging));
  KC_ASSIGN_OR_RETURN(WalkResult walk, WalkStaging(o, staged, p.staging));
  const std::int64_t t_walk = NowMillis();
  r.walk_ms = t_walk - t0;

  KC_ASSIGN_OR_RETURN(std::vector<std::string> sums, HashStaging(o, staged, p.staging, walk));
  const std::string not_normalised = NormaliseModes(p.staging, walk);
  const std::int64_t t_hash = NowMillis();
  r.hash_ms = t_hash - t_walk;

  KC_RETURN_IF_ERROR(WriteSealManifest(o, staged, p.staging, walk, sums, &r));
  KC_RETURN_IF_ERROR(Publish(o, p, &r));
  MaybeCrash(CrashPhase::kPublish, 4);
  const std::int64_t t_pub = NowMillis();
  r.publish_ms = t_pub - t_hash;
  MaybeCrash(CrashPhase::kPublish, 5);
  if (!not_normalised.empty()) r.warning = not_normalised;
  if (Status rel = ReleaseLock(p.lock, o.owner); !rel.ok()) {
    r.warning = "published, but the lock was not released: " + rel.message();
  }
  locked->clear();
  MaybeCrash(CrashPhase::kPublish, 6);
  r.total_ms = NowMillis() - t0;
  return r;
}

}  // namespace

std::string SealResultJson(const SealResult& r) {
  core::SealReport report;
  report.fingerprint = r.fingerprint;
  report.outcome = r.outcome;
  report.manifest_digest = r.manifest_digest;
  report.bytes = static_cast<std::int64_t>(r.bytes);
  report.files = static_cast<std::int64_t>(r.files);
  report.directory = r.directory;
  report.replaced_to = r.replaced_to;
  report.warning = r.warning;
  report.durations_ms = {{"walk", static_cast<double>(r.walk_ms)},
                         {"hash", static_cast<double>(r.hash_ms)},
                         {"publish", static_cast<double>(r.publish_ms)},
                         {"total", static_cast<double>(r.total_ms)}};
  return core::SealReportToJson(report);
}

std::string SealFailureJson(const std::string& fingerprint, const Status& s) {
  core::SealReport report;
  report.fingerprint = fingerprint;
  report.outcome = "Failed";
  report.reason = std::string(StatusCodeName(s.code()));
  report.message = s.message();
  return core::SealReportToJson(report);
}

}  // namespace kc::initwarm
