#include "initwarm/gpu/cubin_elf.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace kc::initwarm {
namespace {

template <typename T>
T ReadLe(std::string_view b, size_t off) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof(T));  // x86-64 and arm64 are little-endian
  return v;
}

// off + n*size <= total, without overflow.
bool Fits(uint64_t off, uint64_t n, uint64_t size, uint64_t total) {
  if (off > total) return false;
  if (size != 0 && n > (total - off) / size) return false;
  return true;
}

}  // namespace

Status CheckCudaElfImage(std::string_view b) {
  constexpr size_t kEhdr = 64;
  if (b.size() < 4 || std::memcmp(b.data(),
                                  "\x7f"
                                  "ELF",
                                  4) != 0)
    return OkStatus();
  const uint64_t total = b.size();
  if (b.size() < kEhdr) {
    return InvalidArgumentError("ELF image of " + std::to_string(total) +
                                " bytes is shorter than its 64-byte header");
  }
  if (b[4] != 2 || b[5] != 1) {
    return InvalidArgumentError("not a 64-bit little-endian ELF image (class " +
                                std::to_string(static_cast<int>(b[4])) + ", data " +
                                std::to_string(static_cast<int>(b[5])) + ")");
  }
  constexpr uint16_t kEmCuda = 190;
  if (auto m = ReadLe<uint16_t>(b, 18); m != kEmCuda) {
    return InvalidArgumentError("ELF machine " + std::to_string(m) + " is not EM_CUDA (190)");
  }
  const auto phoff = ReadLe<uint64_t>(b, 32);
  const auto shoff = ReadLe<uint64_t>(b, 40);
  const auto phentsize = ReadLe<uint16_t>(b, 54);
  const auto phnum = ReadLe<uint16_t>(b, 56);
  const auto shentsize = ReadLe<uint16_t>(b, 58);
  const auto shnum = ReadLe<uint16_t>(b, 60);
  const auto shstrndx = ReadLe<uint16_t>(b, 62);
  auto at = [&](const char* what, uint64_t off) {
    return std::string(what) + " at offset " + std::to_string(off) + " lies outside the " +
           std::to_string(total) + "-byte image";
  };
  if (shnum > 0) {
    if (shentsize != 64) {
      return InvalidArgumentError("section header size " + std::to_string(shentsize) +
                                  " is not 64");
    }
    if (!Fits(shoff, shnum, shentsize, total)) {
      return InvalidArgumentError(at("section header table", shoff));
    }
    if (shstrndx >= shnum) {
      return InvalidArgumentError("section name table index " + std::to_string(shstrndx) +
                                  " >= section count " + std::to_string(shnum));
    }
    constexpr uint32_t kShtNobits = 8;
    for (uint16_t i = 0; i < shnum; ++i) {
      const uint64_t h = shoff + uint64_t{i} * shentsize;
      const auto type = ReadLe<uint32_t>(b, h + 4);
      const auto off = ReadLe<uint64_t>(b, h + 24);
      const auto size = ReadLe<uint64_t>(b, h + 32);
      if (type != kShtNobits && !Fits(off, 1, size, total)) {
        return InvalidArgumentError(at(("section " + std::to_string(i)).c_str(), off) + " (size " +
                                    std::to_string(size) + ")");
      }
    }
  }
  if (phnum > 0) {
    if (phentsize != 56) {
      return InvalidArgumentError("program header size " + std::to_string(phentsize) +
                                  " is not 56");
    }
    if (!Fits(phoff, phnum, phentsize, total)) {
      return InvalidArgumentError(at("program header table", phoff));
    }
    for (uint16_t i = 0; i < phnum; ++i) {
      const uint64_t h = phoff + uint64_t{i} * phentsize;
      const auto off = ReadLe<uint64_t>(b, h + 8);
      const auto filesz = ReadLe<uint64_t>(b, h + 32);
      if (!Fits(off, 1, filesz, total)) {
        return InvalidArgumentError(at(("segment " + std::to_string(i)).c_str(), off) + " (size " +
                                    std::to_string(filesz) + ")");
      }
    }
  }
  return OkStatus();
}

}  // namespace kc::initwarm
