// The AOTInductor rung of the validation ladder (level 5, LoadTest): every
// AOTInductor package (*.pt2) a sealed cache lists must load and run on this
// GPU, checked through kc-aoti-check (aoti_check.h) in a child process.
//
// CheckAotiPackages returns the first package that fails as a Finding at
// level LoadTest naming the file and the loader's error. Where the helper is
// missing (no libtorch in this image) nothing is checked and a note says
// so: the cubin load test still ran; the package rung is best effort, like
// the cubin rung without a GPU.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest.h"
#include "core/validate.h"
#include "initwarm/aoti/aoti_check.h"

namespace kc::initwarm {

struct AotiRungResult {
  std::optional<core::Finding> finding;  // the first package that failed
  int checked = 0;                       // packages loaded and run
  std::vector<std::string> notes;        // skipped checks and why
};

AotiRungResult CheckAotiPackages(const std::filesystem::path& dir, const core::Manifest& m,
                                 const AotiCheckOptions& options = {});

}  // namespace kc::initwarm
