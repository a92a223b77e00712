#include "initwarm/gate/wait.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <thread>

#include "core/manifest.h"
#include "core/security_context.h"
#include "initwarm/cache/copy_cache.h"
#include "initwarm/cache/layered_view.h"
#include "initwarm/cache/quarantine_rule.h"
#include "initwarm/cache/ready_state.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/parallel.h"
#include "initwarm/fs/safe_file.h"
#include "initwarm/gate/wait_loop.h"
#include "initwarm/misses/misses.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

std::int64_t NextPollDelayMs(int attempt, std::int64_t initial_ms, std::int64_t max_ms) {
  std::int64_t d = std::max<std::int64_t>(1, initial_ms);
  for (int i = 0; i < attempt && d < max_ms; ++i) d *= 2;
  return std::min(d, max_ms);
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

// v1/<fp> beneath the trusted --root, no symlink followed.
StatusOr<SafeDir> OpenPublished(const fs::path& root, const std::string& fp) {
  KC_ASSIGN_OR_RETURN(SafeDir dir, SafeDir::OpenTrusted(root));
  return dir.Dir(std::string(core::kLayoutVersionDir) + "/" + fp);
}

// READY's digest for the gate report: a sha256, or "" (absent, garbage).
std::string ReadyDigestOf(const fs::path& root, const std::string& fp,
                          const std::string& expected) {
  ReadyState st = ReadReady(root, fp, expected);
  return st.digest;
}

// One try to use the READY cache of the loop's fingerprint: what it needs,
// and what it found.
struct Attempt {
  const WaitOptions& o;
  const WaitDeps& deps;
  const Clock& clock;
  const WaitLoop& w;
  std::string reason;                         // why it failed validation
  std::optional<core::GateQuarantine> found;  // the failed validation (quarantined where allowed)
  std::string digest;                         // the manifest digest of the cache used
};

VerifyOptions AttemptVerifyOptions(const Attempt& a) {
  VerifyOptions vo;
  vo.dir = core::Layout(a.o.root).Published(a.w.fp);
  vo.anchor = a.o.root;  // v1/<fp> is opened beneath --root, no symlink followed
  // Level 2 always: the manifest's fingerprint must be this node's, also
  // under --verify Manifest (docs/cache-layout.md).
  vo.level = std::max(a.o.verify, core::Level::kFingerprint);
  vo.expected_fingerprint = a.w.fp;
  vo.expected_digest = a.w.expected_digest;  // checked first, before the manifest is read
  vo.node = a.w.node;
  vo.view_prefix = a.o.view_prefix;
  vo.threads = a.o.threads;
  vo.load_cubin = a.deps.load_cubin;
  vo.check_packages = a.deps.check_packages;
  return vo;
}

// A failed validation: the reason, the quarantine entry, and the cache
// moved aside where allowed. NotFound when READY went away meanwhile.
Status Reject(Attempt* a, const VerifyReport& r) {
  const std::string& fp = a->w.fp;
  const core::Layout layout(a->o.root);
  a->reason = "cache for fingerprint " + fp + " failed validation: " + r.finding.ToString();
  core::GateQuarantine q;
  q.fingerprint = fp;
  q.expected_digest = a->w.expected_digest;
  q.found_digest = ReadyDigestOf(a->o.root, fp, a->w.expected_digest);
  q.level = std::string(core::LevelName(r.finding.level));
  q.file = r.finding.file;
  q.reason = r.finding.reason;
  const QuarantineFacts facts{
      .published_dir = true,
      .asked = a->o.quarantine,
      .ready_absent = r.finding.file == core::kReadyFileName &&
                      ReadReady(a->o.root, fp, a->w.expected_digest).kind == ReadyState::kAbsent,
      .version_dir_real = IsRealDirectory(layout.VersionDir())};
  const QuarantineDecision decision = DecideQuarantine(facts);
  if (decision == QuarantineDecision::kStillPublishing) {
    return NotFoundError(a->reason);  // READY went away (a re-seal moving it): poll on
  }
  if (decision == QuarantineDecision::kQuarantine) {
    auto moved = Quarantine(layout, fp, layout.Published(fp), r.finding);
    if (moved.ok()) {
      q.moved_to = moved->string();
      a->reason += " (quarantined to " + moved->string() + ")";
    } else {
      a->reason += " (not quarantined: " + moved.status().message() + ")";
    }
  }
  a->found = q;
  return DataLossError(a->reason);
}

// Copy mode: validate the manifest on the volume, copy, then validate the
// copy.
StatusOr<fs::path> UseCopy(Attempt* a, VerifyOptions vo) {
  const std::string& fp = a->w.fp;
  VerifyOptions first = vo;
  first.level = core::Level::kFingerprint;
  VerifyReport r = VerifyCache(first);
  if (!r.ok) return Reject(a, r);
  fs::path copy = LocalDir(a->o) / ("copy-" + fp + "-" + RandomHex());
  auto src = OpenPublished(a->o.root, fp);
  Status s = src.status();
  if (src.ok()) s = CopyCache(*src, copy, r.manifest, a->o.threads);
  if (!s.ok()) {
    (void)RemoveTree(copy);
    // What the volume holds was refused (not a regular file with one name,
    // not its listed size): corruption, like a failed validation.
    if (s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kDataLoss) {
      VerifyReport refused = r;
      refused.ok = false;
      refused.finding = core::Finding{core::Level::kManifest, "", s.message()};
      return Reject(a, refused);
    }
    return s;
  }
  vo.dir = copy;
  vo.anchor.clear();  // the pod's own copy
  r = VerifyCache(vo);
  if (!r.ok) {
    (void)RemoveTree(copy);
    return Reject(a, r);
  }
  for (const auto& n : r.notes) a->clock.Log("note: " + n);
  a->digest = r.manifest_digest;
  return copy;
}

// Shared mode: validate the cache on the volume, then build the layered
// tree of links into it.
StatusOr<fs::path> UseShared(Attempt* a, const VerifyOptions& vo) {
  VerifyReport r = VerifyCache(vo);
  if (!r.ok) return Reject(a, r);
  for (const auto& n : r.notes) a->clock.Log("note: " + n);
  if (a->o.mode == core::ConsumeMode::kSharedReadWrite) {
    a->clock.Log(
        "warning: --mode SharedReadWrite is deprecated and behaves as Shared: the "
        "published cache is never written; new entries land in the pod's local view");
  }
  a->digest = r.manifest_digest;
  return BuildLayeredView(vo.dir, r.manifest, LocalDir(a->o), a->w.fp);
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

// The resolve step: one answer from the operator, and the one cross-check
// with the local probe.
Status ResolveStep(const WaitOptions& o, const WaitDeps& deps, const Clock& clock, WaitLoop* w) {
  if (deps.resolver == nullptr) return OkStatus();
  auto ans = deps.resolver->Resolve(o.ns, o.kernelcache, o.node);
  KC_RETURN_IF_ERROR(ApplyAnswer(o, ans, w));
  if (!ans.ok() || !NeedsCrossCheck(*w, *ans)) return OkStatus();
  std::string note;
  KC_RETURN_IF_ERROR(CrossCheck(o, *ans, deps.prober->Probe(), w, &note));
  if (!note.empty()) clock.Log(note);
  return OkStatus();
}

// A cache that passed validation: what the view points at, and its
// manifest digest.
struct Validated {
  fs::path target;
  std::string digest;
};

// The validate step: the cache when it passed; otherwise the loop records
// why (and the quarantine when it was refused).
std::optional<Validated> ValidateStep(const WaitOptions& o, const WaitDeps& deps,
                                      const Clock& clock, WaitLoop* w) {
  Attempt a{o, deps, clock, *w, "", std::nullopt, ""};
  const VerifyOptions vo = AttemptVerifyOptions(a);
  auto used = o.mode == core::ConsumeMode::kCopy ? UseCopy(&a, vo) : UseShared(&a, vo);
  if (used.ok()) return Validated{*used, a.digest};
  if (a.found) w->found = a.found;
  w->reason = a.reason.empty() ? used.status().message() : a.reason;
  w->validation_failure = w->reason;
  clock.Log(w->reason);
  return std::nullopt;
}

// Points the view at a validated cache.
StatusOr<WaitResult> BuildWarmView(const WaitOptions& o, const WaitLoop& w, const Validated& v,
                                   const Clock& clock, core::GateReport* rep) {
  Status s = MkdirAll(o.view.parent_path());
  if (s.ok()) s = ReplaceSymlink(v.target, o.view);
  if (!s.ok()) return InternalError("cannot build the view: " + s.message());
  return WarmResult(o, w, v.target, v.digest, clock.Now(), rep);
}

// Ends a wait without a cache: the error under Fail, the cold view under
// StartCold.
StatusOr<WaitResult> EndWithoutCache(const WaitOptions& o, const WaitLoop& w, const Clock& clock,
                                     core::GateReport* rep) {
  const std::int64_t waited = clock.Now() - w.start;
  WaitEnd end = ConcludeWithoutCache(o, w, waited);
  const std::string why = end.status.message();
  rep->reason = end.reason;
  if (w.found && w.final_reason.empty()) rep->quarantined.push_back(*w.found);
  if (end.start_cold_now) clock.Log("not waiting: " + why);
  rep->fingerprint = w.fp;
  rep->waited_ms = waited;
  if (!o.start_cold_on_timeout) {
    rep->outcome = core::GateOutcome::kFailed;
    rep->message = why;
    return end.status;
  }
  KC_ASSIGN_OR_RETURN(fs::path cold, ColdView(o));
  rep->outcome = core::GateOutcome::kCold;
  rep->message = why + "; starting cold with an empty cache";
  rep->target = cold.string();
  return WaitResult{core::GateOutcome::kCold, w.fp, rep->message, cold, waited};
}

// A gate run again in the same pod (its sandbox was recreated; the emptyDir
// kept the earlier view): one line per runtime miss of the earlier view,
// what the pod's processes compiled after the earlier gate, before this run
// replaces that view. Nothing when there is no earlier view or it cannot be
// read.
void LogEarlierMisses(const WaitOptions& o, const Clock& clock) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(o.view, ec))) return;
  auto misses = ViewMisses(o.view);
  if (!misses.ok()) return;
  for (const auto& m : *misses) clock.Log("before this run the pod compiled: " + core::MissLine(m));
}

StatusOr<WaitResult> WaitInner(const WaitOptions& o, const WaitDeps& deps, core::GateReport* rep) {
  Clock clock{deps};
  LogEarlierMisses(o, clock);
  if (deps.resolver == nullptr && !core::IsFingerprintId(o.fingerprint)) {
    return InvalidArgumentError(
        "no way to know this pod's fingerprint: pass --resolve-url (with --namespace, "
        "--kernelcache, --node) or --fingerprint");
  }
  WaitLoop w = StartWait(o, deps.prober != nullptr, clock.Now());
  for (int attempt = 0;; ++attempt) {
    KC_RETURN_IF_ERROR(ResolveStep(o, deps, clock, &w));
    if (!w.final_reason.empty()) break;
    const std::int64_t polled = clock.Now();
    const ReadyState ready =
        w.fp.empty() ? ReadyState{} : ReadReady(o.root, w.fp, w.expected_digest);
    if (CheckReady(o, ready, polled, &w)) {
      if (auto v = ValidateStep(o, deps, clock, &w)) return BuildWarmView(o, w, *v, clock, rep);
    }
    const std::int64_t now = clock.Now();
    if (Decide(o, w, now) == WaitNext::kEnd) break;
    if (auto line = ProgressLine(o, now, &w)) clock.Log(*line);
    clock.Sleep(PollDelayMs(o, attempt, w, now));
  }
  return EndWithoutCache(o, w, clock, rep);
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
