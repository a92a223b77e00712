#include "initwarm/cache/verify.h"

#include <nlohmann/json.hpp>
#include <set>

#include "initwarm/aoti/aoti_rung.h"
#include "initwarm/cache/walk.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;
using core::Finding;
using core::Level;

namespace {

bool Run(const VerifyOptions& o, Level l) {
  return static_cast<int>(o.level) >= static_cast<int>(l);
}

std::optional<Finding> Ladder(const VerifyOptions& o, VerifyReport* r) {
  // 1. The directory itself, READY + manifest, then every listed entry's
  // type and size (and no special file anywhere).
  auto opened = SafeDir::OpenUnder(o.anchor, o.dir);
  if (!opened.ok()) return Finding{Level::kManifest, "", opened.status().message()};
  const SafeDir& dir = *opened;
  auto ready = dir.ReadFile(core::kReadyFileName, kMaxReadyBytes);
  if (!ready.ok()) {
    return Finding{Level::kManifest, "READY",
                   IsNotFound(ready.status()) ? "missing: the cache is not published (sealing "
                                                "did not finish)"
                                              : ready.status().message()};
  }
  if (auto bad = core::CheckExpectedDigest(*ready, o.expected_digest)) return bad;
  auto text = dir.ReadFile(core::kManifestFileName, kMaxManifestBytes);
  if (!text.ok()) return Finding{Level::kManifest, "manifest.json", text.status().message()};
  Finding f;
  auto m = core::CheckReadyAndManifest(*ready, *text, &f);
  if (!m.ok()) return f;
  r->manifest = *m;
  r->manifest_digest = core::Sha256Hex(*text);
  auto walk = WalkCache(dir);
  if (!walk.ok()) return Finding{Level::kManifest, "", walk.status().message()};
  std::vector<core::ObservedEntry> observed;
  for (const auto& w : walk->files) observed.push_back({w.path, false, w.size, "", ""});
  for (const auto& l : walk->links) observed.push_back({l.path, true, 0, "", l.target});
  std::sort(observed.begin(), observed.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  if (auto bad = core::CheckListedOnDisk(*m, observed)) return bad;
  r->passed = 1;
  if (!Run(o, Level::kFingerprint)) return std::nullopt;

  // 2. Fingerprint.
  if (o.expected_fingerprint.empty() && !o.node) {
    r->notes.emplace_back(
        "Fingerprint: no expected fingerprint or node facts given; checked "
        "the manifest against its own inputs only");
  }
  if (auto bad = core::CheckFingerprint(*m, o.expected_fingerprint, o.node ? &*o.node : nullptr)) {
    return bad;
  }
  r->passed = 2;
  if (!Run(o, Level::kChecksums)) return std::nullopt;

  // 3. Files, sizes, sha256, leftovers, symlinks, Triton groups.
  if (auto bad = core::CompareWithDisk(*m, observed)) return bad;
  std::vector<HashJob> jobs;
  std::vector<size_t> idx;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (observed[i].is_link) continue;
    jobs.push_back({observed[i].path, observed[i].size});
    idx.push_back(i);
  }
  HashOptions ho;
  ho.threads = o.threads;
  ho.dir = &dir;
  auto sums = HashFiles(jobs, ho);
  if (!sums.ok()) return Finding{Level::kChecksums, "", sums.status().message()};
  for (size_t k = 0; k < idx.size(); ++k) observed[idx[k]].sha256 = (*sums)[k];
  if (auto bad = core::CompareWithDisk(*m, observed)) return bad;
  std::set<std::string, std::less<>> listed;
  for (const auto& file : m->files) listed.insert(file.path);
  for (const auto& l : m->links) listed.insert(l.path);
  for (const auto& file : m->files) {
    if (!core::IsTritonGroupFile(file.path)) continue;
    auto g = dir.ReadFile(file.path, file.size, true);
    if (!g.ok()) return Finding{Level::kChecksums, file.path, g.status().message()};
    if (auto bad = core::CheckTritonGroup(file.path, *g, o.view_prefix, listed)) return bad;
  }
  r->passed = 3;
  if (!Run(o, Level::kTargetArch)) return std::nullopt;

  // 4. Triton target.arch.
  std::string cc = o.compute_capability;
  if (cc.empty() && o.node) cc = o.node->compute_capability;
  if (cc.empty() && m->node) {
    cc = m->node->compute_capability;
    r->notes.push_back(
        "TargetArch: node compute capability not given; compared with the "
        "manifest's own (" +
        cc + ")");
  }
  if (cc.empty()) {
    r->notes.emplace_back(
        "TargetArch: skipped, no compute capability known (pass --node-facts "
        "or --compute-capability)");
  } else {
    auto arch = core::ArchFromComputeCapability(cc);
    if (!arch.ok()) return Finding{Level::kTargetArch, "", arch.status().message()};
    for (const auto& file : m->files) {
      if (!core::IsTritonMetadataFile(file.path)) continue;
      auto t = dir.ReadFile(file.path, file.size, true);
      if (!t.ok()) return Finding{Level::kTargetArch, file.path, t.status().message()};
      if (auto bad = core::CheckTritonTargetArch(file.path, *t, *arch)) return bad;
      ++r->kernels;
    }
  }
  r->passed = 4;
  if (!Run(o, Level::kLoadTest)) return std::nullopt;

  // 5. Load every cubin.
  if (!o.load_cubin) {
    r->notes.emplace_back("LoadTest: skipped, no GPU visible");
  } else {
    for (const auto& file : m->files) {
      if (!file.path.ends_with(".cubin")) continue;
      auto image = dir.ReadFile(file.path, file.size, true);
      if (!image.ok()) return Finding{Level::kLoadTest, file.path, image.status().message()};
      Status s = o.load_cubin(*image, file.path);
      if (!s.ok()) return Finding{Level::kLoadTest, file.path, s.message()};
      ++r->cubins_loaded;
    }
  }
  // 5b. AOTInductor packages: loaded and run in a child process.
  if (o.check_packages) {
    if (auto bad = o.check_packages(o.dir, *m, &r->notes)) return bad;
  }
  r->passed = 5;
  return std::nullopt;
}

}  // namespace

VerifyReport VerifyCache(const VerifyOptions& o) {
  VerifyReport r;
  if (auto f = Ladder(o, &r)) {
    r.ok = false;
    r.finding = *f;
  } else {
    r.ok = true;
  }
  return r;
}

PackageCheckFn AotiPackageCheck() {
  return [](const fs::path& dir, const core::Manifest& m,
            std::vector<std::string>* notes) -> std::optional<core::Finding> {
    AotiRungResult a = CheckAotiPackages(dir, m);
    notes->insert(notes->end(), a.notes.begin(), a.notes.end());
    return a.finding;
  };
}

std::string VerifyReportJson(const VerifyReport& r) {
  nlohmann::json j = {{"ok", r.ok},
                      {"passed", r.passed},
                      {"fingerprint", r.manifest.fingerprint_id},
                      {"manifestDigest", r.manifest_digest},
                      {"files", r.manifest.total_files},
                      {"bytes", r.manifest.total_bytes},
                      {"kernels", r.kernels},
                      {"cubinsLoaded", r.cubins_loaded},
                      {"notes", r.notes}};
  if (!r.ok) {
    j["failure"] = {{"level", std::string(core::LevelName(r.finding.level))},
                    {"file", r.finding.file},
                    {"reason", r.finding.reason}};
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

StatusOr<fs::path> Quarantine(const core::Layout& layout, const std::string& fp,
                              const fs::path& dir, const Finding& why) {
  KC_RETURN_IF_ERROR(MkdirAll(layout.QuarantineRoot()));
  fs::path to = layout.Quarantine(fp, core::TimeTag(NowSeconds()));
  if (Exists(to)) to = layout.Quarantine(fp, core::TimeTag(NowSeconds()), RandomHex());
  KC_RETURN_IF_ERROR(Rename(dir, to));
  (void)FsyncPath(layout.QuarantineRoot());
  (void)FsyncPath(dir.parent_path());
  nlohmann::json j = {{"level", std::string(core::LevelName(why.level))},
                      {"file", why.file},
                      {"reason", why.reason},
                      {"at", core::Rfc3339(NowSeconds())},
                      {"from", dir.string()}};
  KC_RETURN_IF_ERROR(
      WriteNewFile(to / core::kReasonFileName,
                   why.ToString() + "\n" +
                       j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
  return to;
}

}  // namespace kc::initwarm
