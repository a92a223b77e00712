#include "core/cache_env.h"

#include <algorithm>

namespace kc::core {

const std::vector<std::pair<std::string, std::string>>& CacheViewEnv() {
  static const std::vector<std::pair<std::string, std::string>> kEnv = {
      // Triton, TorchInductor, vLLM, the CUDA driver's PTX JIT cache.
      {"TRITON_CACHE_DIR", "/var/run/kernelcache/view/triton"},
      {"TORCHINDUCTOR_CACHE_DIR", "/var/run/kernelcache/view/inductor"},
      {"VLLM_CACHE_ROOT", "/var/run/kernelcache/view/vllm"},
      {"CUDA_CACHE_PATH", "/var/run/kernelcache/view/nv"},
      {"CUDA_CACHE_MAXSIZE", "4294967296"},
      // Autotune results persist with the kernels (96% saved instead of 63%).
      {"TRITON_CACHE_AUTOTUNING", "1"},
      // The other JIT caches of a serving stack (docs/webhook-env.md).
      {"FLASHINFER_WORKSPACE_BASE", "/var/run/kernelcache/view/flashinfer"},
      {"DG_JIT_CACHE_DIR", "/var/run/kernelcache/view/deep_gemm"},
      {"DG_CACHE_DIR", "/var/run/kernelcache/view/deep_gemm"},  // DeepGEMM's older Python JIT
      {"SGLANG_DG_CACHE_DIR", "/var/run/kernelcache/view/deep_gemm"},
      {"SGLANG_CACHE_DIR", "/var/run/kernelcache/view/sglang"},
      {"TILELANG_CACHE_DIR", "/var/run/kernelcache/view/tilelang"},
      {"TORCH_EXTENSIONS_DIR", "/var/run/kernelcache/view/torch_extensions"},
  };
  return kEnv;
}

bool IsCacheViewEnv(std::string_view name) {
  const auto& env = CacheViewEnv();
  return std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
}

}  // namespace kc::core
