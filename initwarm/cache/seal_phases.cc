#include "initwarm/cache/seal_phases.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>

#include "core/manifest.h"
#include "initwarm/cache/lock.h"
#include "initwarm/failpoint/failpoint.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/fsync_pool.h"
#include "initwarm/fs/hasher.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

namespace {

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

StatusOr<SealPaths> PlanSeal(const SealOptions& o, SealResult* r) {
  KC_ASSIGN_OR_RETURN(r->fingerprint, SealFingerprint(o));
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
  r->outcome = core::SealOutcome::kReplaced;
  r->replaced_to = aside.string();
  return aside;
}

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

StatusOr<bool> ReplaceByExchange(const SealPaths& p, SealResult* r) {
  const std::string& fp = r->fingerprint;
  // The new generation moves to the name the previous one will have: a
  // crash from here on leaves v1/<fp> READY (old or new), and only the
  // quarantine holds the other one.
  KC_RETURN_IF_ERROR(MkdirAll(p.layout.QuarantineRoot()));
  const fs::path aside = UniqueQuarantine(p.layout, fp, "replaced");
  KC_RETURN_IF_ERROR(Rename(p.staging, aside));
  const fs::path ready = aside / core::kReadyFileName;
  auto undo = [&] {
    ::unlink(ready.c_str());
    (void)Rename(aside, p.staging);
  };
  MaybeCrash(CrashPhase::kPublish, 1);
  // READY inside it before anyone can see it.
  fs::path ready_tmp = ready;
  ready_tmp += ".tmp." + std::to_string(::getpid());
  Status s = WriteNewFile(ready_tmp, r->manifest_digest + "\n");
  if (s.ok()) s = Rename(ready_tmp, ready);
  if (s.ok()) s = FsyncPath(aside);
  if (!s.ok()) {
    ::unlink(ready_tmp.c_str());
    undo();
    return Status(s.code(), s.message() + "; the previous cache is still READY");
  }
  MaybeCrash(CrashPhase::kPublish, 2);
  if (::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, p.published.c_str(), RENAME_EXCHANGE) != 0) {
    const int err = errno;
    undo();
    if (err == EINVAL || err == ENOSYS || err == EOPNOTSUPP) return false;  // fall back
    return ErrnoStatus(err, "exchange " + aside.string() + " with " + p.published.string());
  }
  MaybeCrash(CrashPhase::kPublish, 3);
  Status synced = FsyncPath(p.layout.VersionDir());
  if (synced.ok()) synced = FsyncPath(p.layout.QuarantineRoot());
  if (synced.ok()) synced = FsyncPath(p.staging.parent_path());
  if (!synced.ok()) r->warning = "published, but not fsynced: " + synced.message();
  r->outcome = core::SealOutcome::kReplaced;
  r->replaced_to = aside.string();
  return true;
}

Status Publish(const SealOptions& o, const SealPaths& p, SealResult* r) {
  MaybeCrash(CrashPhase::kPublish, 0);
  r->outcome = core::SealOutcome::kPublished;
  if (o.replace && Exists(p.layout.Ready(r->fingerprint))) {
    KC_ASSIGN_OR_RETURN(bool exchanged, ReplaceByExchange(p, r));
    if (exchanged) return OkStatus();
  }
  KC_ASSIGN_OR_RETURN(fs::path previous, MoveAside(o, p, r));
  MaybeCrash(CrashPhase::kPublish, 1);
  Status s = PublishStaging(p, *r);
  if (s.ok() || previous.empty() || Exists(p.published) || !Rename(previous, p.published).ok()) {
    return s;
  }
  (void)FsyncPath(p.layout.VersionDir());
  return Status(s.code(), s.message() + "; the previous cache is READY again");
}

}  // namespace kc::initwarm
