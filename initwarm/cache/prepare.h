// Prepare: set up a warmup's staging directory and point the view at it.
//
// Takes the fingerprint lock for `owner` (the Job uid; Conflict naming the
// holder when another live writer has it, a stale lock is broken; see
// lock.h), creates v1/.staging/<fp>-<owner>/{triton,inductor,vllm,nv}
// (reusing it when a retried pod of the same Job left one), and makes
// `view` a symlink to it (atomically replaced). An empty `view` skips the
// symlink. With `runner`, installs the convergence runner there. Every directory it creates is
// core::kCacheDirMode (2775). A volume it may not write is PermissionDenied whose message ends with
// core::ExportFix (what to change on the export, or spec.securityContext).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace kc::initwarm {

struct PrepareOptions {
  std::filesystem::path root;
  std::string fingerprint;
  std::string owner;
  std::filesystem::path view;
  std::int64_t lock_stale_after_s = 2 * 3600;
  // Owners (Job uids) known finished or deleted: their lock is broken at
  // once (the operator passes them; see lock.h).
  std::vector<std::string> break_lock_of;
  // When set, `runner_source` (the static kc-converge) is copied there
  // (mode 0555, temp + rename), for the warmup container to run the warmup
  // command through it inside the model image.
  std::filesystem::path runner;
  std::filesystem::path runner_source;
};

struct PrepareResult {
  std::filesystem::path staging;
  std::filesystem::path lock;
  bool reused = false;  // the staging directory existed already
};

StatusOr<PrepareResult> Prepare(const PrepareOptions& opts);

}  // namespace kc::initwarm
