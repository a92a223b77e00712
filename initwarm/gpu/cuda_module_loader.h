// ModuleLoader: does a compiled GPU image (cubin, fatbin, PTX) load on this
// GPU? The highest rung of the validation ladder for Triton and CUDA caches.
//
// LoadCubin() refuses an empty image, then an ELF image whose structure is
// broken (cubin_elf.h; as "CUDA_ERROR_INVALID_IMAGE (checked before
// loading)", before the driver reads past the buffer), then loads and
// unloads it through the CUDA driver (cuda_driver.h). A failure is
// FailedPrecondition whose message names `name`, the CUDA error name and
// its description, e.g.
//   "triton/ab/k.cubin: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is
//    available for execution on the device"
// so the caller can quarantine the cache and say why. Unavailable ("no
// NVIDIA GPU visible: ...") from the constructors when there is no driver
// library or no device. Not thread-safe: use one loader per thread.
//
// This file composes the three: the driver ABI (cuda_driver.h), the ELF
// check (cubin_elf.h) and process isolation (isolated_run.h).
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

class ModuleLoader {
 public:
  virtual ~ModuleLoader() = default;
  virtual Status LoadCubin(std::string_view image, std::string_view name) = 0;
};

// The production loader (NewCudaModuleLoader) does the driver work in a
// forked child process (isolated_run.h), so that a driver crash on a bad
// image (a corrupt section the structural check cannot see) fails that
// image, named, with the signal, instead of killing initwarm before it can
// quarantine the cache. Create it before starting other threads (fork
// copies only the calling thread). The child runs with CUDA_CACHE_DISABLE=1
// and no CUDA_CACHE_PATH, so a load test never writes a ComputeCache (into
// the cache view, say). NewInProcessCudaModuleLoader skips the child.
// Test hook: with initwarm/testing/crash_at.h's hook installed (tests only),
// KC_CRASH_AT=load:<n> (initwarm/failpoint/failpoint.h) kills the child with
// SIGSEGV at its n-th load (0-based), standing in for a driver crash.
StatusOr<std::unique_ptr<ModuleLoader>> NewCudaModuleLoader();
StatusOr<std::unique_ptr<ModuleLoader>> NewInProcessCudaModuleLoader();

}  // namespace kc::initwarm
