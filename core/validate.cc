#include "core/validate.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "base/numbers.h"
#include "core/enum_name.h"

namespace kc::core {

using json = nlohmann::json;

std::string_view LevelName(Level l) {
  switch (l) {
    case Level::kManifest:
      return "Manifest";
    case Level::kFingerprint:
      return "Fingerprint";
    case Level::kChecksums:
      return "Checksums";
    case Level::kTargetArch:
      return "TargetArch";
    case Level::kLoadTest:
      return "LoadTest";
  }
  return "?";
}

StatusOr<Level> ParseLevel(std::string_view name) {
  static constexpr std::array kAll = {Level::kManifest, Level::kFingerprint, Level::kChecksums,
                                      Level::kTargetArch, Level::kLoadTest};
  auto lower = [](std::string_view v) {
    std::string out;
    for (char c : v) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    return out;
  };
  for (Level l : kAll) {
    if (lower(LevelName(l)) == lower(name)) return l;
  }
  return ParseEnumName<Level>(name, kAll, LevelName);  // no exact match either: the error
}

std::string Finding::ToString() const {
  std::string s(LevelName(level));
  s += ": ";
  if (!file.empty()) s += file + ": ";
  return s + reason;
}

namespace {

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Finding> CheckExpectedDigest(std::string_view ready, std::string_view expected) {
  ready = TrimRight(ready);
  if (expected.empty() || ready == expected) return std::nullopt;
  if (!IsSha256Hex(ready)) {
    return Finding{Level::kManifest, std::string(kReadyFileName),
                   "does not hold a sha256 (64 hex digits)"};
  }
  return Finding{Level::kManifest, std::string(kReadyFileName),
                 "manifest digest " + std::string(ready) +
                     " differs from the one the operator recorded when it was sealed (" +
                     std::string(expected) + "): the cache was changed after sealing"};
}

StatusOr<Manifest> CheckReadyAndManifest(std::string_view ready, std::string_view manifest_bytes,
                                         Finding* finding) {
  auto fail = [&](std::string file, std::string why) {
    *finding = {Level::kManifest, std::move(file), std::move(why)};
    return DataLossError(finding->ToString());
  };
  ready = TrimRight(ready);
  if (!IsSha256Hex(ready)) return fail("READY", "does not hold a sha256 (64 hex digits)");
  std::string digest = Sha256Hex(manifest_bytes);
  if (digest != ready) {
    return fail("READY", "names manifest digest " + std::string(ready) +
                             " but manifest.json hashes to " + digest +
                             " (manifest changed after sealing)");
  }
  auto m = ParseManifest(manifest_bytes);
  if (!m.ok()) return fail("manifest.json", m.status().message());
  return m;
}

std::optional<Finding> CheckFingerprint(const Manifest& m, std::string_view expected_id,
                                        const NodeFacts* node) {
  if (!expected_id.empty() && m.fingerprint_id != expected_id) {
    return Finding{Level::kFingerprint, "manifest.json",
                   "cache is for fingerprint " + m.fingerprint_id + ", this pod needs " +
                       std::string(expected_id)};
  }
  if (node != nullptr && m.node && !(*m.node == *node)) {
    return Finding{Level::kFingerprint, "manifest.json",
                   "cache was built on " + NodeFactsToJson(*m.node) + ", this node is " +
                       NodeFactsToJson(*node)};
  }
  return std::nullopt;
}

std::optional<Finding> CompareWithDisk(const Manifest& m,
                                       const std::vector<ObservedEntry>& observed) {
  // Merge by path: manifest files+links (sorted) against observed (sorted).
  struct Want {
    std::string_view path;
    const ManifestFile* file;
    const ManifestLink* link;
  };
  std::vector<Want> want;
  want.reserve(m.files.size() + m.links.size());
  for (const auto& f : m.files) want.push_back({f.path, &f, nullptr});
  for (const auto& l : m.links) want.push_back({l.path, nullptr, &l});
  std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) { return a.path < b.path; });
  auto bad = [](std::string_view file, std::string why) {
    return Finding{Level::kChecksums, std::string(file), std::move(why)};
  };
  size_t i = 0;
  size_t j = 0;
  while (i < want.size() || j < observed.size()) {
    if (j == observed.size() || (i < want.size() && want[i].path < observed[j].path)) {
      return bad(want[i].path, "listed in the manifest but missing on disk");
    }
    if (i == want.size() || observed[j].path < want[i].path) {
      return bad(observed[j].path,
                 "on disk but not in the manifest (staging leftover or written after sealing)");
    }
    const Want& w = want[i];
    const ObservedEntry& o = observed[j];
    if (w.file != nullptr) {
      if (o.is_link) return bad(o.path, "is a symlink; the manifest lists a file");
      if (o.size != w.file->size) {
        return bad(o.path, "size " + std::to_string(o.size) + " bytes, manifest says " +
                               std::to_string(w.file->size) +
                               (o.size < w.file->size ? " (truncated)" : ""));
      }
      if (!o.sha256.empty() && o.sha256 != w.file->sha256) {
        return bad(o.path, "sha256 mismatch: manifest " + w.file->sha256 + ", disk " + o.sha256 +
                               " (content changed or corrupt)");
      }
    } else {
      if (!o.is_link) return bad(o.path, "is a file; the manifest lists a symlink");
      if (o.link_target != w.link->target) {
        return bad(o.path, "symlink points to \"" + o.link_target + "\", manifest says \"" +
                               w.link->target + "\"");
      }
    }
    ++i;
    ++j;
  }
  return std::nullopt;
}

std::optional<Finding> CheckListedOnDisk(const Manifest& m,
                                         const std::vector<ObservedEntry>& observed) {
  std::set<std::string_view> listed;
  for (const auto& f : m.files) listed.insert(f.path);
  for (const auto& l : m.links) listed.insert(l.path);
  std::vector<ObservedEntry> mine;
  for (const auto& o : observed) {
    if (listed.count(o.path) > 0) mine.push_back({o.path, o.is_link, o.size, "", o.link_target});
  }
  auto bad = CompareWithDisk(m, mine);
  if (bad) bad->level = Level::kManifest;
  return bad;
}

bool IsTritonGroupFile(std::string_view rel) {
  if (!rel.starts_with("triton/") || !rel.ends_with(".json")) return false;
  auto slash = rel.rfind('/');
  return rel.substr(slash + 1).starts_with("__grp__");
}

bool IsTritonMetadataFile(std::string_view rel) {
  return rel.starts_with("triton/") && rel.ends_with(".json") && !IsTritonGroupFile(rel);
}

namespace {
// "child k.cubin -> /var/run/.../k.cubin <why>"
std::string ChildProblem(const std::string& name, const std::string& path, const std::string& why) {
  std::string s = "child ";
  s += name;
  if (!path.empty()) {
    s += " -> ";
    s += path;
  }
  s += ' ';
  s += why;
  return s;
}
}  // namespace

std::optional<Finding> CheckTritonGroup(std::string_view rel, std::string_view text,
                                        std::string_view view_prefix,
                                        const std::set<std::string, std::less<>>& listed) {
  auto bad = [&](std::string why) {
    return Finding{Level::kChecksums, std::string(rel), std::move(why)};
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("Triton group file is not a JSON object");
  auto it = j.find("child_paths");
  if (it == j.end() || !it->is_object()) return bad("Triton group file has no child_paths object");
  std::string prefix(view_prefix);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  prefix += "/";
  for (const auto& [name, v] : it->items()) {
    if (!v.is_string()) return bad(ChildProblem(name, "", "is not a string"));
    std::string p = v.get<std::string>();
    if (!p.starts_with(prefix)) {
      return bad(ChildProblem(name, p,
                              "is outside the cache view " + std::string(view_prefix) +
                                  " (the cache was written at another path)"));
    }
    std::string inside = p.substr(prefix.size());
    if (!CheckRelativePath(inside).ok()) {
      return bad(ChildProblem(name, p, "does not stay inside the cache"));
    }
    if (listed.find(inside) == listed.end()) {
      return bad(ChildProblem(name, p, "does not exist in this cache"));
    }
  }
  return std::nullopt;
}

StatusOr<int> ArchFromComputeCapability(std::string_view cc) {
  auto dot = cc.find('.');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 3 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string_view::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1))) {
    return InvalidArgumentError("compute capability \"" + std::string(cc) +
                                "\" is malformed: want major.minor, e.g. 9.0");
  }
  return std::stoi(std::string(cc.substr(0, dot))) * 10 +
         std::stoi(std::string(cc.substr(dot + 1)));
}

std::optional<Finding> CheckTritonTargetArch(std::string_view rel, std::string_view text,
                                             int want_arch) {
  auto bad = [&](std::string why) {
    return Finding{Level::kTargetArch, std::string(rel), std::move(why)};
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return bad("Triton metadata is not valid JSON");
  if (!j.is_object()) return std::nullopt;
  auto t = j.find("target");
  if (t == j.end() || !t->is_object()) return std::nullopt;
  if (t->contains("backend") && (*t)["backend"] != "cuda") return std::nullopt;
  auto a = t->find("arch");
  if (a == t->end()) return bad("Triton metadata target has no arch");
  int got = -1;
  if (a->is_number_unsigned()) {
    if (a->get<uint64_t>() <= 100000) got = static_cast<int>(a->get<uint64_t>());
  } else if (a->is_number_integer()) {
    if (a->get<int64_t>() >= 0 && a->get<int64_t>() <= 100000) got = a->get<int>();
  } else if (a->is_string()) {
    std::string s = a->get<std::string>();
    if (s.starts_with("sm_")) s = s.substr(3);
    while (!s.empty() && !std::isdigit(static_cast<unsigned char>(s.back()))) s.pop_back();
    if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      // std::stoi threw out_of_range on "sm_99999999999" (a hostile file).
      if (auto v = ParseInt64(s, "target.arch", 0, 100000); v.ok()) got = static_cast<int>(*v);
    }
  }
  if (got < 0) return bad("Triton metadata target.arch " + a->dump() + " is not a CUDA arch");
  if (got != want_arch) {
    return bad("kernel compiled for target.arch " + std::to_string(got) + ", this node is " +
               std::to_string(want_arch) + " (cache from another GPU generation)");
  }
  return std::nullopt;
}

}  // namespace kc::core
