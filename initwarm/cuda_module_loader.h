// ModuleLoader: does a compiled GPU image (cubin, fatbin, PTX) load on this
// GPU? The highest rung of the validation ladder for Triton and CUDA caches.
//
// NewCudaModuleLoader() loads libcuda.so.1 with dlopen (no CUDA toolkit at
// build time), initialises the driver, and makes device 0's primary context
// current. It returns Unavailable ("no NVIDIA GPU visible: ...") when there
// is no driver library or no device. LoadCubin() loads the image with
// cuModuleLoadData and unloads it again; a failure is FailedPrecondition
// whose message names `name`, the CUDA error name and its description, e.g.
//   "triton/ab/k.cubin: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is
//    available for execution on the device"
// so the caller can quarantine the cache and say why. Not thread-safe: use
// one loader per thread.
//
// cuModuleLoadData is given a pointer and no length: it trusts the offsets
// in an ELF image's headers, so a corrupt header makes the driver read past
// the buffer and crash the process (seen on the H200 with one flipped byte
// in e_shoff). LoadCubin therefore checks an ELF image's structure first
// (CheckCudaElfImage) and refuses it, as CUDA_ERROR_INVALID_IMAGE, before
// the driver sees it. Corruption inside a section's bytes is invisible to
// both: that is what the manifest's sha256 is for.
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

//
// The production loader (NewCudaModuleLoader) does the driver work in a
// forked child process, so that a driver crash on a bad image (a corrupt
// section the structural check cannot see) fails that image, named, with
// the signal, instead of killing initwarm before it can quarantine the
// cache. Create it before starting other threads (fork copies only the
// calling thread). The child runs with CUDA_CACHE_DISABLE=1 and no
// CUDA_CACHE_PATH, so a load test never writes a ComputeCache (into the
// cache view, say). NewInProcessCudaModuleLoader skips the child.
StatusOr<std::unique_ptr<ModuleLoader>> NewCudaModuleLoader();
StatusOr<std::unique_ptr<ModuleLoader>> NewInProcessCudaModuleLoader();

// Structural check of a CUDA ELF image (cubin): 64-bit little-endian ELF for
// EM_CUDA whose program and section header tables, every section's bytes
// (but SHT_NOBITS) and every segment's file bytes lie inside the image.
// Images that are not ELF (fatbin, PTX text) pass untouched. Pure.
Status CheckCudaElfImage(std::string_view image);

}  // namespace kc::initwarm
