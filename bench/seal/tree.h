// tree: the benchmark's cache tree; the one generator bench_seal and
// bench/seal/run.sh share.
//
// BuildTree writes a vLLM-shaped cache of `total_bytes` under `dir` (created
// when missing): a quarter in small compiler outputs of 1-50 KB, six per
// kernel directory as Triton writes them (.cubin .json .ptx .ttir .ttgir
// .llir; two kernels in three under triton/<hash>/, the third under
// Inductor's own Triton cache inductor/triton/0/<hash>/), the rest in a few
// large artifacts of 50-200 MB (vllm/torch_compile_cache/, inductor/aoti/,
// nv/). With `sync` every file is fsynced, so its pages are clean and can be
// dropped; without, the tree is as a warmup leaves it for seal: dirty pages.
// Exits the process on a write error (a benchmark, not a library).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "base/status.h"
#include "initwarm/fs/hasher.h"

namespace kc::bench {

std::vector<initwarm::HashJob> BuildTree(const std::filesystem::path& dir,
                                         std::uint64_t total_bytes, bool sync = true);

// The regular files under `dir` as seal lists them (initwarm::WalkCache:
// manifest.json and READY at the top are left out).
StatusOr<std::vector<initwarm::HashJob>> ListTree(const std::filesystem::path& dir);

}  // namespace kc::bench
