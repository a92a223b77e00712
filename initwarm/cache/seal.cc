#include "initwarm/cache/seal.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/layout.h"
#include "core/seal_report.h"
#include "core/security_context.h"
#include "initwarm/cache/lock.h"
#include "initwarm/cache/seal_phases.h"
#include "initwarm/cache/walk.h"
#include "initwarm/failpoint/failpoint.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/safe_file.h"

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

// The convergence record into the staging tree, before the walk: a file of
// the cache like any other. A warmup that made kernelcache/ something else
// than a directory is refused.
Status WriteConvergenceRecord(const fs::path& staging, const core::ConvergenceRecord& record) {
  const fs::path file = staging / core::kConvergenceRecordPath;
  const fs::path dir = file.parent_path();
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (!ec && st.type() != fs::file_type::directory) {
    return InvalidArgumentError("\"" + dir.filename().string() +
                                "\" in the staging directory is not a directory; the name is "
                                "reserved for KernelCache's own records");
  }
  if (ec) KC_RETURN_IF_ERROR(MkdirAll(dir));
  return WriteFileDurable(file, core::ConvergenceRecordToJson(record));
}

// Phases 1 to 7 (seal_phases.h), then the lock released.
StatusOr<SealResult> SealImpl(const SealOptions& o, fs::path* locked) {
  const std::int64_t t0 = NowMillis();
  SealResult r;
  KC_ASSIGN_OR_RETURN(SealPaths p, PlanSeal(o, &r));
  KC_RETURN_IF_ERROR(LockSeal(o, p, r.fingerprint, locked));
  if (o.convergence) {
    KC_RETURN_IF_ERROR(WriteConvergenceRecord(p.staging, *o.convergence));
    r.convergence = core::Summarize(*o.convergence);
  }
  KC_ASSIGN_OR_RETURN(SafeDir staged, SafeDir::OpenUnder(o.root, p.staging));
  KC_ASSIGN_OR_RETURN(WalkResult walk, WalkStaging(o, staged, p.staging));
  const std::int64_t t_walk = NowMillis();
  r.walk_ms = t_walk - t0;

  KC_ASSIGN_OR_RETURN(std::vector<std::string> sums, HashStaging(o, staged, p.staging, walk));
  if (o.expected) KC_RETURN_IF_ERROR(CheckStagedAsExpected(*o.expected, walk, sums));
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
  report.convergence = r.convergence;
  report.durations_ms = {{"walk", static_cast<double>(r.walk_ms)},
                         {"hash", static_cast<double>(r.hash_ms)},
                         {"publish", static_cast<double>(r.publish_ms)},
                         {"total", static_cast<double>(r.total_ms)}};
  return core::SealReportToJson(report);
}

std::string SealFailureJson(const std::string& fingerprint, const Status& s) {
  core::SealReport report;
  report.fingerprint = fingerprint;
  report.outcome = core::SealOutcome::kFailed;
  report.reason = std::string(StatusCodeName(s.code()));
  report.message = s.message();
  return core::SealReportToJson(report);
}

}  // namespace kc::initwarm
