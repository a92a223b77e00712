// AOTInductor package check: does a .pt2 package load and run on this GPU?
// The top rung of the validation ladder for AOTInductor caches.
//
// The loader itself links libtorch (torch::inductor::AOTIModelPackageLoader)
// and is built only where libtorch's CMake config is found, as the helper
// program `kc-aoti-check` (initwarm/aoti/). `initwarm` stays static and
// free of libtorch: LoadAndRunAotiPackage() runs the helper in a child
// process (found via $KC_AOTI_CHECK, next to the initwarm binary, or on
// PATH) and maps its JSON answer to a Status. A missing helper is
// Unavailable (the caller decides whether that level is required); a package
// that fails to load or run is FailedPrecondition naming the package and
// the loader's error. The helper runs with CUDA_CACHE_DISABLE=1 and no
// CUDA_CACHE_PATH: a check never writes a ComputeCache entry into the view.
//
// The package's inputs are made by the helper from the package's own
// metadata when `inputs_spec` is empty, else from "dtype:d0xd1x..;..." e.g.
// "float16:8x128x512".
#pragma once

#include <string>

#include "base/status.h"

namespace kc::initwarm {

struct AotiCheckOptions {
  std::string inputs_spec;  // "bfloat16:4x256x512;..."; empty: the helper's default
  std::string model_name = "model";
  int runs = 3;  // calls after load (the first is timed separately)
  int timeout_seconds = 300;
};

struct AotiCheckResult {
  double load_ms = 0;        // AOTIModelPackageLoader construction
  double first_run_ms = 0;   // first call, synchronised
  double steady_run_ms = 0;  // median of the later calls
  std::string json;          // the helper's full answer
};

StatusOr<AotiCheckResult> LoadAndRunAotiPackage(const std::string& package_path,
                                                const AotiCheckOptions& options = {});

}  // namespace kc::initwarm
