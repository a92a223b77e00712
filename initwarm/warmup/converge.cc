#include "initwarm/warmup/converge.h"

#include <chrono>
#include <map>
#include <set>

#include "core/runtime_miss.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/safe_file.h"
#include "initwarm/warmup/child_process.h"
#include "initwarm/warmup/drive_staging.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The files of `listing` as the classifier takes them, with the bytes it
// asks for (bounded, never through a link; a file that went away or is
// past the bound is classified without them).
std::vector<core::WrittenFile> Written(const fs::path& tree, const TreeListing& listing) {
  std::vector<core::WrittenFile> out;
  out.reserve(listing.size());
  for (const ListedEntry& e : listing) {
    if (e.dir) continue;
    core::WrittenFile w{e.path, e.size, ""};
    if (core::WantsContent(e.path)) {
      auto text = ReadFileNoFollow(tree / e.path, core::kMaxMissContentBytes);
      if (text.ok()) w.content = std::move(*text);
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::set<std::string> KernelsOf(const fs::path& tree, const TreeListing& listing) {
  std::set<std::string> out;
  for (const core::RuntimeMiss& m : core::ClassifyMisses(Written(tree, listing))) {
    if (!m.kernel.empty()) out.insert(m.kernel);
  }
  return out;
}

// The sha256 of every file of the tree, kept up to date run by run: a file
// a run rewrote with the bytes it had is no addition (a warmup script that
// writes its outputs again, a framework saving an identical entry).
class ContentHashes {
 public:
  // Hashes `files` (relative to `tree`) and returns those whose bytes are
  // not the ones recorded for their path (or that had none), recording them.
  StatusOr<TreeListing> Changed(const fs::path& tree, const TreeListing& files) {
    std::vector<HashJob> jobs;
    TreeListing regular;
    for (const ListedEntry& e : files) {
      if (e.dir) continue;
      jobs.push_back({tree / e.path, e.size});
      regular.push_back(e);
    }
    KC_ASSIGN_OR_RETURN(std::vector<std::string> sums, HashFiles(jobs, {}));
    TreeListing out;
    for (std::size_t i = 0; i < regular.size(); ++i) {
      auto [it, inserted] = hashes_.try_emplace(regular[i].path, sums[i]);
      if (!inserted) {
        if (it->second == sums[i]) continue;
        it->second = sums[i];
      }
      out.push_back(regular[i]);
    }
    return out;
  }

 private:
  std::map<std::string, std::string> hashes_;
};

std::string RunName(std::int32_t index) {
  return index == 0 ? "the warmup" : "convergence pass " + std::to_string(index);
}

void LogRun(std::ostream& log, const core::RunRecord& r) {
  log << "initwarm converge: " << RunName(r.index) << " took " << r.duration_ms << " ms and added "
      << r.entries_added << " entries (" << r.autotune_entries << " autotune), " << r.files_added
      << " files, " << r.bytes_added << " bytes\n";
  std::size_t shown = 0;
  for (const auto& e : r.entries) {
    if (r.index == 0 || ++shown > 8) break;  // the warmup's own entries are expected
    log << "initwarm converge:   " << core::NoveltyName(e.novelty) << " "
        << core::MissFrameworkName(e.framework) << " " << e.detail << "\n";
  }
}

}  // namespace

TreeListing AddedFiles(const TreeListing& before, const TreeListing& after) {
  std::map<std::string_view, const ListedEntry*> was;
  for (const ListedEntry& e : before) was[e.path] = &e;
  TreeListing out;
  for (const ListedEntry& e : after) {
    if (e.dir) continue;
    auto it = was.find(e.path);
    if (it == was.end() || it->second->dir) {
      out.push_back(e);
      continue;
    }
    const bool changed = it->second->size != e.size || it->second->mtime_ns != e.mtime_ns;
    if (changed && !(e.path == "nv" || e.path.starts_with("nv/"))) out.push_back(e);
  }
  return out;
}

StatusOr<std::filesystem::path> StagingOfView(const fs::path& view) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(view, ec);
  if (ec) {
    return FailedPreconditionError("--view " + view.string() +
                                   " is not the symlink prepare makes: " + ec.message());
  }
  const fs::path staging = target.is_absolute() ? target : view.parent_path() / target;
  if (!fs::is_directory(staging, ec)) {
    return FailedPreconditionError("--view " + view.string() + " points at " + staging.string() +
                                   ", which is not a directory");
  }
  return staging;
}

struct PassObserver::State {
  fs::path staging;
  fs::path record_path;
  TreeListing before;
  ContentHashes hashes;
  core::ConvergenceRecord record;
};

PassObserver::PassObserver(std::unique_ptr<State> s) : s_(std::move(s)) {}
PassObserver::PassObserver(PassObserver&&) noexcept = default;
PassObserver& PassObserver::operator=(PassObserver&&) noexcept = default;
PassObserver::~PassObserver() = default;

StatusOr<PassObserver> PassObserver::Start(const fs::path& staging, std::int32_t max_passes,
                                           const fs::path& record) {
  if (max_passes < 1 || max_passes > core::kMaxMaxPasses) {
    return InvalidArgumentError("--max-passes: want 1.." + std::to_string(core::kMaxMaxPasses));
  }
  auto s = std::make_unique<State>();
  s->staging = staging;
  s->record_path = record;
  s->record.max_passes = max_passes;
  KC_ASSIGN_OR_RETURN(s->before, ListTree(staging));
  KC_RETURN_IF_ERROR(s->hashes.Changed(staging, s->before).status());
  return PassObserver(std::move(s));
}

std::int32_t PassObserver::next_index() const {
  return static_cast<std::int32_t>(s_->record.runs.size());
}

core::PassStep PassObserver::Next() const {
  return core::NextPassStep(s_->record.runs, s_->record.max_passes);
}

const core::ConvergenceRecord& PassObserver::record() const { return s_->record; }

StatusOr<core::RunRecord> PassObserver::Observe(std::int64_t duration_ms, int exit_code,
                                                std::ostream& log) {
  const std::int32_t index = next_index();
  KC_ASSIGN_OR_RETURN(TreeListing after, ListTree(s_->staging));
  KC_ASSIGN_OR_RETURN(const TreeListing added,
                      s_->hashes.Changed(s_->staging, AddedFiles(s_->before, after)));
  core::RunRecord run = core::RecordRun(index, core::ClassifyMisses(Written(s_->staging, added)),
                                        KernelsOf(s_->staging, s_->before));
  run.duration_ms = duration_ms;
  run.exit_code = exit_code;
  LogRun(log, run);
  s_->record.runs.push_back(run);
  s_->before = std::move(after);
  s_->record.converged = Next() == core::PassStep::kConverged;
  if (!s_->record_path.empty()) {
    KC_RETURN_IF_ERROR(
        WriteFileDurable(s_->record_path, core::ConvergenceRecordToJson(s_->record)));
  }
  if (Next() != core::PassStep::kRunPass && Next() != core::PassStep::kFailed) {
    log << "initwarm converge: " << core::ConvergenceMessage(core::Summarize(s_->record)) << "\n";
  }
  return run;
}

StatusOr<ConvergeResult> Converge(const ConvergeOptions& o, std::ostream& log) {
  if (o.command.empty()) return InvalidArgumentError("no warmup command after \"--\"");
  if (o.max_passes < 1 || o.max_passes > core::kMaxMaxPasses) {
    return InvalidArgumentError("--max-passes: want 1.." + std::to_string(core::kMaxMaxPasses));
  }
  KC_ASSIGN_OR_RETURN(const fs::path staging, StagingOfView(o.view));
  KC_ASSIGN_OR_RETURN(PassObserver observer, PassObserver::Start(staging, o.max_passes, o.record));
  ConvergeResult result;
  while (observer.Next() == core::PassStep::kRunPass) {
    const std::int32_t index = observer.next_index();
    log << "initwarm converge: " << RunName(index) << " starts\n" << std::flush;
    const auto start = Clock::now();
    KC_ASSIGN_OR_RETURN(ChildExit exit, RunToCompletion(o.command));
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    KC_RETURN_IF_ERROR(observer.Observe(ms, exit.exit_code, log).status());
    if (exit.exit_code != 0) {
      log << "initwarm converge: " << RunName(index) << " " << exit.how << "\n";
      result.exit_code = exit.exit_code;
    }
  }
  result.end = observer.Next();
  result.record = observer.record();
  return result;
}

}  // namespace kc::initwarm
