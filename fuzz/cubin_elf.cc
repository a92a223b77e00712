// Fuzz target: the structural check of a CUDA ELF image
// (initwarm/gpu/cubin_elf.h, CheckCudaElfImage), which must refuse a
// corrupt cubin before the driver reads it. Input: the image's bytes.
// Property: no crash, no out-of-bounds read (AddressSanitizer), whatever
// the header offsets and counts claim.
#include "initwarm/gpu/cubin_elf.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // libFuzzer's buffer is exactly `size` bytes: a read past it trips ASan.
  (void)kc::initwarm::CheckCudaElfImage(kc::fuzz::AsText(data, size));
  return 0;
}
