#include "initwarm/cache/prepare.h"

#include <unistd.h>

#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/security_context.h"
#include "initwarm/cache/lock.h"
#include "initwarm/fs/fsutil.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

namespace {

// A PermissionDenied on the cache volume carries the fix (a root-owned
// export is the usual cause; docs/permissions.md).
Status OnVolume(const std::filesystem::path& root, Status s) {
  if (s.code() != StatusCode::kPermissionDenied) return s;
  // The fix first (a failed container's message is shown cut), then what
  // failed.
  return PermissionDeniedError(core::ExportFix(root.string(), ::geteuid(), ::getegid()) + " (" +
                               s.message() + ")");
}

Status InstallRunner(const fs::path& from, const fs::path& to) {
  KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
  const fs::path tmp = to.string() + ".tmp";
  std::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return ErrnoStatus(ec.value(), "install the runner " + from.string() + " at " + tmp.string());
  }
  fs::permissions(tmp, fs::perms(0555), ec);
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) return ErrnoStatus(ec.value(), "install the runner at " + to.string());
  return OkStatus();
}

}  // namespace

StatusOr<PrepareResult> Prepare(const PrepareOptions& o) {
  if (!core::IsFingerprintId(o.fingerprint)) {
    return InvalidArgumentError("--fingerprint \"" + o.fingerprint +
                                "\" is not a fingerprint id (16 lower-case hex digits)");
  }
  if (!core::IsSafeUid(o.owner)) {
    return InvalidArgumentError("--job-uid \"" + o.owner +
                                "\" is unsafe (want 1-128 of [A-Za-z0-9._-])");
  }
  core::Layout layout(o.root);
  PrepareResult r;
  r.staging = layout.Staging(o.fingerprint, o.owner);
  r.lock = layout.Lock(o.fingerprint);
  KC_RETURN_IF_ERROR(OnVolume(o.root, MkdirAll(layout.StagingRoot())));
  // The inbox root, group-writable, before any pod is gated on this cache:
  // miss watchers mount only it (a subPath), and a subPath the kubelet has
  // to create itself is root's, where a watcher of the cache group could
  // not write.
  KC_RETURN_IF_ERROR(OnVolume(o.root, MkdirAll(layout.InboxRoot())));
  LockOptions lo;
  lo.stale_after_s = o.lock_stale_after_s;
  lo.record_pid = false;  // the lock belongs to the Job; prepare exits now
  for (const auto& dead : o.break_lock_of) {
    if (!core::IsSafeUid(dead)) {
      return InvalidArgumentError("--break-lock-of \"" + dead +
                                  "\" is unsafe (want 1-128 of [A-Za-z0-9._-])");
    }
    if (dead == o.owner) {
      return InvalidArgumentError("--break-lock-of names this Job's own uid " + dead +
                                  "; a live owner is never declared dead");
    }
  }
  lo.dead_owners = o.break_lock_of;
  KC_RETURN_IF_ERROR(
      OnVolume(o.root, AcquireLock(r.lock, SelfLockRecord(o.owner, r.staging.string()), lo)));
  r.reused = IsRealDirectory(r.staging);
  for (auto dir : core::kFrameworkDirs) {
    KC_RETURN_IF_ERROR(OnVolume(o.root, MkdirAll(r.staging / dir)));
  }
  KC_RETURN_IF_ERROR(OnVolume(o.root, FsyncPath(layout.StagingRoot())));
  if (!o.view.empty()) {
    KC_RETURN_IF_ERROR(MkdirAll(o.view.parent_path()));
    KC_RETURN_IF_ERROR(ReplaceSymlink(r.staging, o.view));
  }
  if (!o.runner.empty()) KC_RETURN_IF_ERROR(InstallRunner(o.runner_source, o.runner));
  return r;
}

}  // namespace kc::initwarm
