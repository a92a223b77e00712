#include "initwarm/cache/gc.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fingerprint.h"
#include "initwarm/cache/lock.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;
using Kind = GcEntry::Kind;

namespace {

std::vector<fs::path> List(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// READY's content without its newline; "" when absent, unreadable or not
// a regular file (read as volume content: initwarm/fs/safe_file.h).
std::string ReadyDigest(const core::Layout& layout, const fs::path& dir) {
  auto root = SafeDir::OpenTrusted(layout.root());
  if (!root.ok()) return "";
  const fs::path rel = (dir / core::kReadyFileName).lexically_relative(layout.root());
  auto text = root->ReadFile(rel.string(), 4096);
  if (!text.ok()) return "";
  std::string d = *text;
  while (!d.empty() && (d.back() == '\n' || d.back() == '\r' || d.back() == ' ')) d.pop_back();
  return d;
}

// Removes `path` (under --root) without following any symlink on the way or
// in the tree: a link planted on the volume is removed, never what it names.
Status RemoveUnderRoot(const core::Layout& layout, const fs::path& path) {
  KC_ASSIGN_OR_RETURN(SafeDir root, SafeDir::OpenTrusted(layout.root()));
  return root.Remove(path.lexically_relative(layout.root()).string());
}

// v1/'s own directories must be real directories: GC lists and removes what
// is in them, and never through a symlink someone planted on the volume.
Status CheckLayoutDir(const fs::path& dir) {
  if (!Exists(dir) || IsRealDirectory(dir)) return OkStatus();
  return InvalidArgumentError(dir.string() +
                              " is not a directory (a symlink or a special file on the "
                              "volume); gc never lists or removes through it: remove it");
}

bool IsDigest(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

StatusOr<GcPolicy> GcPolicyOf(const GcNames& names, GcPolicy p) {
  for (const auto& k : names.keep) {
    if (!core::IsFingerprintId(k)) {
      return InvalidArgumentError("--keep \"" + k.substr(0, 64) + "\" is not a fingerprint id");
    }
    p.keep.insert(k);
  }
  for (const auto& r : names.remove) {
    if (Status s = ParseRemoveSpec(r, &p.remove); !s.ok()) return s;
    if (p.keep.count(r.substr(0, r.find(':'))) > 0) {
      return InvalidArgumentError("--remove " + r.substr(0, 64) +
                                  " names a fingerprint also in --keep");
    }
  }
  for (const auto& d : names.break_lock_of) {
    if (!core::IsSafeUid(d)) {
      return InvalidArgumentError("--break-lock-of \"" + d.substr(0, 64) +
                                  "\" is unsafe (want 1-128 of [A-Za-z0-9._-])");
    }
    p.dead_owners.insert(d);
  }
  p.scoped = names.scoped;
  return p;
}

Status ParseRemoveSpec(std::string_view value, std::map<std::string, std::string>* out) {
  std::string_view fp = value, digest;
  if (auto colon = value.find(':'); colon != std::string_view::npos) {
    fp = value.substr(0, colon);
    digest = value.substr(colon + 1);
    if (!IsDigest(digest)) {
      return InvalidArgumentError("--remove \"" + std::string(value) +
                                  "\": the part after ':' must be the manifest digest (64 "
                                  "lower-case hex digits)");
    }
  }
  if (!core::IsFingerprintId(fp)) {
    return InvalidArgumentError("--remove \"" + std::string(value) +
                                "\" does not start with a fingerprint id (16 lower-case hex "
                                "digits); want <fingerprint>[:<manifest digest>]");
  }
  (*out)[std::string(fp)] = std::string(digest);
  return OkStatus();
}

StatusOr<std::vector<GcEntry>> ScanVolume(const core::Layout& layout,
                                          std::int64_t lock_stale_after_s,
                                          const std::vector<std::string>& dead_owners) {
  std::vector<GcEntry> out;
  if (!IsRealDirectory(layout.VersionDir())) {
    return NotFoundError(layout.VersionDir().string() +
                         " does not exist: is --root the cache volume's mount path?");
  }
  for (const auto& dir :
       {layout.StagingRoot(), layout.QuarantineRoot(), layout.LocksRoot(), layout.InboxRoot()}) {
    KC_RETURN_IF_ERROR(CheckLayoutDir(dir));
  }
  const LockRecord me = SelfLockRecord("initwarm-gc-" + std::to_string(::getpid()), "");
  // Whether a live writer holds `lock` (for `owner` when not empty); the
  // holder's owner goes to `holder`.
  auto live_lock = [&](const fs::path& lock, const std::string& owner, std::string* holder) {
    auto rec = ReadLock(lock);
    if (!rec.ok() || !rec->has_value()) return false;
    if (holder != nullptr) *holder = (*rec)->owner;
    if (!owner.empty() && (*rec)->owner != owner) return false;
    auto j = JudgeLock(**rec, MtimeSeconds(lock), me, NowSeconds(), lock_stale_after_s,
                       (*rec)->host == me.host ? PidAlive((*rec)->pid) : true, dead_owners);
    return j.verdict != LockVerdict::kStale;
  };
  for (const auto& p : List(layout.VersionDir())) {
    std::string name = p.filename().string();
    if (core::IsFingerprintId(name) && IsRealDirectory(p)) {
      out.push_back({Kind::kPublished, p, name, MtimeSeconds(p), false, ReadyDigest(layout, p)});
    }
  }
  for (const auto& p : List(layout.StagingRoot())) {
    auto split = core::SplitFingerprintName(p.filename().string());
    GcEntry e{Kind::kStaging, p, split.ok() ? split->fingerprint : "", MtimeSeconds(p), false};
    if (split.ok()) {
      e.owner = split->suffix;
      e.live_writer = live_lock(layout.Lock(split->fingerprint), split->suffix, nullptr);
    }
    out.push_back(e);
  }
  for (const auto& p : List(layout.QuarantineRoot())) {
    auto split = core::SplitFingerprintName(p.filename().string());
    out.push_back(
        {Kind::kQuarantine, p, split.ok() ? split->fingerprint : "", MtimeSeconds(p), false});
  }
  for (const auto& p : List(layout.LocksRoot())) {
    std::string name = p.filename().string();
    std::string fp =
        name.size() >= 16 && core::IsFingerprintId(name.substr(0, 16)) ? name.substr(0, 16) : "";
    bool is_lock = name.size() == 21 && name.ends_with(".lock");
    GcEntry e{Kind::kLock, p, fp, MtimeSeconds(p), false};
    if (is_lock) e.live_writer = live_lock(p, "", &e.owner);
    out.push_back(e);
  }
  for (const auto& fp_dir : List(layout.InboxRoot())) {
    const std::string fp = fp_dir.filename().string();
    if (!core::IsFingerprintId(fp) || !IsRealDirectory(fp_dir)) {
      out.push_back({Kind::kInbox, fp_dir, "", MtimeSeconds(fp_dir), false});
      continue;
    }
    for (const auto& p : List(fp_dir)) out.push_back({Kind::kInbox, p, fp, MtimeSeconds(p), false});
  }
  return out;
}

std::vector<GcDecision> PlanGc(const std::vector<GcEntry>& entries, const GcPolicy& p) {
  std::vector<GcDecision> out;
  for (const auto& e : entries) {
    GcDecision d{e, false, ""};
    const bool kept = !e.fingerprint.empty() && p.keep.count(e.fingerprint) > 0;
    const auto listed = p.remove.find(e.fingerprint);
    const std::int64_t age = p.now - e.mtime;
    if (kept) {
      d.why = "fingerprint is kept";
      out.push_back(std::move(d));
      continue;
    }
    if (p.scoped && listed == p.remove.end()) {
      d.why = "fingerprint not named by --remove: not this GC's to touch";
      out.push_back(std::move(d));
      continue;
    }
    switch (e.kind) {
      case Kind::kPublished:
        if (listed == p.remove.end()) {
          d.why = "published caches are removed only when named by --remove";
        } else if (listed->second.empty()) {
          d.why = "no manifest digest given with --remove: not provably the cache to remove";
        } else if (e.ready_digest.empty()) {
          d.why = "no READY (being published, or a crash leftover the next seal handles)";
        } else if (e.ready_digest != listed->second) {
          d.why = "sealed again since it was listed (READY " + e.ready_digest.substr(0, 12) +
                  "..., listed " + listed->second.substr(0, 12) + "...)";
        } else {
          d.remove = true;
          d.why = "named by --remove with its manifest digest";
        }
        break;
      case Kind::kStaging:
        if (e.live_writer) {
          d.why = "a live warmup holds its lock";
        } else if (!e.owner.empty() && p.dead_owners.count(e.owner) > 0) {
          d.remove = true;
          d.why = "staging of " + e.owner + ", a warmup the operator saw end (--break-lock-of)";
        } else if (age <= p.staging_max_age_s) {
          d.why = "younger than --staging-max-age";
        } else {
          d.remove = true;
          d.why = "staging " + std::to_string(age) + "s old, no live writer";
        }
        break;
      case Kind::kQuarantine:
        if (age < p.quarantine_max_age_s) {
          d.why = "younger than --quarantine-max-age";
        } else {
          d.remove = true;
          d.why = "quarantined";
        }
        break;
      case Kind::kInbox:
        if (listed != p.remove.end()) {
          d.remove = true;
          d.why = "inbox of a fingerprint named by --remove";
        } else if (age <= p.staging_max_age_s) {
          d.why = "younger than --staging-max-age";
        } else {
          d.remove = true;
          d.why = "inbox " + std::to_string(age) + "s old, never merged";
        }
        break;
      case Kind::kLock:
        if (e.live_writer) {
          d.why = "held by a live writer";
        } else if (!e.owner.empty() && p.dead_owners.count(e.owner) > 0) {
          d.remove = true;
          d.why = "lock of " + e.owner + ", a warmup the operator saw end (--break-lock-of)";
        } else if (age <= p.staging_max_age_s) {
          d.why = "younger than --staging-max-age";
        } else {
          d.remove = true;
          d.why = "lock of a dead writer";
        }
        break;
    }
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

// Removes one published cache under its fingerprint lock, only while READY
// still holds the digest the plan saw.
Status RemovePublished(const core::Layout& layout, const GcEntry& e,
                       std::int64_t lock_stale_after_s, const std::vector<std::string>& dead) {
  const std::string owner = "initwarm-gc-" + RandomHex();
  LockOptions lo;
  lo.stale_after_s = lock_stale_after_s;
  lo.dead_owners = dead;
  const fs::path lock = layout.Lock(e.fingerprint);
  Status locked = AcquireLock(lock, SelfLockRecord(owner, ""), lo);
  if (!locked.ok()) {
    if (IsConflict(locked)) {
      return UnavailableError("not removing " + e.path.string() + ": " + locked.message() +
                              "; retry later");
    }
    return locked;
  }
  Status s;
  const std::string now_digest = ReadyDigest(layout, e.path);
  if (now_digest == e.ready_digest && !now_digest.empty()) {
    // Invisible first (one rename), then delete at leisure.
    fs::path aside =
        layout.Quarantine(e.fingerprint, core::TimeTag(NowSeconds()), "gc-" + RandomHex());
    s = MkdirAll(layout.QuarantineRoot());
    if (s.ok()) s = Rename(e.path, aside);
    Status released = ReleaseLock(lock, owner);
    if (s.ok()) s = RemoveUnderRoot(layout, aside);
    if (s.ok()) s = released;
    return s;
  }
  return ReleaseLock(lock, owner);  // re-sealed (or unpublished) meanwhile: kept
}

}  // namespace

Status ApplyGc(const core::Layout& layout, const std::vector<GcDecision>& plan,
               std::int64_t lock_stale_after_s, const std::vector<std::string>& dead_owners) {
  Status first;
  for (const auto& d : plan) {
    if (!d.remove) continue;
    Status s;
    if (d.entry.kind == Kind::kPublished) {
      s = RemovePublished(layout, d.entry, lock_stale_after_s, dead_owners);
    } else if (d.entry.kind == Kind::kLock) {
      if (::unlink(d.entry.path.c_str()) != 0 && errno != ENOENT) {
        s = ErrnoStatus(errno, "unlink " + d.entry.path.string());
      }
    } else {
      s = RemoveUnderRoot(layout, d.entry.path);
    }
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace kc::initwarm
