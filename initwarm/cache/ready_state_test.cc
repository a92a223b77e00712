// ReadReady against real trees: absent, a sealed cache, and READY garbage.
#include "initwarm/cache/ready_state.h"

#include <gtest/gtest.h>

#include "core/layout.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

TEST(ReadyState, AbsentUntilSealed) {
  testing::ScratchDir dir;
  const fs::path root = dir.path() / "vol";
  const std::string fp = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
  EXPECT_EQ(ReadReady(root, fp).kind, ReadyState::kAbsent);  // not mounted
  auto digest = testing::SealTestCache(
      root, fp, "job-1", [](const fs::path& staging) { testing::WriteTritonCache(staging, 1); });
  ASSERT_TRUE(digest.ok()) << digest.status();
  ReadyState st = ReadReady(root, fp);
  EXPECT_EQ(st.kind, ReadyState::kDigest);
  EXPECT_EQ(st.digest, *digest);
  EXPECT_EQ(ReadReady(root, "0123456789abcdef").kind, ReadyState::kAbsent);

  testing::WriteFile(core::Layout(root).Ready(fp), "not a digest\n");
  st = ReadReady(root, fp);
  EXPECT_EQ(st.kind, ReadyState::kCorrupt);
  EXPECT_EQ(st.why, "READY does not hold a sha256 (64 hex digits)");

  testing::WriteFile(core::Layout(root).Ready(fp), std::string(64, 'a') + "\n");
  st = ReadReady(root, fp);
  EXPECT_EQ(st.kind, ReadyState::kCorrupt);  // names another manifest
  EXPECT_EQ(st.digest, std::string(64, 'a'));
}

// A READY that is not the operator's digest is reported as it is, its
// manifest unread: here a manifest that is not even a file.
TEST(ReadyState, ADigestThatIsNotTheOperatorsLeavesTheManifestUnread) {
  testing::ScratchDir dir;
  const fs::path root = dir.path() / "vol";
  const std::string fp = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
  auto digest = testing::SealTestCache(
      root, fp, "job-1", [](const fs::path& staging) { testing::WriteTritonCache(staging, 1); });
  ASSERT_TRUE(digest.ok()) << digest.status();
  const core::Layout l(root);
  const std::string rewritten(64, 'b');
  testing::WriteFile(l.Ready(fp), rewritten + "\n");
  fs::remove(l.Manifest(fp));
  fs::create_directory(l.Manifest(fp));
  EXPECT_EQ(ReadReady(root, fp).kind, ReadyState::kCorrupt) << "no expectation: checked";
  ReadyState st = ReadReady(root, fp, *digest);
  EXPECT_EQ(st.kind, ReadyState::kDigest);
  EXPECT_EQ(st.digest, rewritten);
  EXPECT_EQ(ReadReady(root, fp, rewritten).kind, ReadyState::kCorrupt)
      << "the expected digest: its manifest is checked";
}

}  // namespace
}  // namespace kc::initwarm
