#include "core/harvest.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/utf8.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

Status Bad(const std::string& field, std::string_view want) {
  return InvalidArgumentError("harvest accept list: " + (field.empty() ? "" : field + " ") +
                              std::string(want));
}

StatusOr<HarvestFile> ParseFile(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "must be an object");
  HarvestFile f;
  auto path = j.find("path");
  if (path == j.end() || !path->is_string()) return Bad(where + ".path", "must be a string");
  f.path = path->get<std::string>();
  if (Status s = CheckHarvestPath(f.path); !s.ok()) return Bad(where + ".path", s.message());
  auto size = j.find("size");
  if (size == j.end() || !size->is_number_unsigned()) {
    return Bad(where + ".size", "must be an integer >= 0");
  }
  f.size = size->get<std::uint64_t>();
  auto sum = j.find("sha256");
  if (sum == j.end() || !sum->is_string() || !IsSha256Hex(sum->get<std::string>())) {
    return Bad(where + ".sha256", "must be 64 lower-case hex digits");
  }
  f.sha256 = sum->get<std::string>();
  return f;
}

}  // namespace

std::string_view HarvestModeName(HarvestMode m) {
  switch (m) {
    case HarvestMode::kReport:
      return "Report";
    case HarvestMode::kMerge:
      return "Merge";
  }
  return "Report";
}

StatusOr<HarvestMode> ParseHarvestMode(std::string_view name) {
  for (HarvestMode m : kHarvestModes) {
    if (HarvestModeName(m) == name) return m;
  }
  return InvalidArgumentError("\"" + TruncateUtf8(name, 64) +
                              "\" is not a harvest mode (Report or Merge)");
}

Status CheckHarvestPath(std::string_view rel) {
  KC_RETURN_IF_ERROR(CheckRelativePath(rel));
  const std::size_t slash = rel.find('/');
  if (slash == std::string_view::npos) {
    return InvalidArgumentError("\"" + TruncateUtf8(rel, 256) +
                                "\" is at the top of the cache; only files under a framework "
                                "directory are harvested");
  }
  if (rel.substr(0, slash) == "nv") {
    return InvalidArgumentError("\"" + TruncateUtf8(rel, 256) +
                                "\" is in the CUDA ComputeCache (nv/), which is updated in place "
                                "and never merged");
  }
  return OkStatus();
}

std::string HarvestEntryOf(std::string_view rel) {
  const std::size_t slash = rel.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(rel.substr(0, slash));
}

std::string HarvestListToJson(std::vector<HarvestFile> files) {
  std::sort(files.begin(), files.end(),
            [](const HarvestFile& a, const HarvestFile& b) { return a.path < b.path; });
  Json out = Json::array();
  for (const HarvestFile& f : files) {
    out.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
  }
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<std::vector<HarvestFile>> ParseHarvestList(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    return InvalidArgumentError("harvest list: not a JSON array (starts \"" +
                                TruncateUtf8(text, 64) + "\")");
  }
  if (j.size() > static_cast<std::size_t>(kMaxHarvestFilesPerPod)) {
    return InvalidArgumentError("harvest list: more than " +
                                std::to_string(kMaxHarvestFilesPerPod) + " files");
  }
  std::vector<HarvestFile> files;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < j.size(); ++i) {
    auto f = ParseFile(j[i], "[" + std::to_string(i) + "]");
    if (!f.ok()) {
      return InvalidArgumentError("harvest list: " +
                                  f.status().message().substr(f.status().message().find(':') + 2));
    }
    if (!seen.insert(f->path).second) {
      return InvalidArgumentError("harvest list: [" + std::to_string(i) + "].path \"" + f->path +
                                  "\" is listed twice");
    }
    files.push_back(std::move(*f));
  }
  return files;
}

HarvestListRef RefOf(const std::vector<HarvestFile>& files) {
  HarvestListRef r;
  r.files = files.size();
  for (const auto& f : files) r.bytes += f.size;
  r.sha256 = Sha256Hex(HarvestListToJson(files));
  return r;
}

std::string HarvestAcceptToJson(const std::vector<HarvestPod>& pods) {
  Json out = Json::array();
  for (const HarvestPod& p : pods) {
    out.push_back({{"uid", p.uid},
                   {"files", p.list.files},
                   {"bytes", p.list.bytes},
                   {"sha256", p.list.sha256}});
  }
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<std::vector<HarvestPod>> ParseHarvestAccept(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    return InvalidArgumentError("harvest accept list: not a JSON array (starts \"" +
                                TruncateUtf8(text, 64) + "\")");
  }
  if (j.size() > kMaxHarvestPods) {
    return Bad("", "has more than " + std::to_string(kMaxHarvestPods) + " pods");
  }
  std::vector<HarvestPod> pods;
  std::set<std::string> uids;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string where = "[" + std::to_string(i) + "]";
    const Json& p = j[i];
    if (!p.is_object()) return Bad(where, "must be an object");
    HarvestPod pod;
    auto uid = p.find("uid");
    if (uid == p.end() || !uid->is_string() || !IsSafeUid(uid->get<std::string>())) {
      return Bad(where + ".uid", "must be a pod uid (1-128 of [A-Za-z0-9._-])");
    }
    pod.uid = uid->get<std::string>();
    if (!uids.insert(pod.uid).second) return Bad(where + ".uid", "is listed twice");
    for (auto [key, out] :
         {std::pair{"files", &pod.list.files}, std::pair{"bytes", &pod.list.bytes}}) {
      auto it = p.find(key);
      if (it == p.end() || !it->is_number_unsigned()) {
        return Bad(where + "." + key, "must be an integer >= 0");
      }
      *out = it->get<std::uint64_t>();
    }
    auto sum = p.find("sha256");
    if (sum == p.end() || !sum->is_string() || !IsSha256Hex(sum->get<std::string>())) {
      return Bad(where + ".sha256", "must be 64 lower-case hex digits");
    }
    pod.list.sha256 = sum->get<std::string>();
    pods.push_back(std::move(pod));
  }
  return pods;
}

MergePlan PlanMerge(const std::map<std::string, std::string>& base,
                    const std::vector<InboxFile>& inbox, const HarvestCaps& caps) {
  MergePlan plan;
  // Entries (pod, entry dir) with a file that cannot be taken.
  std::set<std::pair<std::string, std::string>> bad_entries;
  std::set<std::string> conflicting_entries;             // entry dirs with a conflict, any pod
  std::map<std::string, std::set<std::string>> offered;  // path -> sha256s offered
  std::set<std::string> conflicts;
  std::set<std::string> duplicates;
  for (const InboxFile& f : inbox) {
    const std::string entry = HarvestEntryOf(f.file.path);
    std::string why = f.problem;
    if (why.empty()) {
      if (Status s = CheckHarvestPath(f.file.path); !s.ok()) why = s.message();
    }
    if (!why.empty()) {
      plan.rejected.push_back(f.file.path + " (pod " + f.pod_uid + "): " + why);
      bad_entries.insert({f.pod_uid, entry});
      continue;
    }
    auto b = base.find(f.file.path);
    if (b != base.end()) {
      if (b->second == f.file.sha256) {
        duplicates.insert(f.file.path);
      } else {
        conflicts.insert(f.file.path);
        conflicting_entries.insert(entry);
      }
      continue;
    }
    offered[f.file.path].insert(f.file.sha256);
  }
  for (const auto& [path, sums] : offered) {
    if (sums.size() > 1) {
      conflicts.insert(path);
      conflicting_entries.insert(HarvestEntryOf(path));
    }
  }
  // Candidates: one per path, from a pod whose entry is whole and free of
  // conflicts; the first pod in input order wins a tie of equal bytes.
  std::map<std::string, InboxFile> chosen;
  for (const InboxFile& f : inbox) {
    const std::string entry = HarvestEntryOf(f.file.path);
    if (!f.problem.empty() || bad_entries.contains({f.pod_uid, entry}) ||
        conflicting_entries.contains(entry) || base.contains(f.file.path) ||
        !offered.contains(f.file.path)) {
      continue;
    }
    chosen.try_emplace(f.file.path, f);
  }
  // Whole entries, in path order, within the fingerprint's caps.
  std::map<std::string, std::vector<InboxFile>> by_entry;
  for (auto& [path, f] : chosen) by_entry[HarvestEntryOf(path)].push_back(std::move(f));
  std::int64_t files = 0;
  std::int64_t bytes = 0;
  for (auto& [entry, list] : by_entry) {
    std::int64_t entry_bytes = 0;
    for (const InboxFile& f : list) entry_bytes += static_cast<std::int64_t>(f.file.size);
    if (files + static_cast<std::int64_t>(list.size()) > caps.max_files_per_fingerprint ||
        bytes + entry_bytes > caps.max_bytes_per_fingerprint) {
      for (const InboxFile& f : list) {
        plan.rejected.push_back(f.file.path + " (pod " + f.pod_uid +
                                "): past the fingerprint's harvest caps (spec.harvest."
                                "maxFilesPerFingerprint / maxBytesPerFingerprint)");
      }
      continue;
    }
    files += static_cast<std::int64_t>(list.size());
    bytes += entry_bytes;
    for (InboxFile& f : list) plan.add.push_back(std::move(f));
  }
  std::sort(plan.add.begin(), plan.add.end(),
            [](const InboxFile& a, const InboxFile& b) { return a.file.path < b.file.path; });
  plan.conflicts.assign(conflicts.begin(), conflicts.end());
  plan.duplicates.assign(duplicates.begin(), duplicates.end());
  return plan;
}

}  // namespace kc::core
