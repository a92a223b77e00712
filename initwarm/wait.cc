#include "initwarm/wait.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <numeric>
#include <set>
#include <thread>

#include "core/manifest.h"
#include "core/security_context.h"
#include "initwarm/copy_cache.h"
#include "initwarm/fsutil.h"
#include "initwarm/hasher.h"
#include "initwarm/layered_view.h"
#include "initwarm/parallel.h"
#include "initwarm/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

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

// What READY of `fp` says, read as volume content (safe_file.h: no symlink
// followed beneath --root, never a FIFO, at most 4 KiB).
struct ReadyState {
  enum Kind {
    kAbsent,   // not published (yet)
    kDigest,   // a sha256 naming a manifest.json that hashes to it and parses
    kCorrupt,  // anything else: refused at once, like a manifest that does not parse
  };
  Kind kind = kAbsent;
  std::string digest;  // kDigest, and kCorrupt when READY holds a sha256
  std::string why;     // kCorrupt
};

ReadyState ReadReady(const fs::path& root, const std::string& fp) {
  ReadyState st;
  auto root_dir = SafeDir::OpenTrusted(root);
  if (!root_dir.ok()) return st;  // the volume is not mounted yet: nothing published
  const std::string published = std::string(core::kLayoutVersionDir) + "/" + fp;
  auto layout_entry = root_dir->Stat(published);
  if (!layout_entry.ok() && IsNotFound(layout_entry.status())) return st;
  // One descriptor for READY and the manifest: a re-seal renaming the
  // directory meanwhile cannot pair one cache's READY with another's manifest.
  auto dir = root_dir->Dir(published);
  StatusOr<std::string> text = dir.status();
  if (dir.ok()) text = dir->ReadFile(core::kReadyFileName, kMaxReadyBytes);
  if (!text.ok()) {
    if (IsNotFound(text.status())) return st;
    st.kind = ReadyState::kCorrupt;
    st.why = text.status().message();
    return st;
  }
  std::string d = *text;
  while (!d.empty() && std::isspace(static_cast<unsigned char>(d.back()))) d.pop_back();
  if (!core::IsSha256Hex(d)) {
    st.kind = ReadyState::kCorrupt;
    st.why = "READY does not hold a sha256 (64 hex digits)";
    return st;
  }
  st.digest = d;
  auto manifest = dir->ReadFile(core::kManifestFileName, kMaxManifestBytes);
  core::Finding f;
  if (!manifest.ok() || !core::CheckReadyAndManifest(d, *manifest, &f).ok()) {
    st.kind = ReadyState::kCorrupt;
    st.why = manifest.ok() ? f.ToString() : manifest.status().message();
    return st;
  }
  st.kind = ReadyState::kDigest;
  return st;
}

// v1/<fp> beneath the trusted --root, no symlink followed.
StatusOr<SafeDir> OpenPublished(const fs::path& root, const std::string& fp) {
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(root));
  return dir.Dir(std::string(core::kLayoutVersionDir) + "/" + fp);
}

// READY's digest for the gate report: a sha256, or "" (absent, garbage).
std::string ReadyDigestOf(const fs::path& root, const std::string& fp) {
  ReadyState st = ReadReady(root, fp);
  return st.digest;
}

// Turns a passed report into a finding when the cache is not the one the
// operator recorded (tamper evidence: a consistent rewrite of a file, the
// manifest and READY passes levels 1-3 but not this).
void CheckDigest(VerifyReport* r, const std::string& expected) {
  if (!r->ok || expected.empty() || r->manifest_digest == expected) return;
  r->ok = false;
  r->finding = core::Finding{core::Level::kManifest, std::string(core::kReadyFileName),
                             "manifest digest " + r->manifest_digest +
                                 " differs from the one the operator recorded when it was "
                                 "sealed (" +
                                 expected + "): the cache was changed after sealing"};
}

// Tries to use a READY cache. Returns the target directory when it passed
// validation; otherwise a reason, and `found` describes the failed
// validation (quarantined where allowed).
StatusOr<fs::path> TryUse(const WaitOptions& o, const WaitDeps& deps, const std::string& fp,
                          const std::optional<core::NodeFacts>& node,
                          const std::string& expected_digest, std::string* reason,
                          std::optional<core::GateQuarantine>* found, std::string* digest,
                          const Clock& clock) {
  core::Layout layout(o.root);
  fs::path published = layout.Published(fp);
  VerifyOptions vo;
  vo.dir = published;
  vo.anchor = o.root;  // v1/<fp> is opened beneath --root, no symlink followed
  // Level 2 always: the manifest's fingerprint must be this node's, also
  // under --verify Manifest (docs/cache-layout.md).
  vo.level = std::max(o.verify, core::Level::kFingerprint);
  vo.expected_fingerprint = fp;
  vo.node = node;
  vo.view_prefix = o.view_prefix;
  vo.threads = o.threads;
  vo.load_cubin = deps.load_cubin;
  auto reject = [&](const VerifyReport& r) -> Status {
    *reason = "cache for fingerprint " + fp + " failed validation: " + r.finding.ToString();
    core::GateQuarantine q;
    q.fingerprint = fp;
    q.expected_digest = expected_digest;
    q.found_digest = ReadyDigestOf(o.root, fp);
    q.level = std::string(core::LevelName(r.finding.level));
    q.file = r.finding.file;
    q.reason = r.finding.reason;
    if (r.finding.file == core::kReadyFileName &&
        ReadReady(o.root, fp).kind == ReadyState::kAbsent) {
      return NotFoundError(*reason);  // READY went away (a re-seal moving it): poll on
    }
    // A v1/ that is not a real directory (a symlink planted on the volume)
    // is refused, never renamed through.
    if (o.quarantine && IsRealDirectory(layout.VersionDir())) {
      auto moved = Quarantine(layout, fp, published, r.finding);
      if (moved.ok()) {
        q.moved_to = moved->string();
        *reason += " (quarantined to " + moved->string() + ")";
      } else {
        *reason += " (not quarantined: " + moved.status().message() + ")";
      }
    }
    *found = q;
    return DataLossError(*reason);
  };
  if (o.mode == core::ConsumeMode::kCopy) {
    // Validate the manifest on the volume, copy, then validate the copy.
    VerifyOptions first = vo;
    first.level = core::Level::kFingerprint;
    VerifyReport r = VerifyCache(first);
    CheckDigest(&r, expected_digest);
    if (!r.ok) return reject(r);
    fs::path copy = LocalDir(o) / ("copy-" + fp + "-" + RandomHex());
    auto src = OpenPublished(o.root, fp);
    Status s = src.status();
    if (src.ok()) s = CopyCache(*src, copy, r.manifest, o.threads);
    if (!s.ok()) {
      (void)RemoveTree(copy);
      // What the volume holds was refused (not a regular file with one name,
      // not its listed size): corruption, like a failed validation.
      if (s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kDataLoss) {
        VerifyReport refused = r;
        refused.ok = false;
        refused.finding = core::Finding{core::Level::kManifest, "", s.message()};
        return reject(refused);
      }
      return s;
    }
    vo.dir = copy;
    vo.anchor.clear();  // the pod's own copy
    r = VerifyCache(vo);
    CheckDigest(&r, expected_digest);
    if (r.ok) {
      for (const auto& n : r.notes) clock.Log("note: " + n);
      *digest = r.manifest_digest;
      return copy;
    }
    (void)RemoveTree(copy);
    return reject(r);
  }
  VerifyReport r = VerifyCache(vo);
  CheckDigest(&r, expected_digest);
  if (!r.ok) return reject(r);
  for (const auto& n : r.notes) clock.Log("note: " + n);
  if (o.mode == core::ConsumeMode::kSharedReadWrite) {
    clock.Log(
        "warning: --mode SharedReadWrite is deprecated and behaves as Shared: the "
        "published cache is never written; new entries land in the pod's local view");
  }
  *digest = r.manifest_digest;
  return BuildLayeredView(published, r.manifest, LocalDir(o), fp);
}

// Builds the empty local view a cold start uses.
StatusOr<fs::path> ColdView(const WaitOptions& o) {
  fs::path cold = LocalDir(o) / "cold";
  Status s;
  for (auto dir : core::kFrameworkDirs) {
    if (s.ok()) s = MkdirAll(cold / dir);
  }
  if (s.ok()) s = MkdirAll(o.view.parent_path());
  if (s.ok()) s = ReplaceSymlink(cold, o.view);
  if (!s.ok()) return InternalError("cannot build the cold view: " + s.message());
  return cold;
}

StatusOr<WaitResult> WaitInner(const WaitOptions& o, const WaitDeps& deps, core::GateReport* rep) {
  Clock clock{deps};
  if (deps.resolver == nullptr && !core::IsFingerprintId(o.fingerprint)) {
    return InvalidArgumentError(
        "no way to know this pod's fingerprint: pass --resolve-url (with --namespace, "
        "--kernelcache, --node) or --fingerprint");
  }
  const std::int64_t start = clock.Now();
  const std::int64_t deadline = start + o.timeout_s * 1000;
  std::string fp = o.fingerprint;
  core::ResolveState state =
      fp.empty() ? core::ResolveState::kUnknown : core::ResolveState::kPending;
  std::string reason = "waiting for the first answer";
  std::string expected_digest;              // the operator's manifestDigest for fp
  std::int64_t digest_mismatch_since = -1;  // when READY's digest first differed; -1 none
  std::optional<core::NodeFacts> node;
  bool cross_checked = deps.prober == nullptr;
  bool failed = false;
  std::string final_reason;  // the operator's answer is definitive: no cache for this pod
  // The operator's last answer said startCold (its warmup cannot be
  // scheduled): with --on-timeout StartCold the pod goes cold now.
  std::string start_cold_reason;
  std::optional<core::GateQuarantine> found;
  std::string validation_failure;
  std::int64_t last_log = start - o.log_every_s * 1000;
  for (int attempt = 0;; ++attempt) {
    if (deps.resolver != nullptr) {
      auto ans = deps.resolver->Resolve(o.ns, o.kernelcache, o.node);
      if (!ans.ok()) {
        reason = "operator resolve endpoint: " + ans.status().ToString();
      } else {
        state = ans->state;
        reason = ans->message.empty() ? "state " + std::string(core::ResolveStateName(ans->state))
                                      : ans->message;
        start_cold_reason.clear();
        if (ans->start_cold) {
          start_cold_reason = ans->reason.empty()
                                  ? std::string(core::gate_reason::kWarmupUnschedulable)
                                  : ans->reason;
        }
        if (ans->final) {
          final_reason =
              ans->reason.empty() ? std::string(core::gate_reason::kInvalidSpec) : ans->reason;
        }
        if (core::IsFingerprintId(ans->fingerprint)) {
          if (!o.fingerprint.empty() && ans->fingerprint != o.fingerprint) {
            return FailedPreconditionError("the operator resolves node " + o.node +
                                           " to fingerprint " + ans->fingerprint +
                                           " but --fingerprint is " + o.fingerprint);
          }
          fp = ans->fingerprint;
          node = ans->node;
          expected_digest = ans->manifest_digest;
        }
        if (!cross_checked && !fp.empty() && !ans->final) {
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
        if (ans->state == core::ResolveState::kFailed) failed = true;
      }
    }
    if (!final_reason.empty()) break;
    const std::int64_t polled = clock.Now();
    // READY absent: not published yet. READY garbage, a special file, or
    // naming a manifest that does not parse: corruption, refused below at
    // once (TryUse quarantines and reports it). A well-formed READY whose
    // digest is not the operator's: a short grace first.
    const ReadyState ready = fp.empty() ? ReadyState{} : ReadReady(o.root, fp);
    bool ready_file = ready.kind != ReadyState::kAbsent;
    if (!fp.empty() && !ready_file && state == core::ResolveState::kReady) {
      reason = "the operator reports fingerprint " + fp + " Ready but " +
               core::Layout(o.root).Ready(fp).string() +
               " is missing: is the cache volume mounted at --root?";
    }
    if (ready.kind == ReadyState::kDigest && !expected_digest.empty()) {
      // A READY the operator has not recorded: a re-warm may have just
      // sealed it (the operator records the digest moments later), or
      // someone rewrote the cache. Wait out a short grace before refusing.
      const std::string& on_disk = ready.digest;
      if (on_disk != expected_digest) {
        if (digest_mismatch_since < 0) digest_mismatch_since = polled;
        if (polled - digest_mismatch_since < o.digest_grace_s * 1000) {
          reason = "READY of fingerprint " + fp + " holds digest " + on_disk.substr(0, 12) +
                   "..., the operator recorded " + expected_digest.substr(0, 12) +
                   "...; waiting up to " + std::to_string(o.digest_grace_s) +
                   "s for the operator to catch up before refusing it";
          ready_file = false;
        }
      } else {
        digest_mismatch_since = -1;
      }
    }
    if (ready_file) {
      std::string why;
      std::string digest;
      auto target = TryUse(o, deps, fp, node, expected_digest, &why, &found, &digest, clock);
      if (target.ok()) {
        Status s = MkdirAll(o.view.parent_path());
        if (s.ok()) s = ReplaceSymlink(*target, o.view);
        if (!s.ok()) return InternalError("cannot build the view: " + s.message());
        WaitResult r{core::GateOutcome::kWarm, fp,
                     "validated up to " + std::string(core::LevelName(o.verify)), *target,
                     clock.Now() - start};
        rep->outcome = core::GateOutcome::kWarm;
        rep->reason = std::string(core::gate_reason::kValidated);
        rep->fingerprint = fp;
        rep->manifest_digest = digest;
        rep->message = r.reason;
        rep->target = target->string();
        rep->waited_ms = r.waited_ms;
        return r;
      }
      reason = why.empty() ? target.status().message() : why;
      validation_failure = reason;
      clock.Log(reason);
      if (found) break;  // the cache is bad: say so now, do not wait out the timeout
    }
    // Nothing usable on the volume and the warmup cannot run now: a
    // StartCold pod starts cold at once; a Fail pod keeps waiting (a GPU may
    // free up, or the warmup's priority preempt one).
    if (!start_cold_reason.empty() && o.start_cold_on_timeout) break;
    const std::int64_t now = clock.Now();
    if (failed || now >= deadline) break;
    if (now - last_log >= o.log_every_s * 1000) {
      std::string line = "waiting " + HumanDuration(now - start) + " for ";
      line += fp.empty() ? std::string("this node's fingerprint") : "fingerprint " + fp;
      line += " (" + std::string(core::ResolveStateName(state)) + "): ";
      line += reason;
      clock.Log(line);
      last_log = now;
    }
    clock.Sleep(std::min(NextPollDelayMs(attempt, o.poll_initial_ms, o.poll_max_ms),
                         std::max<std::int64_t>(1, deadline - now)));
  }
  const std::int64_t waited = clock.Now() - start;
  const std::string what =
      fp.empty() ? std::string("this node's fingerprint") : "fingerprint " + fp;
  std::string why;
  Status fail;
  if (!final_reason.empty()) {
    why = "the operator says this pod gets no cache (" + final_reason + "): " + reason;
    fail = NotFoundError(why);
    rep->reason = final_reason;
  } else if (found) {
    why = reason +
          "; the operator is told through this container's termination message and "
          "re-warms it";
    fail = DataLossError(why);
    rep->reason = std::string(core::gate_reason::kQuarantined);
    rep->quarantined.push_back(*found);
  } else if (!start_cold_reason.empty() && o.start_cold_on_timeout) {
    why = "the operator says the warmup of " + what + " cannot run now (" + start_cold_reason +
          "): " + reason;
    fail = UnavailableError(why);
    rep->reason = start_cold_reason;
    clock.Log("not waiting: " + why);
  } else {
    why = (failed ? "warmup failed" : "timed out after " + HumanDuration(waited)) +
          " waiting for " + what + ": " + reason;
    if (!validation_failure.empty() && validation_failure != reason) {
      why += " (earlier: " + validation_failure + ")";
    }
    fail = DeadlineExceededError(why);
    rep->reason =
        std::string(failed ? core::gate_reason::kWarmupFailed : core::gate_reason::kTimeout);
  }
  rep->fingerprint = fp;
  rep->waited_ms = waited;
  if (!o.start_cold_on_timeout) {
    rep->outcome = core::GateOutcome::kFailed;
    rep->message = why;
    return fail;
  }
  KC_ASSIGN_OR_RETURN(fs::path cold, ColdView(o));
  rep->outcome = core::GateOutcome::kCold;
  rep->message = why + "; starting cold with an empty cache";
  rep->target = cold.string();
  return WaitResult{core::GateOutcome::kCold, fp, rep->message, cold, waited};
}

}  // namespace

StatusOr<WaitResult> Wait(const WaitOptions& o, const WaitDeps& deps, core::GateReport* report) {
  core::GateReport rep;
  rep.view = o.view.string();
  auto r = WaitInner(o, deps, &rep);
  if (rep.message.empty()) {  // an error before any outcome (each outcome says why)
    rep.outcome = core::GateOutcome::kFailed;
    rep.reason = std::string(r.ok() || r.status().code() != StatusCode::kFailedPrecondition
                                 ? core::gate_reason::kError
                                 : core::gate_reason::kMismatch);
    rep.fingerprint = o.fingerprint;
    rep.message = r.ok() ? "" : r.status().message();
  }
  if (report != nullptr) *report = std::move(rep);
  return r;
}

}  // namespace kc::initwarm
