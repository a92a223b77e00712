#include "initwarm/wait.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "core/manifest.h"
#include "initwarm/fsutil.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

StatusOr<ConsumeMode> ParseConsumeMode(std::string_view s) {
  if (s == "Shared") return ConsumeMode::kShared;
  if (s == "SharedReadWrite") return ConsumeMode::kSharedReadWrite;
  if (s == "Copy") return ConsumeMode::kCopy;
  return InvalidArgumentError("--mode \"" + std::string(s) +
                              "\" is unknown: want Shared, SharedReadWrite or Copy");
}

std::int64_t NextPollDelayMs(int attempt, std::int64_t initial_ms, std::int64_t max_ms) {
  std::int64_t d = std::max<std::int64_t>(1, initial_ms);
  for (int i = 0; i < attempt && d < max_ms; ++i) d *= 2;
  return std::min(d, max_ms);
}

std::string HumanDuration(std::int64_t ms) {
  std::int64_t s = ms / 1000;
  std::int64_t h = s / 3600;
  std::int64_t m = (s % 3600) / 60;
  s %= 60;
  char buf[64];
  if (h > 0) {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(h),
                  static_cast<long long>(m));
  } else if (m > 0) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(m),
                  static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(s));
  }
  return buf;
}

Status CopyCache(const fs::path& src, const fs::path& dst, const core::Manifest& m) {
  KC_RETURN_IF_ERROR(MkdirAll(dst));
  for (auto dir : core::kFrameworkDirs) KC_RETURN_IF_ERROR(MkdirAll(dst / dir));
  std::error_code ec;
  for (const auto& f : m.files) {
    KC_RETURN_IF_ERROR(core::CheckRelativePath(f.path));
    fs::path to = dst / f.path;
    KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
    fs::copy_file(src / f.path, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return ErrnoStatus(ec.value(), "copy " + (src / f.path).string());
  }
  for (const auto& l : m.links) {
    KC_RETURN_IF_ERROR(core::CheckSymlinkTarget(l.path, l.target));
    fs::path to = dst / l.path;
    KC_RETURN_IF_ERROR(MkdirAll(to.parent_path()));
    fs::create_symlink(l.target, to, ec);
    if (ec) return ErrnoStatus(ec.value(), "symlink " + to.string());
  }
  for (auto name : {core::kManifestFileName, core::kReadyFileName}) {
    fs::copy_file(src / name, dst / name, fs::copy_options::overwrite_existing, ec);
    if (ec) return ErrnoStatus(ec.value(), "copy " + (src / name).string());
  }
  return OkStatus();
}

namespace {

struct Clock {
  const WaitDeps& d;
  std::int64_t Now() const {
    if (d.now_ms) return d.now_ms();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void Sleep(std::int64_t ms) const {
    if (d.sleep_ms) return d.sleep_ms(ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  void Log(const std::string& line) const {
    if (d.log) return d.log(line);
    std::cerr << "initwarm wait: " << line << std::endl;
  }
};

fs::path LocalDir(const WaitOptions& o) {
  return o.local_dir.empty() ? o.view.parent_path() / "local" : o.local_dir;
}

std::string DescribeFacts(const core::NodeFacts& n) { return core::NodeFactsToJson(n); }

// Tries to use a READY cache. Returns the target directory when it passed
// validation; otherwise a reason (and quarantines where allowed).
StatusOr<fs::path> TryUse(const WaitOptions& o, const WaitDeps& deps, const std::string& fp,
                          const std::optional<core::NodeFacts>& node, std::string* reason,
                          const Clock& clock) {
  core::Layout layout(o.root);
  fs::path published = layout.Published(fp);
  VerifyOptions vo;
  vo.dir = published;
  vo.level = o.verify;
  vo.expected_fingerprint = fp;
  vo.node = node;
  vo.view_prefix = o.view_prefix;
  vo.threads = o.threads;
  vo.load_cubin = deps.load_cubin;
  if (o.mode == ConsumeMode::kCopy) {
    // Validate the manifest on the volume, copy, then validate the copy.
    VerifyOptions first = vo;
    first.level = core::Level::kFingerprint;
    VerifyReport r = VerifyCache(first);
    if (r.ok) {
      fs::path copy = LocalDir(o) / ("copy-" + fp + "-" + RandomHex());
      Status s = CopyCache(published, copy, r.manifest);
      if (!s.ok()) {
        (void)RemoveTree(copy);
        return s;
      }
      vo.dir = copy;
      r = VerifyCache(vo);
      if (r.ok) {
        for (const auto& n : r.notes) clock.Log("note: " + n);
        return copy;
      }
      (void)RemoveTree(copy);
    }
    *reason = "cache for fingerprint " + fp + " failed validation: " + r.finding.ToString();
    if (o.quarantine && r.finding.file != core::kReadyFileName) {
      auto q = Quarantine(layout, fp, published, r.finding);
      if (q.ok()) *reason += " (quarantined to " + q->string() + ")";
    }
    return NotFoundError(*reason);
  }
  VerifyReport r = VerifyCache(vo);
  if (r.ok) {
    for (const auto& n : r.notes) clock.Log("note: " + n);
    return published;
  }
  *reason = "cache for fingerprint " + fp + " failed validation: " + r.finding.ToString();
  if (o.quarantine && r.finding.file != core::kReadyFileName) {
    auto q = Quarantine(layout, fp, published, r.finding);
    if (q.ok()) {
      *reason += " (quarantined to " + q->string() + ")";
    } else {
      *reason += " (not quarantined: " + q.status().message() + ")";
    }
  }
  return NotFoundError(*reason);
}

}  // namespace

StatusOr<WaitResult> Wait(const WaitOptions& o, const WaitDeps& deps) {
  Clock clock{deps};
  if (deps.resolver == nullptr && !core::IsFingerprintId(o.fingerprint)) {
    return InvalidArgumentError(
        "no way to know this pod's fingerprint: pass --resolve-url (with --namespace, "
        "--kernelcache, --node) or --fingerprint");
  }
  const std::int64_t start = clock.Now();
  const std::int64_t deadline = start + o.timeout_s * 1000;
  std::string fp = o.fingerprint;
  std::string state = fp.empty() ? "Unknown" : "Pending";
  std::string reason = "waiting for the first answer";
  std::optional<core::NodeFacts> node;
  bool cross_checked = deps.prober == nullptr;
  bool failed = false;
  std::string validation_failure;
  std::int64_t last_log = start - o.log_every_s * 1000;
  for (int attempt = 0;; ++attempt) {
    if (deps.resolver != nullptr) {
      auto ans = deps.resolver->Resolve(o.ns, o.kernelcache, o.node);
      if (!ans.ok()) {
        reason = "operator resolve endpoint: " + ans.status().ToString();
      } else {
        state = ans->state;
        reason = ans->message.empty() ? "state " + ans->state : ans->message;
        if (core::IsFingerprintId(ans->fingerprint)) {
          if (!o.fingerprint.empty() && ans->fingerprint != o.fingerprint) {
            return FailedPreconditionError("the operator resolves node " + o.node +
                                           " to fingerprint " + ans->fingerprint +
                                           " but --fingerprint is " + o.fingerprint);
          }
          fp = ans->fingerprint;
          node = ans->node;
        }
        if (!cross_checked && !fp.empty()) {
          auto probe = deps.prober->Probe();
          cross_checked = true;
          if (!probe.ok()) {
            clock.Log("no local cross-check of the fingerprint: " + probe.status().message());
          } else if (!(probe->facts == ans->node)) {
            return FailedPreconditionError(
                "fingerprint disagreement: the operator says node " + o.node + " is " +
                DescribeFacts(ans->node) + " (fingerprint " + fp + ") but the local probe (" +
                probe->source + ") sees " + DescribeFacts(probe->facts) +
                "; the node's GPU labels are stale (is GPU Feature Discovery running?)");
          } else {
            node = probe->facts;
          }
        }
        if (ans->state == "Failed") failed = true;
      }
    }
    const bool ready_file = !fp.empty() && Exists(core::Layout(o.root).Ready(fp));
    if (!fp.empty() && !ready_file && state == "Ready") {
      reason = "the operator reports fingerprint " + fp + " Ready but " +
               core::Layout(o.root).Ready(fp).string() +
               " is missing: is the cache volume mounted at --root?";
    }
    if (ready_file) {
      std::string why;
      auto target = TryUse(o, deps, fp, node, &why, clock);
      if (target.ok()) {
        Status s = MkdirAll(o.view.parent_path());
        if (s.ok()) s = ReplaceSymlink(*target, o.view);
        if (!s.ok()) return InternalError("cannot build the view: " + s.message());
        WaitResult r{"Warm", fp, "validated up to " + std::string(core::LevelName(o.verify)),
                     *target, clock.Now() - start};
        return r;
      }
      reason = why.empty() ? target.status().message() : why;
      validation_failure = reason;
      clock.Log(reason);
    }
    const std::int64_t now = clock.Now();
    if (failed || now >= deadline) break;
    if (now - last_log >= o.log_every_s * 1000) {
      std::string line = "waiting " + HumanDuration(now - start) + " for ";
      line += fp.empty() ? std::string("this node's fingerprint") : "fingerprint " + fp;
      line += " (" + state + "): ";
      line += reason;
      clock.Log(line);
      last_log = now;
    }
    clock.Sleep(std::min(NextPollDelayMs(attempt, o.poll_initial_ms, o.poll_max_ms),
                         std::max<std::int64_t>(1, deadline - now)));
  }
  const std::int64_t waited = clock.Now() - start;
  std::string why =
      (failed ? "warmup failed" : "timed out after " + HumanDuration(waited)) + " waiting for " +
      (fp.empty() ? std::string("this node's fingerprint") : "fingerprint " + fp) + ": " + reason;
  if (!validation_failure.empty() && validation_failure != reason) {
    why += " (earlier: " + validation_failure + ")";
  }
  if (!o.start_cold_on_timeout) return DeadlineExceededError(why);
  fs::path cold = LocalDir(o) / "cold";
  Status s;
  for (auto dir : core::kFrameworkDirs) {
    if (s.ok()) s = MkdirAll(cold / dir);
  }
  if (s.ok()) s = MkdirAll(o.view.parent_path());
  if (s.ok()) s = ReplaceSymlink(cold, o.view);
  if (!s.ok()) return InternalError("cannot build the cold view: " + s.message());
  return WaitResult{"Cold", fp, why + "; starting cold with an empty cache", cold, waited};
}

}  // namespace kc::initwarm
