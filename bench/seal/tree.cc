#include "bench/seal/tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "initwarm/cache/walk.h"

namespace kc::bench {

namespace fs = std::filesystem;
using initwarm::HashJob;

namespace {

void WriteFileOfSize(const fs::path& p, std::uint64_t size, const std::vector<char>& block,
                     std::uint64_t salt, bool sync) {
  fs::create_directories(p.parent_path());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(p.c_str());
    std::exit(1);
  }
  std::vector<char> buf = block;
  std::memcpy(buf.data(), &salt, sizeof(salt));
  std::uint64_t left = size;
  while (left > 0) {
    size_t n = static_cast<size_t>(std::min<std::uint64_t>(left, buf.size()));
    if (::write(fd, buf.data(), n) != static_cast<ssize_t>(n)) {
      std::perror("write");
      std::exit(1);
    }
    left -= n;
    ++buf[8];
  }
  if (sync) ::fsync(fd);
  ::close(fd);
}

std::string HexName(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v * 0x9e3779b97f4a7c15ull));
  return buf;
}

}  // namespace

std::vector<HashJob> BuildTree(const fs::path& dir, std::uint64_t total_bytes, bool sync) {
  std::vector<char> block(1 << 20);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>((i * 2654435761u) >> 13);
  static constexpr std::array<const char*, 6> kExt = {".cubin", ".json",  ".ptx",
                                                      ".ttir",  ".ttgir", ".llir"};
  std::vector<HashJob> jobs;
  std::uint64_t written = 0;
  std::uint64_t salt = 0;
  const std::uint64_t small_budget = total_bytes / 4;
  while (written < small_budget) {
    std::uint64_t kernel = salt / kExt.size();
    fs::path kdir = kernel % 3 == 2 ? dir / "inductor" / "triton" / "0" / HexName(kernel)
                                    : dir / "triton" / HexName(kernel);
    std::uint64_t sz = 1024 + (salt * 7919) % (std::uint64_t{49} * 1024);
    fs::path p = kdir / ("kernel_" + std::to_string(kernel) + kExt[salt % kExt.size()]);
    WriteFileOfSize(p, sz, block, ++salt, sync);
    jobs.push_back({p, sz});
    written += sz;
  }
  static constexpr std::uint64_t kLargeMiB[] = {50, 120, 200, 80, 160};
  static constexpr const char* kLargeDir[] = {"vllm/torch_compile_cache/rank_0_0", "inductor/aoti",
                                              "nv"};
  for (int i = 0; written < total_bytes; ++i) {
    std::uint64_t sz = std::min<std::uint64_t>(kLargeMiB[i % 5] << 20, total_bytes - written);
    fs::path p = dir / kLargeDir[i % 3] / ("artifact_" + std::to_string(i));
    WriteFileOfSize(p, sz, block, ++salt, sync);
    jobs.push_back({p, sz});
    written += sz;
  }
  return jobs;
}

StatusOr<std::vector<HashJob>> ListTree(const fs::path& dir) {
  KC_ASSIGN_OR_RETURN(initwarm::WalkResult walk, initwarm::WalkCache(dir));
  std::vector<HashJob> jobs;
  jobs.reserve(walk.files.size());
  for (const auto& f : walk.files) jobs.push_back({dir / f.path, f.size});
  return jobs;
}

}  // namespace kc::bench
