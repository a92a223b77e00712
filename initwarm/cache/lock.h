// Single-writer lock for one fingerprint: <root>/v1/.locks/<fp>.lock.
//
// The lock belongs to an owner id, the warmup Job's uid, not to a process:
// `prepare` takes it in an init container and `seal` in the main container
// of the same pod, with different pids and pid namespaces. The file is a
// JSON record {owner, host, bootId, pid, started, staging}.
//
// Acquire: write the record to a private temp file, fsync, and link(2) it to
// the lock name. link is atomic and fails with EEXIST when a lock exists
// (also on NFS, where O_EXCL historically was not), so of two writers
// exactly one wins. When a lock exists, JudgeLock (pure) decides:
//   - owner equals ours                           -> mine (adopted, no write)
//   - owner is one the caller was told is dead (the operator saw its Job
//     finish or disappear: `prepare --break-lock-of`) -> stale
//   - same host and boot, the holder pid (when not 0) is gone -> stale
//   - same host, different boot id (rebooted)      -> stale
//   - lock older than stale_after (mtime)          -> stale
//   - otherwise                                    -> held (Conflict naming the holder)
// A stale lock is broken by rename(2) to a private name (only one breaker can
// win that rename); the breaker re-reads the renamed record and, if it is
// not the one it judged (someone re-took the lock in between), puts it back
// with link(2) and reports the lock as held. Then it retries the acquire.
// Release unlinks the lock only when the record's owner is ours.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace kc::initwarm {

struct LockRecord {
  std::string owner;  // job uid
  std::string host;
  std::string boot_id;
  std::int64_t pid = 0;
  std::int64_t started = 0;  // unix seconds
  std::string staging;
  friend bool operator==(const LockRecord&, const LockRecord&) = default;
};

std::string LockToJson(const LockRecord& r);
StatusOr<LockRecord> ParseLock(std::string_view json);
// "owner job-1 (pid 42 on host warm-abc, since 2026-12-02T09:40:00Z)"
std::string DescribeLock(const LockRecord& r);

enum class LockVerdict { kMine, kHeld, kStale };
struct LockJudgement {
  LockVerdict verdict;
  std::string why;
};

// Pure. `me` carries our owner/host/boot; `lock_mtime` is the lock file's
// mtime; `holder_pid_alive` is only consulted on the same host and boot.
// `dead_owners`: owner ids known to be finished (their Job is Complete,
// Failed or deleted: no pod of theirs runs any more); a lock of one of them
// is stale at once. Never contains a live owner: only the operator, which
// sees the Job's terminal condition, fills it.
LockJudgement JudgeLock(const LockRecord& holder, std::int64_t lock_mtime, const LockRecord& me,
                        std::int64_t now, std::int64_t stale_after_s, bool holder_pid_alive,
                        const std::vector<std::string>& dead_owners = {});

struct LockOptions {
  std::int64_t stale_after_s = 2 * 3600;
  // Record this process's pid as the holder. `prepare` exits right after
  // taking the lock for its Job, so it records pid 0 (no process to watch:
  // only age and boot id can make the lock stale); `seal` records its pid,
  // rewriting an adopted record, so a crashed sealer's lock is recognised
  // as dead on the same host.
  bool record_pid = true;
  // Owners whose lock may be broken at once (see JudgeLock).
  std::vector<std::string> dead_owners;
};

// Takes (or adopts) the lock at `path` for `me`. Conflict when another live
// owner holds it; the message names the holder. Creates the parent directory.
Status AcquireLock(const std::filesystem::path& path, const LockRecord& me,
                   const LockOptions& opts);
// Removes the lock when its owner is `owner`; NotFound-free (absent is OK);
// Conflict when someone else holds it.
Status ReleaseLock(const std::filesystem::path& path, const std::string& owner);
// A lock this process took: released (ReleaseLock, its result ignored: a
// lock left behind goes stale) when the HeldLock goes out of scope, unless
// handed on to a step that adopts and releases it itself (seal).
class HeldLock {
 public:
  HeldLock(std::filesystem::path path, std::string owner)
      : path_(std::move(path)), owner_(std::move(owner)) {}
  ~HeldLock() {
    if (!path_.empty()) (void)ReleaseLock(path_, owner_);
  }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;
  void HandOn() { path_.clear(); }

 private:
  std::filesystem::path path_;
  std::string owner_;
};

// The current record, or nullopt when there is no lock.
StatusOr<std::optional<LockRecord>> ReadLock(const std::filesystem::path& path);
// The identity of this process for owner `owner`.
LockRecord SelfLockRecord(const std::string& owner, const std::string& staging);

}  // namespace kc::initwarm
