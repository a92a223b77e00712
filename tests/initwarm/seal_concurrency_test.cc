// Two sealers for the same fingerprint at once: exactly one publishes, the
// other exits non-zero naming why (lock held, or already published), and the
// published cache verifies.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/exit_codes.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

const std::string kBin = KC_INITWARM_BIN;
const std::string kFp = "0123456789abcdef";

void FillCache(const fs::path& dir, std::uint32_t seed) {
  for (int i = 0; i < 30; ++i) {
    testing::WriteFile(dir / ("triton/K" + std::to_string(i % 6) + "/f" + std::to_string(i)),
                       testing::Bytes(20000 + i * 777, seed + i));
  }
  testing::WriteFile(dir / "inductor/big", testing::Bytes(16 << 20, seed));
}

TEST(SealConcurrency, ExactlyOnePublishes) {
  int lock_losses = 0;
  int ready_losses = 0;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    testing::ScratchDir d;
    core::Layout l(d.path());
    // Two warmups whose staging exists (prepared before the lock existed,
    // or a preparer whose lock went stale): the sealers race for the lock.
    FillCache(l.Staging(kFp, "job-x"), 1);
    FillCache(l.Staging(kFp, "job-y"), 2);
    int rc[2];
    std::string out[2];
    auto run = [&](int i, const std::string& uid) {
      rc[i] = RunProcess({kBin, "seal", "--root", d.path().string(), "--fingerprint", kFp,
                          "--job-uid", uid, "--termination-log", ""},
                         {}, &out[i]);
    };
    std::thread a(run, 0, "job-x");
    std::thread b(run, 1, "job-y");
    a.join();
    b.join();
    ASSERT_TRUE((rc[0] == 0) != (rc[1] == 0)) << rc[0] << ": " << out[0] << "\n"
                                              << rc[1] << ": " << out[1];
    int loser = rc[0] == 0 ? 1 : 0;
    if (rc[loser] == core::kExitLockHeld) {
      ++lock_losses;
      EXPECT_NE(out[loser].find("another warmup is writing this fingerprint"), std::string::npos)
          << out[loser];
    } else {
      ASSERT_EQ(rc[loser], core::kExitAlreadyReady) << out[loser];
      ++ready_losses;
      EXPECT_NE(out[loser].find("already published"), std::string::npos) << out[loser];
    }
    auto m = core::ParseManifest(testing::ReadFile(l.Manifest(kFp)));
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->producer_owner, loser == 0 ? "job-y" : "job-x");
    std::string vout;
    EXPECT_EQ(RunProcess({kBin, "verify", "--root", d.path().string(), "--fingerprint", kFp,
                          "--level", "Checksums", "--no-quarantine"},
                         {}, &vout),
              0)
        << vout;
    // The loser's staging is kept (for GC), and no lock is left behind.
    EXPECT_TRUE(fs::exists(l.Staging(kFp, loser == 0 ? "job-x" : "job-y")));
    EXPECT_FALSE(fs::exists(l.Lock(kFp)));
  }
  std::cout << "losers by lock: " << lock_losses << ", by already-published: " << ready_losses
            << "\n";
}

}  // namespace
}  // namespace kc::initwarm
