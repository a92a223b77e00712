// CudaDriver: the few CUDA driver API calls the module load test needs,
// reached through dlopen("libcuda.so.1"): no CUDA headers or toolkit at
// build time, and initwarm still runs where there is no driver.
//
// Open() loads the library, initialises the driver (eager module loading,
// so a broken image fails at load rather than at a later first launch) and
// retains device 0's primary context; Unavailable ("no NVIDIA GPU visible:
// ...") when there is no driver library or no device. LoadModule() makes
// that context current, loads the image with cuModuleLoadData and unloads
// it again; a failure is FailedPrecondition naming `name`, the CUDA error
// name and its description, e.g.
//   "triton/ab/k.cubin: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is
//    available for execution on the device"
// The driver trusts an ELF image's header offsets: check the image first
// (cubin_elf.h). Not thread-safe: one driver per thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "initwarm/gpu/dl_library.h"

namespace kc::initwarm {

class CudaDriver {
 public:
  static StatusOr<std::unique_ptr<CudaDriver>> Open();
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  Status LoadModule(std::string_view image, std::string_view name);

 private:
  struct Api;
  explicit CudaDriver(std::unique_ptr<DlLibrary> lib);
  Status Init();
  // "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for ..."
  std::string Describe(int result) const;

  std::unique_ptr<DlLibrary> lib_;
  std::unique_ptr<Api> api_;
};

}  // namespace kc::initwarm
