// GPU-only tests: each is skipped, saying why, where no GPU is visible.
// The ELF check has its own tests (cubin_elf_test.cc), and so has the
// child process (isolated_run_test.cc).
#include "initwarm/gpu/cuda_module_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "initwarm/gpu/cubin_elf.h"
#include "initwarm/testing/crash_at.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

// Minimal PTX with one empty kernel for `target`.
std::string Ptx(const std::string& target) {
  return ".version 7.8\n.target " + target +
         "\n.address_size 64\n.visible .entry kc_empty()\n{\n\tret;\n}\n";
}

class CudaModuleLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto l = NewCudaModuleLoader();
    if (!l.ok()) {
      ASSERT_EQ(l.status().code(), StatusCode::kUnavailable) << l.status();
      GTEST_SKIP() << "needs an NVIDIA GPU and libcuda.so.1: " << l.status().message();
    }
    loader_ = std::move(*l);
  }
  std::unique_ptr<ModuleLoader> loader_;
};

TEST_F(CudaModuleLoaderTest, LoadsValidPtx) {
  Status s = loader_->LoadCubin(Ptx("sm_80"), "empty.ptx");
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(CudaModuleLoaderTest, GarbageIsRefusedWithTheCudaErrorName) {
  std::string junk(4096, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131) ^ 0x5a);
  junk[0] = 0x7f;  // looks like an ELF start, then goes wrong
  junk[1] = 'E';
  junk[2] = 'L';
  junk[3] = 'F';
  Status s = loader_->LoadCubin(junk, "triton/xx/bad.cubin");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("triton/xx/bad.cubin"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CUDA_ERROR_"), std::string::npos) << s;
}

// A driver crash in the loader process fails that image, named, and the
// next load gets a fresh loader process.
TEST_F(CudaModuleLoaderTest, DriverCrashFailsOneImageNotTheProcess) {
  loader_.reset();
  testing::InstallCrashAtFromEnv();    // the shipped program installs no hook
  setenv("KC_CRASH_AT", "load:1", 1);  // the child's second load crashes
  auto l = NewCudaModuleLoader();
  unsetenv("KC_CRASH_AT");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE((*l)->LoadCubin(Ptx("sm_80"), "a.ptx").ok());
  Status crashed = (*l)->LoadCubin(Ptx("sm_80"), "triton/xx/b.cubin");
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(crashed.message().find("triton/xx/b.cubin"), std::string::npos) << crashed;
  EXPECT_NE(crashed.message().find("signal 11"), std::string::npos) << crashed;
  Status after = (*l)->LoadCubin(Ptx("sm_80"), "c.ptx");  // a new child, crash hook not set
  EXPECT_TRUE(after.ok()) << after;
}

TEST_F(CudaModuleLoaderTest, EmptyImageIsRefused) {
  EXPECT_EQ(loader_->LoadCubin("", "x.cubin").code(), StatusCode::kFailedPrecondition);
}

// Compiles a cubin with nvcc when it is on PATH: the native arch loads, a
// newer arch is refused as CUDA_ERROR_NO_BINARY_FOR_GPU (or an invalid
// image), and one flipped byte in the ELF header is refused.
TEST_F(CudaModuleLoaderTest, CubinsFromNvcc) {
  if (std::system("command -v nvcc >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "nvcc not on PATH; cannot build test cubins";
  }
  const char* arch_env = std::getenv("KC_TEST_NATIVE_SM");  // e.g. "90"
  std::string native = arch_env ? arch_env : "90";
  std::string foreign = native == "100" ? "90" : "100";
  fs::path dir = fs::temp_directory_path() / ("kc_cubin_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "k.cu") << "extern \"C\" __global__ void kc_add(float* x) {"
                                   " x[threadIdx.x] += 1.0f; }\n";
  }
  auto build = [&](const std::string& sm) -> std::string {
    fs::path out = dir / ("k_sm" + sm + ".cubin");
    std::string cmd = "nvcc -cubin -arch=sm_" + sm + " -o " + out.string() + " " +
                      (dir / "k.cu").string() + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return {};
    std::ifstream in(out, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::string good = build(native);
  std::string other = build(foreign);
  fs::remove_all(dir);
  ASSERT_FALSE(good.empty()) << "nvcc could not build sm_" << native;
  ASSERT_FALSE(other.empty()) << "nvcc could not build sm_" << foreign;
  Status ok = loader_->LoadCubin(good, "k_sm" + native + ".cubin");
  EXPECT_TRUE(ok.ok()) << ok;
  Status bad = loader_->LoadCubin(other, "k_sm" + foreign + ".cubin");
  ASSERT_FALSE(bad.ok()) << "a cubin for sm_" << foreign << " loaded on this GPU";
  EXPECT_NE(bad.message().find("CUDA_ERROR_"), std::string::npos) << bad;
  // e_shoff (bytes 40..47): its high byte flipped puts the section headers
  // far outside the file.
  std::string flipped = good;
  flipped[46] = static_cast<char>(flipped[46] ^ 0x40);
  // Without the structural check the driver reads past the buffer and
  // crashes the process here (seen on the H200).
  Status f = loader_->LoadCubin(flipped, "flipped.cubin");
  ASSERT_FALSE(f.ok()) << "a cubin with a corrupt ELF header loaded";
  EXPECT_NE(f.message().find("CUDA_ERROR_INVALID_IMAGE"), std::string::npos) << f;
  EXPECT_TRUE(CheckCudaElfImage(good).ok()) << "nvcc's own cubin fails the structural check";
}

}  // namespace
}  // namespace kc::initwarm
