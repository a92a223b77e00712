// Converge: run a warmup command, then run it again in fresh processes over
// the same staged view until a pass adds nothing (core/convergence.h has the
// rules and the record).
//
//   1. resolve the view (a symlink prepare pointed at the staging
//      directory) and list the staging tree;
//   2. run the command (RunToCompletion: the run and everything it started
//      are gone before the tree is looked at); a non-zero exit ends the
//      loop with that exit code;
//   3. list the tree again; the files the run added (AddedFiles, less those
//      it rewrote with the bytes they had: every file's sha256 is kept) are read
//      where the classifier wants their bytes (bounded, never through a
//      link) and grouped into entries, each new or autotune against the
//      kernels the tree held before the run;
//   4. core::NextPassStep decides: another pass, converged, or not
//      converged within `max_passes`.
// The record is written to `record` (temp + rename) after every run, so a
// Job killed mid-way leaves the runs it finished.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/convergence.h"
#include "initwarm/warmup/drive_rules.h"

namespace kc::initwarm {

struct ConvergeOptions {
  std::filesystem::path view;  // symlink to the staging directory
  std::vector<std::string> command;
  std::int32_t max_passes = core::kDefaultMaxPasses;  // 1..core::kMaxMaxPasses
  std::filesystem::path record;
};

struct ConvergeResult {
  core::ConvergenceRecord record;
  core::PassStep end = core::PassStep::kConverged;  // kConverged, kNotConverged or kFailed
  int exit_code = 0;                                // of the failed run, when kFailed
};

// What runs add to a staging tree, run after run (steps 1, 3 and 4 above):
// the command form's loop (Converge) and the server form's (`initwarm
// drive`, whose runs are a restarted server driven by the plan) share it.
class PassObserver {
 public:
  // Lists and hashes the tree as it is before the first run. `record`
  // ("" for none) is rewritten after every run.
  static StatusOr<PassObserver> Start(const std::filesystem::path& staging, std::int32_t max_passes,
                                      const std::filesystem::path& record);
  PassObserver(PassObserver&&) noexcept;
  PassObserver& operator=(PassObserver&&) noexcept;
  ~PassObserver();

  // After a run: what it added, recorded (and logged, with the verdict
  // once there is one).
  StatusOr<core::RunRecord> Observe(std::int64_t duration_ms, int exit_code, std::ostream& log);
  // core::NextPassStep over the runs so far.
  core::PassStep Next() const;
  std::int32_t next_index() const;  // the index the next run gets
  const core::ConvergenceRecord& record() const;

 private:
  struct State;
  explicit PassObserver(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// The staging directory `view` (prepare's symlink) points at;
// FailedPrecondition naming --view otherwise.
StatusOr<std::filesystem::path> StagingOfView(const std::filesystem::path& view);

// Errors: FailedPrecondition when the view is not a symlink to a directory;
// an I/O error listing the tree or writing the record; InvalidArgument for
// an empty command or max_passes out of range.
StatusOr<ConvergeResult> Converge(const ConvergeOptions& opts, std::ostream& log);

// The regular files of `after` a run added: not in `before`, or in it with
// another size or modification time, except such changed files under nv/
// (the CUDA driver rewrites its ComputeCache index in place in every
// process). Directories are never files added. Pure.
TreeListing AddedFiles(const TreeListing& before, const TreeListing& after);

}  // namespace kc::initwarm
