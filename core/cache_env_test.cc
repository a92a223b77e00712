#include "core/cache_env.h"

#include <gtest/gtest.h>

#include <set>

#include "core/api_types.h"
#include "core/layout.h"
#include "core/spec_validation.h"

namespace kc::core {
namespace {

TEST(CacheEnvTest, EveryPathIsUnderTheOneViewAndNamesAreUnique) {
  std::set<std::string> names;
  const std::string view = std::string(kDefaultView) + "/";
  for (const auto& [name, value] : CacheViewEnv()) {
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    if (value.front() == '/') {
      EXPECT_EQ(value.rfind(view, 0), 0u) << name << "=" << value;
    }
  }
  EXPECT_EQ(std::string(kDefaultView).rfind(std::string(kRunDir) + "/", 0), 0u);
}

TEST(CacheEnvTest, ServingStackCachesAreInTheList) {
  for (const char* name : {"TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "VLLM_CACHE_ROOT",
                           "CUDA_CACHE_PATH", "FLASHINFER_WORKSPACE_BASE", "DG_JIT_CACHE_DIR",
                           "TILELANG_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "SGLANG_CACHE_DIR"}) {
    EXPECT_TRUE(IsCacheViewEnv(name)) << name;
  }
  EXPECT_FALSE(IsCacheViewEnv("TRITON_CACHE"));
  EXPECT_FALSE(IsCacheViewEnv(""));
}

// The view variables are the operator's: a spec may not set them, and they
// never enter the fingerprint.
TEST(CacheEnvTest, ViewVariablesAreReservedAndNotFingerprinted) {
  const auto& reserved = ReservedEnvNames();
  KernelCacheSpec spec;
  for (const auto& [name, value] : CacheViewEnv()) {
    EXPECT_NE(std::find(reserved.begin(), reserved.end(), name), reserved.end()) << name;
    spec.warmup.env.push_back({{"name", name}, {"value", "/elsewhere"}});
  }
  spec.warmup.env.push_back({{"name", "TORCH_CUDA_ARCH_LIST"}, {"value", "9.0"}});
  const RuntimeFacts r = RuntimeFactsFor(spec);
  EXPECT_EQ(r.env, (std::map<std::string, std::string>{{"TORCH_CUDA_ARCH_LIST", "9.0"}}));
}

}  // namespace
}  // namespace kc::core
