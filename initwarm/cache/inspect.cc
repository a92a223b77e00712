#include "initwarm/cache/inspect.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/manifest.h"
#include "core/validate.h"
#include "initwarm/cache/walk.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

namespace {

std::string Framework(const std::string& path) {
  std::string top = path.substr(0, path.find('/'));
  for (auto f : core::kFrameworkDirs) {
    if (top == f) return top;
  }
  return "other";
}

void Count(CacheSummary* s, const std::string& path, std::uint64_t size) {
  ++s->files;
  s->bytes += size;
  ++s->by_framework[Framework(path)];
  if (core::IsTritonGroupFile(path)) ++s->triton_kernels;
}

CacheSummary Summarise(const fs::path& dir, std::string kind, std::int64_t now) {
  CacheSummary s;
  s.kind = std::move(kind);
  s.name = dir.filename().string();
  auto split = core::SplitFingerprintName(s.name);
  s.fingerprint = core::IsFingerprintId(s.name) ? s.name : (split.ok() ? split->fingerprint : "");
  s.ready = Exists(dir / core::kReadyFileName);
  s.age_s = now - MtimeSeconds(dir);
  // Volume content: every read through initwarm/fs/safe_file.h (no link followed, never
  // a FIFO, bounded). `dir` was listed as a real directory of v1/.
  auto opened = SafeDir::OpenTrusted(dir);
  if (!opened.ok()) {
    s.note = opened.status().message();
    return s;
  }
  const SafeDir& d = *opened;
  auto text = d.ReadFile(core::kManifestFileName, 64ull << 20);
  if (text.ok()) {
    auto m = core::ParseManifest(*text);
    if (m.ok()) {
      s.manifest_ok = true;
      for (const auto& f : m->files) Count(&s, f.path, f.size);
      s.frameworks = m->frameworks;
      s.created_at = m->created_at;
      if (auto t = core::ParseRfc3339(m->created_at); t.ok()) s.age_s = now - *t;
    } else {
      s.note = "manifest does not parse: " + m.status().message();
    }
  }
  if (!s.manifest_ok) {
    auto w = WalkCache(d);
    if (w.ok()) {
      for (const auto& f : w->files) Count(&s, f.path, f.size);
    } else if (s.note.empty()) {
      s.note = w.status().message();
    }
  }
  if (auto r = d.ReadFile(core::kReasonFileName, 1 << 16); r.ok()) {
    s.note = r->substr(0, r->find('\n'));
  }
  return s;
}

std::vector<fs::path> Dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!IsRealDirectory(dir)) return out;  // a link planted on the volume is not listed through
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (IsRealDirectory(e.path())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Bytes(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string Age(std::int64_t s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(s));
  } else if (s < 7200) {
    std::snprintf(buf, sizeof(buf), "%lldm", static_cast<long long>(s / 60));
  } else if (s < 172800) {
    std::snprintf(buf, sizeof(buf), "%lldh", static_cast<long long>(s / 3600));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd", static_cast<long long>(s / 86400));
  }
  return buf;
}

}  // namespace

StatusOr<std::vector<CacheSummary>> InspectVolume(const core::Layout& layout, std::int64_t now) {
  if (!IsRealDirectory(layout.VersionDir())) {
    return NotFoundError(layout.VersionDir().string() +
                         " does not exist: is --root the cache volume's mount path?");
  }
  std::vector<CacheSummary> out;
  for (const auto& d : Dirs(layout.VersionDir())) {
    if (core::IsFingerprintId(d.filename().string())) out.push_back(Summarise(d, "published", now));
  }
  for (const auto& d : Dirs(layout.StagingRoot())) out.push_back(Summarise(d, "staging", now));
  for (const auto& d : Dirs(layout.QuarantineRoot())) {
    out.push_back(Summarise(d, "quarantine", now));
  }
  return out;
}

std::string FormatSummaries(const std::vector<CacheSummary>& all) {
  std::ostringstream os;
  std::string section;
  for (const auto& s : all) {
    if (s.kind != section) {
      section = s.kind;
      os << (section == "published" ? "fingerprints" : section) << ":\n";
    }
    os << "  " << s.name;
    if (s.kind == "published") os << (s.ready ? "  READY" : "  NOT READY");
    os << "  " << s.files << " files, " << Bytes(s.bytes) << ", age " << Age(s.age_s);
    if (s.triton_kernels > 0) os << ", " << s.triton_kernels << " Triton kernels";
    os << "\n    by framework:";
    for (const auto& [k, v] : s.by_framework) os << " " << k << "=" << v;
    if (!s.frameworks.empty()) {
      os << "\n    versions:";
      for (const auto& [k, v] : s.frameworks) os << " " << k << "=" << v;
    }
    if (!s.created_at.empty()) os << "\n    created " << s.created_at;
    if (!s.note.empty()) os << "\n    note: " << s.note;
    os << "\n";
  }
  if (all.empty()) os << "no caches\n";
  return os.str();
}

std::string SummariesJson(const std::vector<CacheSummary>& all) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& s : all) {
    arr.push_back({{"kind", s.kind},
                   {"name", s.name},
                   {"fingerprint", s.fingerprint},
                   {"ready", s.ready},
                   {"manifestOk", s.manifest_ok},
                   {"files", s.files},
                   {"bytes", s.bytes},
                   {"byFramework", s.by_framework},
                   {"tritonKernels", s.triton_kernels},
                   {"frameworks", s.frameworks},
                   {"createdAt", s.created_at},
                   {"ageSeconds", s.age_s},
                   {"note", s.note}});
  }
  return arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kc::initwarm
