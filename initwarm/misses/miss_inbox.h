// The miss watcher's side of a harvest (spec.harvest.mode Merge): copying
// what the pod compiled after its gate into the volume's inbox,
// v1/.inbox/<fp>/<pod uid>/<path> (core/layout.h), so the operator's
// harvest Job can merge it. The copies are listed, with their sha256, in
// the pod's miss report (core/miss_report.h "harvest").
//
// A file is copied once, when
//   - it is new in the view (not a changed published file: those are the
//     published cache's, or in-place updates such as the ComputeCache's),
//   - core::CheckHarvestPath accepts its path (never nv/, never the top),
//   - it had the same size at the previous scan (a framework writing it by
//     tmp-and-rename or appending is not caught half-written: a file still
//     growing waits a scan),
//   - the pod's caps leave room for it (files and bytes; what does not fit
//     is counted in `skipped`, never copied later in part).
// Each copy is written as a temporary file and renamed into place, so the
// harvest Job never reads a half-copied file; its bytes are hashed as they
// are copied, and the copy is fsynced. Files go by whole entries (their
// directory: a Triton kernel's hash directory), once every file of the
// entry has settled and if the whole entry fits the caps. After the copies
// of a pass, the pod's list (core::HarvestListToJson of every file copied
// so far) is written to <dir>/core::kHarvestListFile, by rename: the
// harvest Job reads the files that list names, and only if its sha256 is
// the one the pod's report gave.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/harvest.h"
#include "initwarm/misses/misses.h"

namespace kc::initwarm {

struct InboxState {
  std::map<std::string, std::uint64_t> last_sizes;  // path -> size at the previous scan
  std::vector<core::HarvestFile> copied;            // in the order copied
  std::set<std::string> copied_paths;
  std::int64_t copied_bytes = 0;
  std::set<std::string> skipped;  // over the caps
};

// The files of a scan to copy now, by whole entries in path order, within
// `max_files` and `max_bytes` for the pod (counting what `s` already
// copied). Pure.
std::vector<NewEntry> DueForInbox(const std::vector<NewEntry>& entries, const InboxState& s,
                                  std::int64_t max_files, std::int64_t max_bytes);

// Copies `e` from `tree` into `dir` (the pod's inbox directory): read
// through the safe reader beneath `tree` (no symlink followed in any
// component, a regular file with one name, of e.size bytes), written as
// <path>.tmp-<rand> and renamed. Returns the file with its sha256.
StatusOr<core::HarvestFile> CopyToInbox(const std::filesystem::path& tree, const NewEntry& e,
                                        const std::filesystem::path& dir);

// One watch pass: copies what DueForInbox names, records it in `s`, writes
// the list when it grew, and remembers the sizes seen for the next pass.
// Returns one log line per file copied or refused.
// Writes the pod's list into `dir` (temporary file, then rename).
Status WriteHarvestList(const std::filesystem::path& dir,
                        const std::vector<core::HarvestFile>& files);

std::vector<std::string> UpdateInbox(const ViewScan& scan, const std::filesystem::path& dir,
                                     std::int64_t max_files, std::int64_t max_bytes, InboxState* s);

}  // namespace kc::initwarm
