// Crash safety of `initwarm seal`: SIGKILL at many deterministic points
// (KC_CRASH_AT=<phase>:<n>, see initwarm/testing/crash_at.h; the program is
// `initwarm-testing`, `initwarm` with that hook) while a new cache
// replaces a published one. After every kill, READY shows the previous
// cache, nothing, or the new complete cache, and `initwarm verify` passes on
// whatever is READY; the dead sealer's lock does not block the next warmup.
#include <gtest/gtest.h>

#include <filesystem>
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
using testing::ReadFile;
using testing::RunProcess;
using testing::WriteFile;

const std::string kBin = KC_INITWARM_BIN;
const std::string kFp = "0123456789abcdef";

std::vector<std::string> Cmd(std::vector<std::string> args) {
  args.insert(args.begin(), kBin);
  return args;
}

// 40 small Triton-like files over 8 kernel dirs plus two 3 MiB files.
void FillCache(const fs::path& dir, std::uint32_t seed) {
  for (int i = 0; i < 40; ++i) {
    WriteFile(dir / ("triton/K" + std::to_string(i % 8) + "/f" + std::to_string(i) + ".bin"),
              testing::Bytes(1024 + (i * 1237) % 50000, seed + i));
  }
  WriteFile(dir / "inductor/big1", testing::Bytes(3 << 20, seed + 100));
  WriteFile(dir / "nv/big2", testing::Bytes(3 << 20, seed + 200));
}

int Seal(const fs::path& root, const std::string& uid, const std::string& crash, std::string* out) {
  std::vector<std::string> env;
  if (!crash.empty()) env.push_back("KC_CRASH_AT=" + crash);
  return RunProcess(Cmd({"seal", "--root", root.string(), "--fingerprint", kFp, "--job-uid", uid,
                         "--replace", "--termination-log", ""}),
                    env, out);
}

int Prepare(const fs::path& root, const std::string& uid, std::string* out) {
  return RunProcess(Cmd({"prepare", "--root", root.string(), "--fingerprint", kFp, "--job-uid", uid,
                         "--view", ""}),
                    {}, out);
}

int Verify(const fs::path& root, std::string* out) {
  return RunProcess(Cmd({"verify", "--root", root.string(), "--fingerprint", kFp, "--level",
                         "Checksums", "--no-quarantine"}),
                    {}, out);
}

TEST(SealCrash, KillAtManyPointsNeverShowsAHalfCache) {
  const std::vector<std::string> points = {
      "hash:1",     "hash:2",     "hash:5",      "hash:10",       "hash:20",       "hash:30",
      "hash:41",    "bytes:1",    "bytes:65536", "bytes:1048576", "bytes:3000000", "bytes:6000000",
      "fsync:1",    "fsync:20",   "fsync:41",    "dirsync:1",     "dirsync:4",     "dirsync:9",
      "manifest:0", "manifest:1", "publish:0",   "publish:1",     "publish:2",     "publish:3",
      "publish:4",  "publish:5",  "publish:6",
  };
  int kills = 0;
  for (const auto& point : points) {
    SCOPED_TRACE(point);
    testing::ScratchDir d;
    const fs::path root = d.path();
    core::Layout l(root);
    std::string out;
    // The previous published cache (job-a).
    ASSERT_EQ(Prepare(root, "job-a", &out), 0) << out;
    FillCache(l.Staging(kFp, "job-a"), 1);
    ASSERT_EQ(Seal(root, "job-a", "", &out), 0) << out;
    const std::string old_digest = ReadFile(l.Ready(kFp));
    // The replacement (job-b), killed at `point`.
    ASSERT_EQ(Prepare(root, "job-b", &out), 0) << out;
    FillCache(l.Staging(kFp, "job-b"), 2);
    int rc = Seal(root, "job-b", point, &out);
    ASSERT_EQ(rc, 128 + 9) << "failpoint " << point << " was not reached: " << out;
    ++kills;

    // Invariant: READY is the old cache, absent, or a complete new one.
    if (fs::exists(l.Ready(kFp))) {
      std::string digest = ReadFile(l.Ready(kFp));
      auto m = core::ParseManifest(ReadFile(l.Manifest(kFp)));
      ASSERT_TRUE(m.ok()) << m.status();
      if (digest == old_digest) {
        EXPECT_EQ(m->producer_owner, "job-a");
      } else {
        EXPECT_EQ(m->producer_owner, "job-b");
      }
      EXPECT_EQ(Verify(root, &out), 0) << out;
    }
    // Nothing else anywhere claims READY.
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.path().filename() == "READY") {
        EXPECT_TRUE(e.path() == l.Ready(kFp) || core::IsWithin(l.QuarantineRoot(), e.path()))
            << e.path();
      }
    }
    // The dead sealer's lock does not block a new warmup on this host...
    if (fs::exists(l.Staging(kFp, "job-b"))) {
      // ...and the same job can seal again after the crash.
      EXPECT_EQ(Seal(root, "job-b", "", &out), 0) << out;
      EXPECT_EQ(Verify(root, &out), 0) << out;
    }
    EXPECT_EQ(Prepare(root, "job-c", &out), 0) << out;
  }
  EXPECT_GE(kills, 20);
  std::cout << "seal crash points killed: " << kills << "\n";
}

}  // namespace
}  // namespace kc::initwarm
