// Runtime misses: what a serving process compiled into its cache view after
// its gate, grouped into one miss per compiled thing and named so a user can
// tell which shape or module it was.
//
// The input is the list of files written into a view after the gate (new,
// or changed in place: initwarm/cache/layered_view.h NewEntriesAfterGate), each
// with its path relative to the view and, for the few small files a name is
// read from (WantsContent), their bytes. One miss per
//   triton/<hash>/...                    a Triton kernel: its name, num_warps,
//                                        num_stages, num_ctas and target arch
//                                        from the entry's metadata JSON, its
//                                        argument types from the TTIR source
//                                        (<name>.source) that Triton 3.6
//                                        keeps beside it; an autotune result
//                                        (<name>.autotune.json) says so
//   inductor/<kind>/<xx>/<key>...        an Inductor cache entry (fxgraph,
//                                        aotautograd, ...) by kind and key
//   inductor/<xx>/<file>                 an Inductor generated module
//   vllm/torch_compile_cache/<hash>/<rank>/...  vLLM's compile for a rank
//   nv/...                               the CUDA ComputeCache: one miss
//                                        counting its files
//   flashinfer/.../cached_ops/<module>/..., deep_gemm/.../<module>/...,
//   tilelang/..., torch_extensions/<module>/..., sglang/...: by module dir
//   anything else                        by its first two path components
// Files of a miss are counted (files, bytes). Nothing here reads a file:
// the caller passes the bytes of the files WantsContent names (bounded by
// kMaxMissContentBytes). Hostile bytes give a miss without details, never an
// error. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::core {

enum class MissFramework {
  kTriton,
  kInductor,
  kVllm,
  kComputeCache,
  kFlashInfer,
  kDeepGemm,
  kTileLang,
  kTorchExtensions,
  kSglang,
  kOther
};
inline constexpr std::array<MissFramework, 10> kMissFrameworks = {
    MissFramework::kTriton,       MissFramework::kInductor,        MissFramework::kVllm,
    MissFramework::kComputeCache, MissFramework::kFlashInfer,      MissFramework::kDeepGemm,
    MissFramework::kTileLang,     MissFramework::kTorchExtensions, MissFramework::kSglang,
    MissFramework::kOther};

// The metric label and report value: "triton", "inductor", "vllm",
// "computecache", "flashinfer", "deepgemm", "tilelang", "torch_extensions",
// "sglang", "other".
std::string_view MissFrameworkName(MissFramework f);
StatusOr<MissFramework> ParseMissFramework(std::string_view name);

// A file written into the view after the gate.
struct WrittenFile {
  std::string path;  // relative to the view
  std::uint64_t size = 0;
  std::string content;  // set only where WantsContent(path), at most kMaxMissContentBytes
};

inline constexpr std::uint64_t kMaxMissContentBytes = 64 * 1024;

// Whether ClassifyMisses reads the bytes of `rel` (a Triton kernel's
// metadata or autotune JSON, or its TTIR source).
bool WantsContent(std::string_view rel);

struct RuntimeMiss {
  MissFramework framework = MissFramework::kOther;
  std::string key;     // unique per compiled thing within its framework
  std::string detail;  // human: "kernel _attn_fwd num_warps=8 num_stages=3 sm_90"
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  // What stays the same across configurations of one compiled thing: a
  // Triton kernel's name and argument types ("_attn_fwd(q: *f16, ...)"),
  // from its metadata and TTIR source; "" where the entry has none. Two
  // entries with one `kernel` and two keys are two configurations of one
  // kernel (core/convergence.h).
  std::string kernel{};
  friend bool operator==(const RuntimeMiss&, const RuntimeMiss&) = default;
};

// One miss per compiled thing, sorted by (framework, key).
std::vector<RuntimeMiss> ClassifyMisses(const std::vector<WrittenFile>& files);

// One human line: "runtime miss: triton kernel _attn_fwd num_warps=8
// num_stages=3 num_ctas=1 sm_90 signature=(q: *f16, ...) (<hash>, 8 files,
// 120034 bytes)".
std::string MissLine(const RuntimeMiss& m);

}  // namespace kc::core
