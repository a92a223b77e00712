#include "initwarm/aoti/aoti_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "initwarm/aoti/aoti_rung.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

// Writes an executable shell script standing in for kc-aoti-check and
// points $KC_AOTI_CHECK at it for the test's duration.
class FakeHelper {
 public:
  explicit FakeHelper(const std::string& body) {
    path_ = fs::temp_directory_path() /
            ("kc_fake_aoti_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    std::ofstream(path_) << "#!/bin/sh\n" << body << "\n";
    chmod(path_.c_str(), 0755);
    const char* old = std::getenv("KC_AOTI_CHECK");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("KC_AOTI_CHECK", path_.c_str(), 1);
  }
  ~FakeHelper() {
    if (had_old_) {
      setenv("KC_AOTI_CHECK", old_.c_str(), 1);
    } else {
      unsetenv("KC_AOTI_CHECK");
    }
    fs::remove(path_);
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
  bool had_old_ = false;
  std::string old_;
};

TEST(LoadAndRunAotiPackageTest, ParsesTheHelpersAnswer) {
  FakeHelper h(
      R"(echo "{\"ok\":true,\"load_ms\":812.5,\"first_run_ms\":2.5,\"steady_run_ms\":1.25,\"args\":\"$*\"}")");
  AotiCheckOptions o;
  o.inputs_spec = "bfloat16:4x256x512";
  auto r = LoadAndRunAotiPackage("/cache/v1/fp/aoti/model.pt2", o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->load_ms, 812.5);
  EXPECT_DOUBLE_EQ(r->first_run_ms, 2.5);
  EXPECT_DOUBLE_EQ(r->steady_run_ms, 1.25);
  EXPECT_NE(r->json.find("--package /cache/v1/fp/aoti/model.pt2"), std::string::npos) << r->json;
  EXPECT_NE(r->json.find("--inputs bfloat16:4x256x512"), std::string::npos) << r->json;
}

TEST(LoadAndRunAotiPackageTest, HelperNeverWritesACudaComputeCache) {
  FakeHelper h(
      R"(echo "{\"ok\":true,\"args\":\"disable=$CUDA_CACHE_DISABLE path=${CUDA_CACHE_PATH:-unset}\"}")");
  setenv("CUDA_CACHE_PATH", "/var/run/kernelcache/view/nv", 1);
  setenv("CUDA_CACHE_DISABLE", "0", 1);
  auto r = LoadAndRunAotiPackage("/cache/model.pt2");
  unsetenv("CUDA_CACHE_PATH");
  unsetenv("CUDA_CACHE_DISABLE");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->json.find("disable=1 path=unset"), std::string::npos) << r->json;
}

TEST(LoadAndRunAotiPackageTest, LoaderErrorIsFailedPreconditionNamingThePackage) {
  FakeHelper h(
      R"(echo '{"ok":false,"error":"PytorchStreamReader failed reading zip archive"}'; exit 1)");
  auto r = LoadAndRunAotiPackage("/cache/model.pt2");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("/cache/model.pt2"), std::string::npos);
  EXPECT_NE(r.status().message().find("failed reading zip archive"), std::string::npos);
}

TEST(LoadAndRunAotiPackageTest, CrashWithoutAnswer) {
  FakeHelper h("echo 'Segmentation fault' >&2; kill -SEGV $$");
  auto r = LoadAndRunAotiPackage("/cache/model.pt2");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("signal 11"), std::string::npos) << r.status();
}

TEST(LoadAndRunAotiPackageTest, HungHelperIsKilledAtTheDeadline) {
  FakeHelper h("exec sleep 30");  // a helper that never answers
  AotiCheckOptions o;
  o.timeout_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  auto r = LoadAndRunAotiPackage("/cache/model.pt2", o);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LoadAndRunAotiPackageTest, MissingHelperIsUnavailable) {
  const char* old = std::getenv("KC_AOTI_CHECK");
  std::string saved = old ? old : "";
  setenv("KC_AOTI_CHECK", "/nonexistent/kc-aoti-check", 1);
  auto r = LoadAndRunAotiPackage("/cache/model.pt2");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  if (old) {
    setenv("KC_AOTI_CHECK", saved.c_str(), 1);
  } else {
    unsetenv("KC_AOTI_CHECK");
  }
}

core::Manifest ManifestWith(std::vector<std::string> paths) {
  core::Manifest m;
  for (auto& p : paths) m.files.push_back({std::move(p), 10, std::string(64, 'a')});
  return m;
}

TEST(CheckAotiPackagesTest, ChecksEveryPackageAndNamesTheFirstBadOne) {
  // The fake loader fails for packages whose path contains "bad".
  FakeHelper h(R"(case "$2" in *bad*) echo '{"ok":false,"error":"no kernel image"}'; exit 1;; esac
echo '{"ok":true,"load_ms":1}')");
  auto m = ManifestWith({"inductor/aoti/a.pt2", "triton/x/k.cubin", "inductor/aoti/b.pt2"});
  AotiRungResult ok = CheckAotiPackages("/cache/v1/fp", m);
  EXPECT_FALSE(ok.finding.has_value());
  EXPECT_EQ(ok.checked, 2);
  EXPECT_TRUE(ok.notes.empty());

  auto bad = ManifestWith({"inductor/aoti/a.pt2", "inductor/aoti/bad.pt2", "z/c.pt2"});
  AotiRungResult r = CheckAotiPackages("/cache/v1/fp", bad);
  ASSERT_TRUE(r.finding.has_value());
  EXPECT_EQ(r.finding->level, core::Level::kLoadTest);
  EXPECT_EQ(r.finding->file, "inductor/aoti/bad.pt2");
  EXPECT_NE(r.finding->reason.find("no kernel image"), std::string::npos) << r.finding->reason;
  EXPECT_EQ(r.checked, 1);
}

TEST(CheckAotiPackagesTest, MissingHelperIsANoteNotAFailure) {
  setenv("KC_AOTI_CHECK", "/nonexistent/kc-aoti-check", 1);
  AotiRungResult r = CheckAotiPackages("/cache/v1/fp", ManifestWith({"inductor/aoti/a.pt2"}));
  unsetenv("KC_AOTI_CHECK");
  EXPECT_FALSE(r.finding.has_value());
  EXPECT_EQ(r.checked, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("not checked"), std::string::npos);
}

TEST(CheckAotiPackagesTest, NoPackagesNothingToDo) {
  AotiRungResult r = CheckAotiPackages("/cache/v1/fp", ManifestWith({"triton/x/k.cubin"}));
  EXPECT_FALSE(r.finding.has_value());
  EXPECT_EQ(r.checked, 0);
  EXPECT_TRUE(r.notes.empty());
}

// GPU-only: a real package through the real helper. The bench driver
// (bench/gpu/run_all.sh) builds both and sets KC_AOTI_CHECK and
// KC_TEST_AOTI_PACKAGE (and KC_TEST_AOTI_CORRUPT_PACKAGE for a package with
// one flipped byte).
TEST(LoadAndRunAotiPackageGpuTest, RealPackageLoadsAndRuns) {
  const char* pkg = std::getenv("KC_TEST_AOTI_PACKAGE");
  const char* helper = std::getenv("KC_AOTI_CHECK");
  if (pkg == nullptr || helper == nullptr) {
    GTEST_SKIP() << "needs a GPU, the kc-aoti-check helper (built with libtorch) and a .pt2: "
                    "set KC_AOTI_CHECK and KC_TEST_AOTI_PACKAGE (bench/gpu/run_all.sh does)";
  }
  auto r = LoadAndRunAotiPackage(pkg);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->load_ms, 0);
  EXPECT_GT(r->steady_run_ms, 0);
  if (const char* bad = std::getenv("KC_TEST_AOTI_CORRUPT_PACKAGE")) {
    auto b = LoadAndRunAotiPackage(bad);
    ASSERT_FALSE(b.ok()) << "a corrupt package loaded and ran: " << b->json;
    EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition) << b.status();
  }
}

}  // namespace
}  // namespace kc::initwarm
