#include "initwarm/cache/ready_state.h"

#include <cctype>

#include "core/layout.h"
#include "core/manifest.h"
#include "core/validate.h"
#include "initwarm/cache/verify.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

ReadyState ReadReady(const fs::path& root, const std::string& fp, const std::string& expected) {
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
  if (!expected.empty() && d != expected) {  // refused on its digest: the manifest stays unread
    st.kind = ReadyState::kDigest;
    return st;
  }
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

}  // namespace kc::initwarm
