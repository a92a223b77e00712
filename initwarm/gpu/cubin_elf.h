// Structural check of a CUDA ELF image (cubin) before the driver sees it.
//
// cuModuleLoadData is given a pointer and no length: it trusts the offsets
// in an ELF image's headers, so a corrupt header makes the driver read past
// the buffer and crash the process (seen on the H200 with one flipped byte
// in e_shoff). The module loader (cuda_module_loader.h) therefore refuses
// an image that fails this check, as CUDA_ERROR_INVALID_IMAGE. Corruption
// inside a section's bytes is invisible to it: that is what the manifest's
// sha256 is for.
#pragma once

#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

// A 64-bit little-endian ELF for EM_CUDA whose program and section header
// tables, every section's bytes (but SHT_NOBITS) and every segment's file
// bytes lie inside the image; InvalidArgument saying which does not.
// Images that are not ELF (fatbin, PTX text) pass untouched. Pure.
Status CheckCudaElfImage(std::string_view image);

}  // namespace kc::initwarm
