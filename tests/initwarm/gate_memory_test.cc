// The gate (`initwarm wait`, the real binary) against caches a volume writer
// built to make it spend memory before it refuses: a manifest of hundreds of
// thousands of entries, rewritten consistently with READY, and a manifest
// nested millions of levels deep. Each case asserts the refusal, the reason
// it names, and the peak resident memory of the gate process (ru_maxrss of
// the child, from wait4).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/exit_codes.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;

const std::string kBin = KC_INITWARM_BIN;
const std::string kFp = "0123456789abcdef";
const std::string kNode =
    R"({"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04","cudaDriver":"13.0","arch":"amd64"})";
// The operator's record of what was sealed: not what the volume now holds.
const std::string kSealedDigest(64, 'e');

struct GateRun {
  int rc = -1;
  std::string out;
  long peak_kib = 0;  // ru_maxrss of the child
};

GateRun RunMeasured(const std::vector<std::string>& argv) {
  GateRun r;
  r.rc = testing::RunProcess(argv, {}, &r.out, &r.peak_kib);
  return r;
}

// A manifest listing `entries` files, each with a made-up size and sha256,
// written as seal writes it (pretty JSON).
std::string HugeManifest(std::size_t entries) {
  core::Manifest m;
  m.fingerprint_id = kFp;
  m.created_at = "2026-12-07T00:00:00Z";
  m.files.reserve(entries);
  for (std::size_t i = 0; i < entries; ++i) {
    m.files.push_back(
        {"triton/" + std::to_string(i % 997) + "/kernel_" + std::to_string(i) + ".cubin", 4096,
         std::string(64, 'a')});
  }
  core::FinalizeManifest(&m);
  return core::ManifestToJson(m);
}

// Runs `build` in a child process: the test process never holds the
// hostile manifest, so the gate forked from it starts small (a child's
// ru_maxrss counts what it inherited before exec).
void InChild(const std::function<void()>& build) {
  pid_t pid = ::fork();
  if (pid == 0) {
    build();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

class GateMemory : public ::testing::Test {
 protected:
  // Publishes what `manifest` makes as v1/<fp> with a READY that names it:
  // a consistent rewrite, as a volume writer would leave it.
  void PlantCache(const std::function<std::string()>& manifest) {
    const core::Layout l(root());
    InChild([&] {
      const std::string text = manifest();
      fs::create_directories(l.Published(kFp));
      WriteFile(l.Published(kFp) / "manifest.json", text);
      WriteFile(l.Ready(kFp), core::Sha256Hex(text) + "\n");
    });
  }
  GateRun Gate(const std::string& expected_digest) {
    const fs::path answer = d_.path() / "resolve.json";
    WriteFile(answer, R"({"fingerprint":")" + kFp + R"(","state":"Ready","directory":"v1/)" + kFp +
                          R"(","manifestDigest":")" + expected_digest +
                          R"(","message":"ready","node":)" + kNode + "}");
    return RunMeasured({kBin, "wait", "--root", root(), "--resolve-file", answer.string(), "--view",
                        (d_.path() / "run" / "view").string(), "--no-probe", "--digest-grace", "0s",
                        "--poll-initial", "1s", "--timeout", "2s"});
  }
  std::string root() const { return (d_.path() / "vol").string(); }

  testing::ScratchDir d_;
};

constexpr long kFlatKib = 48 * 1024;  // "tens of MB"

TEST_F(GateMemory, TheOperatorsDigestRefusesAHugeRewrittenManifestUnread) {
  PlantCache([] { return HugeManifest(300'000); });  // over 40 MiB, under the 64 MiB read bound
  ASSERT_GT(fs::file_size(core::Layout(root()).Manifest(kFp)), 40u << 20);
  GateRun r = Gate(kSealedDigest);
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("differs from the one the operator recorded"), std::string::npos) << r.out;
  EXPECT_LT(r.peak_kib, kFlatKib) << "peak " << r.peak_kib / 1024 << " MiB\n" << r.out;
  std::cout << "[ gate peak ] huge manifest, operator's digest: " << r.peak_kib / 1024 << " MiB\n";
}

TEST_F(GateMemory, WithoutADigestTheManifestBoundsRefuseItBeforeAnyParse) {
  PlantCache([] { return HugeManifest(300'000); });
  GateRun r = Gate("");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("holds more than"), std::string::npos) << r.out;
  // The text itself is read (at most core::kMaxManifestBytes), never a tree.
  EXPECT_LT(r.peak_kib, static_cast<long>(core::kMaxManifestBytes / 1024) + kFlatKib)
      << "peak " << r.peak_kib / 1024 << " MiB\n"
      << r.out;
  std::cout << "[ gate peak ] huge manifest, no digest: " << r.peak_kib / 1024 << " MiB\n";
}

TEST_F(GateMemory, ADeeplyNestedManifestIsRefusedAtTheDepthBound) {
  PlantCache([] { return std::string(20'000'000, '['); });
  GateRun r = Gate("");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("nests deeper than"), std::string::npos) << r.out;
  EXPECT_LT(r.peak_kib, 20'000 + kFlatKib) << "peak " << r.peak_kib / 1024 << " MiB\n" << r.out;
  std::cout << "[ gate peak ] 20 MB of '[', no digest: " << r.peak_kib / 1024 << " MiB\n";
}

}  // namespace
}  // namespace kc::initwarm
