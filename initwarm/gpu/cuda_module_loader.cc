#include "initwarm/gpu/cuda_module_loader.h"

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "initwarm/failpoint/failpoint.h"
#include "initwarm/gpu/cubin_elf.h"
#include "initwarm/gpu/cuda_driver.h"
#include "initwarm/gpu/isolated_run.h"

namespace kc::initwarm {
namespace {

// In this process: the checks, then the driver.
class InProcessLoader : public ModuleLoader {
 public:
  explicit InProcessLoader(std::unique_ptr<CudaDriver> driver) : driver_(std::move(driver)) {}

  Status LoadCubin(std::string_view image, std::string_view name) override {
    if (image.empty()) {
      return FailedPreconditionError(std::string(name) + ": empty module image");
    }
    if (Status s = CheckCudaElfImage(image); !s.ok()) {
      return FailedPreconditionError(
          std::string(name) +
          ": CUDA_ERROR_INVALID_IMAGE (checked before loading): " + s.message());
    }
    return driver_->LoadModule(image, name);
  }

 private:
  std::unique_ptr<CudaDriver> driver_;
};

// In a child process: a crash fails the image it was loading; the next
// load gets a fresh child. The parent never initialises CUDA itself, so
// forking is safe.
class IsolatedLoader : public ModuleLoader {
 public:
  explicit IsolatedLoader(std::unique_ptr<IsolatedProcess> child) : child_(std::move(child)) {}

  Status LoadCubin(std::string_view image, std::string_view name) override {
    std::string died;
    if (std::optional<Status> s = child_->Call(name, image, &died)) return *s;
    return FailedPreconditionError(std::string(name) +
                                   ": CUDA driver crashed loading this image (loader process " +
                                   died + "); the file is corrupt or not a CUDA image");
  }

 private:
  std::unique_ptr<IsolatedProcess> child_;
};

// Runs in the child: no ComputeCache writes, an in-process loader, the
// crash failpoint before each load.
StatusOr<IsolatedProcess::Handler> StartLoaderChild() {
  // The load test must write nothing: with CUDA_CACHE_PATH pointing into
  // the cache view (as in model pods), cuInit creates the ComputeCache
  // there, which turned the view path into a real directory on the H200
  // and made `initwarm wait` refuse to replace it.
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/1);
  unsetenv("CUDA_CACHE_PATH");
  KC_ASSIGN_OR_RETURN(std::unique_ptr<ModuleLoader> loader, NewInProcessCudaModuleLoader());
  std::shared_ptr<ModuleLoader> shared = std::move(loader);
  auto served = std::make_shared<std::uint64_t>(0);
  return IsolatedProcess::Handler([shared, served](std::string_view name, std::string_view image) {
    MaybeCrash(CrashPhase::kLoad, (*served)++, SIGSEGV);
    return shared->LoadCubin(image, name);
  });
}

}  // namespace

StatusOr<std::unique_ptr<ModuleLoader>> NewCudaModuleLoader() {
  KC_ASSIGN_OR_RETURN(std::unique_ptr<IsolatedProcess> child,
                      IsolatedProcess::Start("CUDA module loader", StartLoaderChild));
  return std::unique_ptr<ModuleLoader>(new IsolatedLoader(std::move(child)));
}

StatusOr<std::unique_ptr<ModuleLoader>> NewInProcessCudaModuleLoader() {
  KC_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> driver, CudaDriver::Open());
  return std::unique_ptr<ModuleLoader>(new InProcessLoader(std::move(driver)));
}

}  // namespace kc::initwarm
