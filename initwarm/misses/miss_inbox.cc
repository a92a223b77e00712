#include "initwarm/misses/miss_inbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "core/security_context.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/safe_file.h"

namespace kc::initwarm {

namespace fs = std::filesystem;

std::vector<NewEntry> DueForInbox(const std::vector<NewEntry>& entries, const InboxState& s,
                                  std::int64_t max_files, std::int64_t max_bytes) {
  // The new, harvestable files not copied yet, by entry (their directory).
  std::map<std::string, std::vector<const NewEntry*>> by_entry;
  for (const NewEntry& e : entries) {
    if (e.kind != NewEntryKind::kNew || s.copied_paths.contains(e.path)) continue;
    if (!core::CheckHarvestPath(e.path).ok()) continue;
    by_entry[core::HarvestEntryOf(e.path)].push_back(&e);
  }
  std::vector<NewEntry> due;
  std::int64_t files = static_cast<std::int64_t>(s.copied.size());
  std::int64_t bytes = s.copied_bytes;
  for (const auto& [entry, list] : by_entry) {
    // Whole entries only, once every file of it has settled: a Triton
    // kernel's group file is never copied without the files it names.
    bool settled = true;
    std::int64_t entry_bytes = 0;
    for (const NewEntry* e : list) {
      auto last = s.last_sizes.find(e->path);
      settled = settled && last != s.last_sizes.end() && last->second == e->size;
      entry_bytes += static_cast<std::int64_t>(e->size);
    }
    if (!settled) continue;
    if (files + static_cast<std::int64_t>(list.size()) > max_files ||
        bytes + entry_bytes > max_bytes) {
      continue;
    }
    files += static_cast<std::int64_t>(list.size());
    bytes += entry_bytes;
    for (const NewEntry* e : list) due.push_back(*e);
  }
  return due;
}

StatusOr<core::HarvestFile> CopyToInbox(const fs::path& tree, const NewEntry& e,
                                        const fs::path& dir) {
  const fs::path from = tree / e.path;
  // Through the safe reader from the tree down: a directory of the view
  // swapped for a symlink after the scan is refused, never followed out
  // of the view (the app writes the view, the watcher the inbox).
  KC_ASSIGN_OR_RETURN(SafeDir view, SafeDir::OpenTrusted(tree));
  KC_ASSIGN_OR_RETURN(UniqueFd in, view.OpenFile(e.path, /*single_link=*/true));
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) return ErrnoStatus(errno, "stat " + from.string());
  if (static_cast<std::uint64_t>(st.st_size) != e.size) {
    return UnavailableError(from.string() + " changed size since the scan; next pass");
  }
  const fs::path to = dir / e.path;
  fs::path tmp = to;
  tmp += ".tmp-" + RandomHex();
  auto sum = CopyHashed(in.get(), e.size, from.string(), tmp, core::kSealedFileMode);
  if (!sum.ok()) {
    ::unlink(tmp.c_str());
    return sum.status();
  }
  if (Status s = Rename(tmp, to); !s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return core::HarvestFile{e.path, e.size, *sum};
}

std::vector<std::string> UpdateInbox(const ViewScan& scan, const fs::path& dir,
                                     std::int64_t max_files, std::int64_t max_bytes,
                                     InboxState* s) {
  std::vector<std::string> lines;
  std::size_t copied_before = s->copied.size();
  std::set<std::string> failed_entries;
  for (const NewEntry& e : DueForInbox(scan.entries, *s, max_files, max_bytes)) {
    const std::string entry = core::HarvestEntryOf(e.path);
    if (failed_entries.contains(entry)) continue;
    auto f = CopyToInbox(scan.tree, e, dir);
    if (!f.ok()) {
      failed_entries.insert(entry);
      if (f.status().code() != StatusCode::kUnavailable) {
        lines.push_back("not harvested: " + e.path + ": " + f.status().message());
      }
      continue;
    }
    s->copied_paths.insert(f->path);
    s->copied_bytes += static_cast<std::int64_t>(f->size);
    lines.push_back("harvest: copied " + f->path + " (" + std::to_string(f->size) +
                    " bytes) into the inbox");
    s->copied.push_back(std::move(*f));
  }
  // The list, last: the harvest Job reads only what it names.
  if (s->copied.size() != copied_before) {
    if (Status w = WriteHarvestList(dir, s->copied); !w.ok()) {
      lines.push_back("not harvested: the inbox list could not be written: " + w.message());
    }
  }
  // What did not fit the caps, once each.
  for (const NewEntry& e : scan.entries) {
    if (e.kind != NewEntryKind::kNew || s->copied_paths.contains(e.path) ||
        s->skipped.contains(e.path) || !core::CheckHarvestPath(e.path).ok()) {
      continue;
    }
    auto last = s->last_sizes.find(e.path);
    if (last == s->last_sizes.end() || last->second != e.size) continue;
    if (static_cast<std::int64_t>(s->copied.size()) + 1 > max_files ||
        s->copied_bytes + static_cast<std::int64_t>(e.size) > max_bytes) {
      s->skipped.insert(e.path);
      lines.push_back("not harvested: " + e.path +
                      ": past this pod's harvest caps (spec.harvest.maxFilesPerPod / "
                      "maxBytesPerPod)");
    }
  }
  s->last_sizes.clear();
  for (const NewEntry& e : scan.entries) s->last_sizes[e.path] = e.size;
  return lines;
}

Status WriteHarvestList(const fs::path& dir, const std::vector<core::HarvestFile>& files) {
  KC_RETURN_IF_ERROR(MkdirAll(dir));
  const fs::path to = dir / core::kHarvestListFile;
  fs::path tmp = to;
  tmp += ".tmp-" + RandomHex();
  Status s = WriteNewFile(tmp, core::HarvestListToJson(files));
  if (s.ok()) s = Rename(tmp, to);
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

}  // namespace kc::initwarm
