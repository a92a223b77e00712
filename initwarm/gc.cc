#include "initwarm/gc.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fingerprint.h"
#include "initwarm/fsutil.h"
#include "initwarm/lock.h"

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

}  // namespace

StatusOr<std::vector<GcEntry>> ScanVolume(const core::Layout& layout,
                                          std::int64_t lock_stale_after_s) {
  std::vector<GcEntry> out;
  if (!IsRealDirectory(layout.VersionDir())) {
    return NotFoundError(layout.VersionDir().string() +
                         " does not exist: is --root the cache volume's mount path?");
  }
  const LockRecord me = SelfLockRecord("initwarm-gc-" + std::to_string(::getpid()), "");
  auto live_lock = [&](const fs::path& lock, const std::string& owner) {
    auto rec = ReadLock(lock);
    if (!rec.ok() || !rec->has_value()) return false;
    if (!owner.empty() && (*rec)->owner != owner) return false;
    auto j = JudgeLock(**rec, MtimeSeconds(lock), me, NowSeconds(), lock_stale_after_s,
                       (*rec)->host == me.host ? PidAlive((*rec)->pid) : true);
    return j.verdict != LockVerdict::kStale;
  };
  for (const auto& p : List(layout.VersionDir())) {
    std::string name = p.filename().string();
    if (core::IsFingerprintId(name) && IsRealDirectory(p)) {
      out.push_back({Kind::kPublished, p, name, MtimeSeconds(p), false});
    }
  }
  for (const auto& p : List(layout.StagingRoot())) {
    auto split = core::SplitFingerprintName(p.filename().string());
    GcEntry e{Kind::kStaging, p, split.ok() ? split->fingerprint : "", MtimeSeconds(p), false};
    if (split.ok()) e.live_writer = live_lock(layout.Lock(split->fingerprint), split->suffix);
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
    out.push_back({Kind::kLock, p, fp, MtimeSeconds(p), is_lock && live_lock(p, "")});
  }
  return out;
}

std::vector<GcDecision> PlanGc(const std::vector<GcEntry>& entries, const GcPolicy& p) {
  std::vector<GcDecision> out;
  for (const auto& e : entries) {
    GcDecision d{e, false, ""};
    const bool kept = !e.fingerprint.empty() && p.keep.count(e.fingerprint) > 0;
    const std::int64_t age = p.now - e.mtime;
    switch (e.kind) {
      case Kind::kPublished:
        if (kept) {
          d.why = "fingerprint is kept";
        } else if (!p.remove_unkept) {
          d.why = "no --keep given: published fingerprints are left alone";
        } else {
          d.remove = true;
          d.why = "fingerprint not in --keep";
        }
        break;
      case Kind::kStaging:
        if (kept) {
          d.why = "fingerprint is kept";
        } else if (e.live_writer) {
          d.why = "a live warmup holds its lock";
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
      case Kind::kLock:
        if (e.live_writer) {
          d.why = "held by a live writer";
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

Status ApplyGc(const core::Layout& layout, const std::vector<GcDecision>& plan) {
  Status first;
  for (const auto& d : plan) {
    if (!d.remove) continue;
    Status s;
    if (d.entry.kind == Kind::kPublished) {
      // Invisible first (one rename), then delete at leisure.
      fs::path aside =
          layout.Quarantine(d.entry.fingerprint, core::TimeTag(NowSeconds()), "gc-" + RandomHex());
      s = MkdirAll(layout.QuarantineRoot());
      if (s.ok()) s = Rename(d.entry.path, aside);
      if (s.ok()) s = RemoveTree(aside);
    } else if (d.entry.kind == Kind::kLock) {
      if (::unlink(d.entry.path.c_str()) != 0 && errno != ENOENT) {
        s = ErrnoStatus(errno, "unlink " + d.entry.path.string());
      }
    } else {
      s = RemoveTree(d.entry.path);
    }
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace kc::initwarm
