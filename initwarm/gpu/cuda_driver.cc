#include "initwarm/gpu/cuda_driver.h"

#include <cstdlib>

namespace kc::initwarm {
namespace {

// CUDA driver ABI, declared here so no CUDA headers are needed.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaNoDevice = 100;
using CuInitFn = CUresult (*)(unsigned int);
using CuDeviceGetCountFn = CUresult (*)(int*);
using CuDeviceGetFn = CUresult (*)(CUdevice*, int);
using CuPrimaryCtxRetainFn = CUresult (*)(CUcontext*, CUdevice);
using CuPrimaryCtxReleaseFn = CUresult (*)(CUdevice);
using CuCtxSetCurrentFn = CUresult (*)(CUcontext);
using CuModuleLoadDataFn = CUresult (*)(CUmodule*, const void*);
using CuModuleUnloadFn = CUresult (*)(CUmodule);
using CuGetErrorFn = CUresult (*)(CUresult, const char**);

}  // namespace

// The resolved entry points and the retained context.
struct CudaDriver::Api {
  CuCtxSetCurrentFn set_current = nullptr;
  CuModuleLoadDataFn load = nullptr;
  CuModuleUnloadFn unload = nullptr;
  CuGetErrorFn error_name = nullptr;
  CuGetErrorFn error_string = nullptr;
  CuPrimaryCtxReleaseFn release = nullptr;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
};

StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Open() {
  auto lib = DlLibrary::Open("libcuda.so.1");
  if (!lib.ok()) {
    return UnavailableError("no NVIDIA GPU visible: " + lib.status().message());
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver(std::move(*lib)));
  KC_RETURN_IF_ERROR(d->Init());
  return d;
}

CudaDriver::CudaDriver(std::unique_ptr<DlLibrary> lib)
    : lib_(std::move(lib)), api_(std::make_unique<Api>()) {}

CudaDriver::~CudaDriver() {
  if (api_->ctx != nullptr && api_->release != nullptr) api_->release(api_->device);
}

Status CudaDriver::Init() {
  Api& a = *api_;
  KC_ASSIGN_OR_RETURN(auto init, lib_->Symbol<CuInitFn>("cuInit"));
  KC_ASSIGN_OR_RETURN(auto count, lib_->Symbol<CuDeviceGetCountFn>("cuDeviceGetCount"));
  KC_ASSIGN_OR_RETURN(auto get, lib_->Symbol<CuDeviceGetFn>("cuDeviceGet"));
  KC_ASSIGN_OR_RETURN(auto retain, lib_->Symbol<CuPrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain"));
  auto release = lib_->Symbol<CuPrimaryCtxReleaseFn>("cuDevicePrimaryCtxRelease_v2");
  if (!release.ok()) release = lib_->Symbol<CuPrimaryCtxReleaseFn>("cuDevicePrimaryCtxRelease");
  KC_ASSIGN_OR_RETURN(a.set_current, lib_->Symbol<CuCtxSetCurrentFn>("cuCtxSetCurrent"));
  KC_ASSIGN_OR_RETURN(a.load, lib_->Symbol<CuModuleLoadDataFn>("cuModuleLoadData"));
  KC_ASSIGN_OR_RETURN(a.unload, lib_->Symbol<CuModuleUnloadFn>("cuModuleUnload"));
  KC_ASSIGN_OR_RETURN(a.error_name, lib_->Symbol<CuGetErrorFn>("cuGetErrorName"));
  KC_ASSIGN_OR_RETURN(a.error_string, lib_->Symbol<CuGetErrorFn>("cuGetErrorString"));
  // Eager loading makes cuModuleLoadData load every function now, so a
  // broken image fails here rather than at a later first launch. Only
  // this process is affected; an explicit setting is kept.
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  if (CUresult r = init(0); r != kCudaSuccess) {
    return UnavailableError("no NVIDIA GPU visible: cuInit: " + Describe(r));
  }
  int n = 0;
  if (CUresult r = count(&n); r != kCudaSuccess || n == 0) {
    return UnavailableError("no NVIDIA GPU visible: cuDeviceGetCount: " +
                            (r != kCudaSuccess ? Describe(r) : std::string("0 devices")));
  }
  if (CUresult r = get(&a.device, 0); r != kCudaSuccess) {
    return UnavailableError("cuDeviceGet(0): " + Describe(r));
  }
  if (CUresult r = retain(&a.ctx, a.device); r != kCudaSuccess) {
    return UnavailableError("cuDevicePrimaryCtxRetain: " + Describe(r));
  }
  if (release.ok()) a.release = *release;
  return OkStatus();
}

Status CudaDriver::LoadModule(std::string_view image, std::string_view name) {
  if (CUresult r = api_->set_current(api_->ctx); r != kCudaSuccess) {
    return InternalError("cuCtxSetCurrent: " + Describe(r));
  }
  // A private, NUL-terminated, malloc-aligned copy: PTX must end in NUL
  // and the driver reads ELF headers in place.
  std::string copy(image);
  CUmodule mod = nullptr;
  CUresult r = api_->load(&mod, copy.data());
  if (r != kCudaSuccess) {
    return FailedPreconditionError(std::string(name) + ": " + Describe(r));
  }
  if (CUresult u = api_->unload(mod); u != kCudaSuccess) {
    return InternalError(std::string(name) + ": cuModuleUnload: " + Describe(u));
  }
  return OkStatus();
}

std::string CudaDriver::Describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_->error_name == nullptr || api_->error_name(r, &name) != kCudaSuccess ||
      name == nullptr) {
    name = r == kCudaNoDevice ? "CUDA_ERROR_NO_DEVICE" : nullptr;
  }
  if (api_->error_string != nullptr) api_->error_string(r, &text);
  std::string out = name ? name : "CUresult " + std::to_string(r);
  if (text != nullptr) out += std::string(": ") + text;
  return out;
}

}  // namespace kc::initwarm
