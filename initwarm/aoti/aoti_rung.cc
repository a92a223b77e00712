#include "initwarm/aoti/aoti_rung.h"

namespace kc::initwarm {

AotiRungResult CheckAotiPackages(const std::filesystem::path& dir, const core::Manifest& m,
                                 const AotiCheckOptions& options) {
  AotiRungResult out;
  for (const core::ManifestFile& f : m.files) {
    if (!f.path.ends_with(".pt2")) continue;
    auto r = LoadAndRunAotiPackage((dir / f.path).string(), options);
    if (r.ok()) {
      ++out.checked;
      continue;
    }
    if (r.status().code() == StatusCode::kUnavailable) {
      out.notes.push_back("LoadTest: AOTInductor packages not checked: " + r.status().message());
      return out;
    }
    core::Finding finding;
    finding.level = core::Level::kLoadTest;
    finding.file = f.path;
    finding.reason = r.status().message();
    out.finding = std::move(finding);
    return out;
  }
  return out;
}

}  // namespace kc::initwarm
