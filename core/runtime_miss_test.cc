#include "core/runtime_miss.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kc::core {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(KC_MISS_FIXTURES) + "/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(MissFrameworkTest, NamesRoundTrip) {
  for (MissFramework f : kMissFrameworks) {
    auto p = ParseMissFramework(MissFrameworkName(f));
    ASSERT_TRUE(p.ok()) << MissFrameworkName(f);
    EXPECT_EQ(*p, f);
  }
  auto bad = ParseMissFramework("Triton");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not one of triton, inductor"), std::string::npos);
}

TEST(WantsContentTest, OnlyTritonMetadataAndAutotuneJson) {
  struct Case {
    const char* path;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"triton/ABC/_attn_fwd.json", true},
           {"triton/ABC/_attn_fwd.autotune.json", true},
           {"triton/ABC/__grp___attn_fwd.json", false},
           {"triton/ABC/_attn_fwd.cubin", false},
           {"triton/ABC/_attn_fwd.source", true},
           {"inductor/ab/x.source", false},
           {"inductor/fxgraph/ab/fabc/x.json", false},
           {"vllm/torch_compile_cache/h/rank_0_0/cache.json", false},
       }) {
    EXPECT_EQ(WantsContent(c.path), c.want) << c.path;
  }
}

// Real entries: the metadata and group files of a kernel Triton 3.6
// compiled for sm_90 (core/testdata/runtime_miss/, written by its
// make_triton_entry.py).
TEST(ClassifyMissesTest, RealTritonEntryIsOneKernelNamedWithItsConfig) {
  const std::string meta = Fixture("triton_metadata.json");
  const std::string source = Fixture("triton_source.mlir");
  ASSERT_FALSE(meta.empty()) << "fixture missing";
  ASSERT_FALSE(source.empty()) << "fixture missing";
  const std::string dir = "triton/" + Fixture("triton_hash.txt").substr(0, 52);
  std::vector<WrittenFile> files = {
      {dir + "/add_kernel.cubin", 5000, ""},
      {dir + "/add_kernel.json", meta.size(), meta},
      {dir + "/add_kernel.ptx", 3000, ""},
      {dir + "/__grp__add_kernel.json", 400, ""},
      {dir + "/add_kernel.source", source.size(), source},
  };
  const auto misses = ClassifyMisses(files);
  ASSERT_EQ(misses.size(), 1U);
  EXPECT_EQ(misses[0].framework, MissFramework::kTriton);
  EXPECT_EQ(misses[0].key, dir.substr(7));
  EXPECT_EQ(misses[0].files, 5U);
  EXPECT_EQ(misses[0].bytes, 5000U + meta.size() + 3000U + 400U + source.size());
  EXPECT_EQ(misses[0].detail,
            "kernel add_kernel num_warps=4 num_stages=3 num_ctas=1 sm_90 "
            "signature=(x: *f32, y: *f32, out: *f32, n: i32)");
}

TEST(ClassifyMissesTest, OneMissPerCompiledThing) {
  const std::string meta =
      R"({"name":"_attn_fwd","num_warps":8,"num_stages":3,"num_ctas":1,)"
      R"("target":{"backend":"cuda","arch":90,"warp_size":32},"constants":{"BLOCK":128}})";
  const std::string tune = R"({"key":[768,64],"configs_timings":[]})";
  std::vector<WrittenFile> files = {
      {"triton/H1/_attn_fwd.json", meta.size(), meta},
      {"triton/H1/_attn_fwd.cubin", 100, ""},
      {"triton/H2/_attn_fwd.autotune.json", tune.size(), tune},
      {"inductor/fxgraph/ab/fabcdef/entry", 10, ""},
      {"inductor/fxgraph/ab/fabcdef/.lock", 0, ""},
      {"inductor/aotautograd/cd/acdef/entry", 20, ""},
      {"inductor/zq/czq123.py", 30, ""},
      {"vllm/torch_compile_cache/9f8e/rank_0_0/cache.json", 40, ""},
      {"vllm/torch_compile_cache/9f8e/rank_1_0/cache.json", 41, ""},
      {"nv/ComputeCache/1/2/abc", 50, ""},
      {"nv/ComputeCache/index", 60, ""},
      {"flashinfer/0.3.1/90/cached_ops/batch_prefill_fp16/batch_prefill.so", 70, ""},
      {"flashinfer/0.3.1/90/cached_ops/batch_prefill_fp16/build.ninja", 1, ""},
      {"deep_gemm/cache/kernel.fp8_gemm.1a2b/kernel.cubin", 80, ""},
      {"torch_extensions/py312_cu130/my_ext/my_ext.so", 90, ""},
      {"somewhere/else/file", 5, ""},
  };
  const auto misses = ClassifyMisses(files);
  std::vector<std::string> got;
  for (const auto& m : misses) {
    got.push_back(std::string(MissFrameworkName(m.framework)) + " " + m.key + " " +
                  std::to_string(m.files) + " | " + m.detail);
  }
  const std::vector<std::string> want = {
      "triton H1 2 | kernel _attn_fwd num_warps=8 num_stages=3 num_ctas=1 sm_90 "
      "constants={\"BLOCK\":128}",
      "triton H2 1 | autotune _attn_fwd key=[768,64]",
      "inductor aotautograd/acdef 1 | aotautograd entry acdef",
      "inductor fxgraph/fabcdef 2 | fxgraph entry fabcdef",
      "inductor zq/czq123.py 1 | generated module czq123.py",
      "vllm 9f8e/rank_0_0 1 | torch.compile cache 9f8e/rank_0_0",
      "vllm 9f8e/rank_1_0 1 | torch.compile cache 9f8e/rank_1_0",
      "computecache ComputeCache 2 | CUDA ComputeCache",
      "flashinfer batch_prefill_fp16 2 | module batch_prefill_fp16",
      "deepgemm kernel.fp8_gemm.1a2b 1 | module kernel.fp8_gemm.1a2b",
      "torch_extensions my_ext 1 | module my_ext",
      "other somewhere/else 1 | entry somewhere/else",
  };
  EXPECT_EQ(got, want);
}

TEST(ClassifyMissesTest, HostileBytesGiveAMissWithoutDetails) {
  for (const std::string& text :
       {std::string("not json"), std::string("[1,2]"), std::string(R"({"name":7})"),
        std::string(R"({"name":"k","num_warps":"x","target":[]})"), std::string(100000, '{')}) {
    const auto misses = ClassifyMisses({{"triton/H/k.json", text.size(), text}});
    ASSERT_EQ(misses.size(), 1U) << text.substr(0, 40);
    EXPECT_EQ(misses[0].framework, MissFramework::kTriton);
    if (text.starts_with(R"({"name":"k")")) {
      EXPECT_EQ(misses[0].detail, "kernel k");
    } else {
      EXPECT_EQ(misses[0].detail, "entry H") << text.substr(0, 40);
    }
  }
  const std::string long_name = R"({"name":")" + std::string(5000, 'x') + R"("})";
  const auto m = ClassifyMisses({{"triton/H/k.json", long_name.size(), long_name}});
  ASSERT_EQ(m.size(), 1U);
  EXPECT_LT(m[0].detail.size(), 200U);
}

TEST(ClassifyMissesTest, TtirSignatureOfHostileSourceIsBoundedOrAbsent) {
  const std::string meta = R"({"name":"k"})";
  for (const std::string& source :
       {std::string(""), std::string("tt.func public @k"), std::string("tt.func public @k(\n"),
        std::string("tt.func public @k(%a: !tt.ptr<f16, 1> {tt.divisibility = 16 : i32} "
                    "loc(#loc), %b: i64 loc(#loc)) {"),
        "tt.func public @k(" + std::string(10000, '%') + ")",
        "tt.func public @k(%" + std::string(10000, 'a') + ": i32)"}) {
    const auto m = ClassifyMisses(
        {{"triton/H/k.json", meta.size(), meta}, {"triton/H/k.source", source.size(), source}});
    ASSERT_EQ(m.size(), 1U);
    EXPECT_TRUE(m[0].detail.starts_with("kernel k")) << m[0].detail;
    EXPECT_LT(m[0].detail.size(), 260U) << m[0].detail;
    if (source.find("%b") != std::string::npos) {
      EXPECT_EQ(m[0].detail, "kernel k signature=(a: *f16, 1, b: i64)");
    }
  }
}

TEST(ClassifyMissesTest, OddPathsStayStrings) {
  const auto misses = ClassifyMisses({{"", 1, ""},
                                      {"triton", 2, ""},
                                      {"//vllm//x", 3, ""},
                                      {"../../etc/passwd", 4, ""},
                                      {"nv", 5, ""}});
  ASSERT_EQ(misses.size(), 5U);
  for (const auto& m : misses) EXPECT_EQ(m.files, 1U) << m.key;
}

TEST(MissLineTest, NamesFrameworkDetailKeyAndSize) {
  RuntimeMiss m{MissFramework::kTriton, "H1", "kernel k num_warps=4", 3, 1200};
  EXPECT_EQ(MissLine(m), "runtime miss: triton kernel k num_warps=4 (H1, 3 files, 1200 bytes)");
  m.files = 1;
  EXPECT_EQ(MissLine(m), "runtime miss: triton kernel k num_warps=4 (H1, 1 file, 1200 bytes)");
}

}  // namespace
}  // namespace kc::core
