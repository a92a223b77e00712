#include "initwarm/cache/lock.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "core/manifest.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string LockToJson(const LockRecord& r) {
  return json{{"owner", r.owner}, {"host", r.host},       {"bootId", r.boot_id},
              {"pid", r.pid},     {"started", r.started}, {"staging", r.staging}}
             .dump() +
         "\n";
}

StatusOr<LockRecord> ParseLock(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("lock file is not a JSON object");
  }
  LockRecord r;
  try {
    r.owner = j.at("owner").get<std::string>();
    r.host = j.value("host", "");
    r.boot_id = j.value("bootId", "");
    r.pid = j.value("pid", std::int64_t{0});
    r.started = j.value("started", std::int64_t{0});
    r.staging = j.value("staging", "");
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("lock file field: ") + e.what());
  }
  return r;
}

std::string DescribeLock(const LockRecord& r) {
  return "owner " + r.owner + " (pid " + std::to_string(r.pid) + " on host " + r.host + ", since " +
         core::Rfc3339(r.started) + ")";
}

LockJudgement JudgeLock(const LockRecord& holder, std::int64_t lock_mtime, const LockRecord& me,
                        std::int64_t now, std::int64_t stale_after_s, bool holder_pid_alive,
                        const std::vector<std::string>& dead_owners) {
  if (holder.owner == me.owner) return {LockVerdict::kMine, "held by this owner"};
  if (std::find(dead_owners.begin(), dead_owners.end(), holder.owner) != dead_owners.end()) {
    return {LockVerdict::kStale,
            "holder " + holder.owner + " is a finished or deleted Job (--break-lock-of)"};
  }
  if (!holder.host.empty() && holder.host == me.host) {
    if (!holder.boot_id.empty() && !me.boot_id.empty() && holder.boot_id != me.boot_id) {
      return {LockVerdict::kStale, "holder's host has rebooted since (boot id changed)"};
    }
    if (holder.pid > 0 && !holder_pid_alive) {
      return {LockVerdict::kStale,
              "holder process " + std::to_string(holder.pid) + " no longer runs on this host"};
    }
  }
  std::int64_t last = std::max(lock_mtime, holder.started);
  if (stale_after_s > 0 && now - last > stale_after_s) {
    return {LockVerdict::kStale, "lock is " + std::to_string(now - last) +
                                     "s old, older than --lock-stale-after " +
                                     std::to_string(stale_after_s) + "s"};
  }
  return {LockVerdict::kHeld, "held by " + DescribeLock(holder)};
}

StatusOr<std::optional<LockRecord>> ReadLock(const fs::path& path) {
  auto text = ReadFileNoFollow(path, 1 << 20);  // volume content: never a FIFO or a link
  if (!text.ok()) {
    if (IsNotFound(text.status())) return std::optional<LockRecord>();
    return text.status();
  }
  auto r = ParseLock(*text);
  if (!r.ok()) return r.status().WithContext(path.string());
  return std::optional<LockRecord>(*r);
}

LockRecord SelfLockRecord(const std::string& owner, const std::string& staging) {
  LockRecord r;
  r.owner = owner;
  r.host = Hostname();
  r.boot_id = BootId();
  r.pid = ::getpid();
  r.started = NowSeconds();
  r.staging = staging;
  return r;
}

Status AcquireLock(const fs::path& path, const LockRecord& me, const LockOptions& opts) {
  KC_RETURN_IF_ERROR(MkdirAll(path.parent_path()));
  fs::path tmp = path;
  tmp += ".new." + me.owner + "." + std::to_string(::getpid());
  LockRecord rec = me;
  if (!opts.record_pid) rec.pid = 0;
  KC_RETURN_IF_ERROR(WriteNewFile(tmp, LockToJson(rec)));
  auto cleanup_tmp = [&] { ::unlink(tmp.c_str()); };
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      cleanup_tmp();
      return FsyncPath(path.parent_path());
    }
    if (errno != EEXIST) {
      int e = errno;
      cleanup_tmp();
      return ErrnoStatus(e, "link " + tmp.string() + " -> " + path.string());
    }
    auto holder = ReadLock(path);
    if (!holder.ok()) {
      cleanup_tmp();
      return holder.status();
    }
    if (!holder->has_value()) continue;  // released meanwhile: retry
    const LockRecord& h = **holder;
    LockJudgement j = JudgeLock(h, MtimeSeconds(path), me, NowSeconds(), opts.stale_after_s,
                                h.host == me.host ? PidAlive(h.pid) : true, opts.dead_owners);
    if (j.verdict == LockVerdict::kMine) {
      if (opts.record_pid && h.pid != rec.pid) {
        // Adopt: our record (with our pid) replaces the one prepare wrote.
        if (::rename(tmp.c_str(), path.c_str()) != 0) {
          int e = errno;
          cleanup_tmp();
          return ErrnoStatus(e, "adopt lock " + path.string());
        }
        return FsyncPath(path.parent_path());
      }
      cleanup_tmp();
      return OkStatus();
    }
    if (j.verdict == LockVerdict::kHeld) {
      cleanup_tmp();
      return ConflictError("fingerprint lock " + path.string() + " is " + j.why +
                           "; another warmup is writing this fingerprint. Wait for it; once its "
                           "Job has finished the operator names it in --break-lock-of of the "
                           "next warmup, else the lock is broken after --lock-stale-after");
    }
    // Stale: break it by renaming to a private name; only one breaker wins.
    fs::path broken = path;
    broken += ".broken." + me.owner + "." + std::to_string(::getpid());
    if (::rename(path.c_str(), broken.c_str()) != 0) {
      if (errno == ENOENT) continue;  // someone else broke it: retry
      int e = errno;
      cleanup_tmp();
      return ErrnoStatus(e, "break stale lock " + path.string());
    }
    auto moved = ReadLock(broken);
    if (moved.ok() && moved->has_value() && **moved != h) {
      // We displaced a fresh lock taken after our judgement: put it back.
      if (::link(broken.c_str(), path.c_str()) != 0 && errno != EEXIST) {
        int e = errno;
        ::unlink(broken.c_str());
        cleanup_tmp();
        return ErrnoStatus(e, "restore lock " + path.string());
      }
      ::unlink(broken.c_str());
      continue;
    }
    ::unlink(broken.c_str());
  }
  cleanup_tmp();
  return ConflictError("could not take fingerprint lock " + path.string() +
                       " after repeated contention; retry");
}

Status ReleaseLock(const fs::path& path, const std::string& owner) {
  KC_ASSIGN_OR_RETURN(auto holder, ReadLock(path));
  if (!holder) return OkStatus();
  if (holder->owner != owner) {
    return ConflictError("fingerprint lock " + path.string() + " is held by " +
                         DescribeLock(*holder) + ", not by " + owner + "; not releasing it");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink " + path.string());
  }
  return FsyncPath(path.parent_path());
}

}  // namespace kc::initwarm
