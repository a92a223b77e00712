#include "core/layout.h"

#include <ctime>
#include <vector>

#include "base/utf8.h"
#include "core/fingerprint.h"

namespace kc::core {

std::filesystem::path Layout::Quarantine(std::string_view fp, std::string_view time_tag,
                                         std::string_view why) const {
  std::string name = std::string(fp) + "-" + std::string(time_tag);
  if (!why.empty()) name += "-" + std::string(why);
  return QuarantineRoot() / name;
}

StatusOr<SplitName> SplitFingerprintName(std::string_view name) {
  if (name.size() < 18 || name[16] != '-' || !IsFingerprintId(name.substr(0, 16))) {
    return InvalidArgumentError("directory name \"" + std::string(name) +
                                "\" is not <16-hex-fingerprint>-<suffix>");
  }
  return SplitName{std::string(name.substr(0, 16)), std::string(name.substr(17))};
}

bool IsSafeUid(std::string_view uid) {
  if (uid.empty() || uid.size() > 128 || uid == "." || uid == "..") return false;
  for (char c : uid) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckRelativePath(std::string_view rel) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("path \"" + std::string(rel) +
                                "\" is refused: " + std::string(why) +
                                "; cache paths must be relative and stay inside the cache");
  };
  if (rel.empty()) return bad("empty");
  if (rel.size() > 4096) return bad("longer than 4096 bytes");
  if (rel.front() == '/') return bad("absolute");
  if (rel.find('\0') != std::string_view::npos) return bad("contains NUL");
  if (rel.find('\\') != std::string_view::npos) return bad("contains a backslash");
  if (!IsValidUtf8(rel)) return bad("is not UTF-8 (manifest.json names every file in UTF-8)");
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    std::string_view comp = rel.substr(start, end - start);
    if (comp.empty()) return bad("has an empty component (\"//\" or trailing \"/\")");
    if (comp == ".") return bad("has a \".\" component");
    if (comp == "..") return bad("has a \"..\" component (path traversal)");
    start = end + 1;
  }
  return OkStatus();
}

bool IsWithin(const std::filesystem::path& dir, const std::filesystem::path& path) {
  auto d = dir.lexically_normal();
  auto p = path.lexically_normal();
  auto strip = [](const std::filesystem::path& x) {
    std::string s = x.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  std::string ds = strip(d);
  std::string ps = strip(p);
  if (ps == ds) return true;
  if (ds == "/") return !ps.empty() && ps.front() == '/';
  return ps.size() > ds.size() && ps.compare(0, ds.size(), ds) == 0 && ps[ds.size()] == '/';
}

Status CheckSymlinkTarget(std::string_view link_rel, std::string_view target,
                          std::string_view view_prefix) {
  KC_RETURN_IF_ERROR(CheckRelativePath(link_rel));
  auto refuse = [&](std::string_view why) {
    return InvalidArgumentError("symlink \"" + std::string(link_rel) + "\" -> \"" +
                                std::string(target) + "\" is refused: " + std::string(why) +
                                "; a cache must not point outside itself");
  };
  if (target.empty()) return refuse("empty target");
  if (!IsValidUtf8(target)) return refuse("target is not UTF-8 (manifest.json could not list it)");
  // A fixed, fake absolute root to resolve against lexically.
  const std::filesystem::path root = "/__kc_cache_root__";
  std::filesystem::path resolved;
  if (target.front() == '/') {
    std::filesystem::path view(view_prefix);
    if (view_prefix.empty() || !IsWithin(view, target)) return refuse("absolute target");
    resolved = root / std::filesystem::path(target).lexically_normal().lexically_relative(
                          view.lexically_normal());
  } else {
    resolved = (root / link_rel).parent_path() / target;
  }
  resolved = resolved.lexically_normal();
  if (!IsWithin(root, resolved)) return refuse("target leaves the cache");
  if (resolved.lexically_normal() == root) return refuse("target is the cache root");
  return OkStatus();
}

std::string TimeTag(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace kc::core
