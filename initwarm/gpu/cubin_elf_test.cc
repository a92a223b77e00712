#include "initwarm/gpu/cubin_elf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kc::initwarm {
namespace {

// A synthetic CUDA ELF: header, one program header, three sections (null,
// .shstrtab, .text) laid out inside `total` bytes.
std::string SyntheticCubin() {
  std::string b(512, '\0');
  auto put = [&b](size_t off, auto v) { std::memcpy(b.data() + off, &v, sizeof(v)); };
  std::memcpy(b.data(),
              "\x7f"
              "ELF",
              4);
  b[4] = 2;  // ELFCLASS64
  b[5] = 1;  // little-endian
  b[6] = 1;
  put(16, uint16_t{2});               // ET_EXEC
  put(18, uint16_t{190});             // EM_CUDA
  put(32, uint64_t{64});              // e_phoff
  put(40, uint64_t{256});             // e_shoff
  put(52, uint16_t{64});              // e_ehsize
  put(54, uint16_t{56});              // e_phentsize
  put(56, uint16_t{1});               // e_phnum
  put(58, uint16_t{64});              // e_shentsize
  put(60, uint16_t{3});               // e_shnum
  put(62, uint16_t{1});               // e_shstrndx
  put(64 + 8, uint64_t{128});         // p_offset
  put(64 + 32, uint64_t{64});         // p_filesz
  put(256 + 64 + 4, uint32_t{3});     // .shstrtab: SHT_STRTAB
  put(256 + 64 + 24, uint64_t{120});  // sh_offset
  put(256 + 64 + 32, uint64_t{8});    // sh_size
  put(256 + 128 + 4, uint32_t{1});    // .text: SHT_PROGBITS
  put(256 + 128 + 24, uint64_t{128});
  put(256 + 128 + 32, uint64_t{64});
  return b;
}

TEST(CheckCudaElfImageTest, StructuralChecks) {
  ASSERT_TRUE(CheckCudaElfImage(SyntheticCubin()).ok()) << CheckCudaElfImage(SyntheticCubin());
  struct Case {
    std::string name;
    size_t offset;
    std::string bytes;  // written at offset
    std::string want;   // substring of the error
  };
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  auto u16 = [](uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); };
  const std::vector<Case> cases = {
      {"32-bit class", 4, std::string(1, '\1'), "64-bit little-endian"},
      {"x86 machine", 18, u16(62), "EM_CUDA"},
      {"section table far away (flipped e_shoff byte)", 40, u64(256ULL | (1ULL << 54)),
       "section header table"},
      {"section table runs off the end", 60, u16(5), "section header table"},
      {"section bytes outside", 256 + 128 + 24, u64(500), "section 2"},
      {"section size overflows", 256 + 128 + 32, u64(~0ULL), "section 2"},
      {"name table index", 62, u16(3), "section name table index"},
      {"program headers outside", 32, u64(480), "program header table"},
      {"segment bytes outside", 64 + 32, u64(4096), "segment 0"},
      {"odd section header size", 58, u16(40), "section header size"},
  };
  for (const auto& c : cases) {
    std::string b = SyntheticCubin();
    b.replace(c.offset, c.bytes.size(), c.bytes);
    Status s = CheckCudaElfImage(b);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << c.name << ": " << s;
  }
  EXPECT_FALSE(CheckCudaElfImage(SyntheticCubin().substr(0, 40)).ok()) << "truncated header";
  EXPECT_FALSE(CheckCudaElfImage(SyntheticCubin().substr(0, 300)).ok()) << "truncated file";
  // Not ELF: fatbin and PTX are left to the driver.
  EXPECT_TRUE(CheckCudaElfImage(".version 7.8\n.target sm_90\n.address_size 64\n").ok());
  EXPECT_TRUE(CheckCudaElfImage(std::string("\x50\xed\x55\xba", 4) + std::string(60, 'x')).ok());
}

}  // namespace
}  // namespace kc::initwarm
