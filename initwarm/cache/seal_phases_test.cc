// The seal's phases one at a time, on small trees in a scratch volume.
#include "initwarm/cache/seal_phases.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/cache/lock.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

class SealPhasesTest : public ::testing::Test {
 protected:
  SealOptions Opts(const std::string& owner = "job-1") const {
    return testing::H200SealOptions(root_, owner);
  }

  // The staging directory of `owner`, as prepare makes it, with `kernels`
  // Triton kernels (none: empty).
  fs::path MakeStaging(int kernels, const std::string& owner = "job-1") const {
    const fs::path staging = layout_.Staging(fp_, owner);
    fs::create_directories(staging);
    if (kernels > 0) testing::WriteTritonCache(staging, kernels);
    return staging;
  }

  SealPaths Paths(const std::string& owner = "job-1") const {
    return {layout_, layout_.Staging(fp_, owner), layout_.Published(fp_), layout_.Lock(fp_)};
  }

  // A result as the phases before publishing leave it.
  SealResult Sealed(const std::string& digest) const {
    SealResult r;
    r.fingerprint = fp_;
    r.manifest_digest = digest;
    return r;
  }

  // A READY cache of fp_ sealed by job-0; returns its READY's content.
  std::string PublishPrevious() const {
    auto published = testing::PublishH200Cache(
        root_, [](const fs::path& staging) { testing::WriteTritonCache(staging, 1); }, "job-0");
    EXPECT_TRUE(published.ok()) << published.status();
    return ReadFile(layout_.Ready(fp_));
  }

  // The names in the quarantine (none when it does not exist).
  std::vector<std::string> Quarantined() const {
    std::vector<std::string> out;
    if (!Exists(layout_.QuarantineRoot())) return out;
    for (const auto& e : fs::directory_iterator(layout_.QuarantineRoot())) {
      out.push_back(e.path().filename().string());
    }
    return out;
  }

  testing::ScratchDir dir_;
  fs::path root_ = dir_.path() / "vol";
  core::Layout layout_{root_};
  std::string fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
};

TEST_F(SealPhasesTest, PlanSealNamesTheLayoutsPaths) {
  MakeStaging(0);
  SealResult r;
  auto p = PlanSeal(Opts(), &r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(r.fingerprint, fp_);
  EXPECT_EQ(r.directory, layout_.Published(fp_).string());
  EXPECT_EQ(p->staging, layout_.Staging(fp_, "job-1"));
  EXPECT_EQ(p->published, layout_.Published(fp_));
  EXPECT_EQ(p->lock, layout_.Lock(fp_));
}

TEST_F(SealPhasesTest, PlanSealTakesTheStagingGiven) {
  const fs::path elsewhere = root_ / "elsewhere";
  fs::create_directories(elsewhere);
  SealOptions o = Opts();
  o.staging = elsewhere;
  SealResult r;
  auto p = PlanSeal(o, &r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->staging, elsewhere);
  EXPECT_EQ(p->published, layout_.Published(fp_));
}

TEST_F(SealPhasesTest, PlanSealRefusesAMissingStagingAndBadOptions) {
  SealResult r;
  auto missing = PlanSeal(Opts(), &r);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(IsNotFound(missing.status())) << missing.status();
  EXPECT_NE(missing.status().message().find("initwarm prepare"), std::string::npos);

  MakeStaging(0);
  SealOptions facts_alone = Opts();
  facts_alone.runtime.reset();
  EXPECT_EQ(PlanSeal(facts_alone, &r).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SealPhasesTest, LockSealHoldsTheLockAndRefusesAReadyCache) {
  MakeStaging(0);
  fs::path locked;
  ASSERT_TRUE(LockSeal(Opts(), Paths(), fp_, &locked).ok());
  EXPECT_EQ(locked, layout_.Lock(fp_));
  EXPECT_TRUE(Exists(layout_.Lock(fp_)));

  MakeStaging(0, "job-2");
  fs::path locked2;
  Status other = LockSeal(Opts("job-2"), Paths("job-2"), fp_, &locked2);
  EXPECT_TRUE(IsConflict(other)) << other;
  EXPECT_TRUE(locked2.empty());
  ASSERT_TRUE(ReleaseLock(locked, "job-1").ok());

  PublishPrevious();
  locked.clear();
  Status ready = LockSeal(Opts(), Paths(), fp_, &locked);
  EXPECT_TRUE(IsAlreadyExists(ready)) << ready;
  EXPECT_NE(ready.message().find("--replace"), std::string::npos) << ready;
  EXPECT_EQ(locked, layout_.Lock(fp_));  // held: Seal releases it
  ASSERT_TRUE(ReleaseLock(locked, "job-1").ok());

  SealOptions replace = Opts();
  replace.replace = true;
  EXPECT_TRUE(LockSeal(replace, Paths(), fp_, &locked).ok());
}

TEST_F(SealPhasesTest, WalkStagingListsTheTreeAndRefusesAnEmptyOne) {
  const fs::path staging = MakeStaging(2);
  auto staged = SafeDir::OpenUnder(root_, staging);
  ASSERT_TRUE(staged.ok()) << staged.status();
  auto walk = WalkStaging(Opts(), *staged, staging);
  ASSERT_TRUE(walk.ok()) << walk.status();
  std::vector<std::string> got;
  for (const auto& f : walk->files) got.push_back(f.path);
  std::vector<std::string> want = testing::WriteTritonCache(dir_.path() / "again", 2);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);

  const fs::path empty = MakeStaging(0, "job-2");
  auto empty_dir = SafeDir::OpenUnder(root_, empty);
  ASSERT_TRUE(empty_dir.ok()) << empty_dir.status();
  auto refused = WalkStaging(Opts("job-2"), *empty_dir, empty);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status();
  SealOptions allow = Opts("job-2");
  allow.allow_empty = true;
  auto allowed = WalkStaging(allow, *empty_dir, empty);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_TRUE(allowed->files.empty());
}

TEST_F(SealPhasesTest, HashStagingAndTheManifestDescribeTheTree) {
  const fs::path staging = MakeStaging(2);
  auto staged = SafeDir::OpenUnder(root_, staging);
  ASSERT_TRUE(staged.ok()) << staged.status();
  auto walk = WalkStaging(Opts(), *staged, staging);
  ASSERT_TRUE(walk.ok()) << walk.status();
  auto sums = HashStaging(Opts(), *staged, staging, *walk);
  ASSERT_TRUE(sums.ok()) << sums.status();
  ASSERT_EQ(sums->size(), walk->files.size());
  std::uint64_t bytes = 0;
  for (size_t i = 0; i < walk->files.size(); ++i) {
    EXPECT_EQ((*sums)[i], core::Sha256Hex(ReadFile(staging / walk->files[i].path)))
        << walk->files[i].path;
    bytes += walk->files[i].size;
  }

  SealResult r = Sealed("");
  ASSERT_TRUE(WriteSealManifest(Opts(), *staged, staging, *walk, *sums, &r).ok());
  const std::string text = ReadFile(staging / core::kManifestFileName);
  EXPECT_EQ(r.manifest_digest, core::Sha256Hex(text));
  EXPECT_EQ(r.files, walk->files.size());
  EXPECT_EQ(r.bytes, bytes);
  auto m = core::ParseManifest(text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->fingerprint_id, fp_);
  EXPECT_EQ(m->producer_owner, "job-1");
  EXPECT_EQ(m->node, testing::H200Facts());
  EXPECT_EQ(m->frameworks.at("triton"), "3.6.0");
  ASSERT_EQ(m->files.size(), walk->files.size());
  for (size_t i = 0; i < m->files.size(); ++i) {
    EXPECT_EQ(m->files[i].path, walk->files[i].path);
    EXPECT_EQ(m->files[i].sha256, (*sums)[i]);
  }
}

TEST_F(SealPhasesTest, MoveAsideWithNoPreviousCacheMovesNothing) {
  SealResult r = Sealed("");
  auto aside = MoveAside(Opts(), Paths(), &r);
  ASSERT_TRUE(aside.ok()) << aside.status();
  EXPECT_TRUE(aside->empty());
  EXPECT_TRUE(r.replaced_to.empty());
  EXPECT_TRUE(Quarantined().empty());
}

TEST_F(SealPhasesTest, MoveAsideQuarantinesALeftoverWithoutReady) {
  WriteFile(layout_.Published(fp_) / "triton" / "half", "x");  // a crashed publish
  SealResult r = Sealed("");
  auto aside = MoveAside(Opts(), Paths(), &r);
  ASSERT_TRUE(aside.ok()) << aside.status();
  EXPECT_TRUE(aside->empty());  // nothing READY was replaced
  EXPECT_TRUE(r.replaced_to.empty());
  EXPECT_NE(r.outcome, core::SealOutcome::kReplaced);
  EXPECT_FALSE(Exists(layout_.Published(fp_)));
  auto names = Quarantined();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(names[0].ends_with("-incomplete")) << names[0];
  EXPECT_EQ(ReadFile(layout_.QuarantineRoot() / names[0] / "triton" / "half"), "x");
}

TEST_F(SealPhasesTest, MoveAsideRefusesAReadyCacheUnlessReplacing) {
  const std::string old_ready = PublishPrevious();
  SealResult r = Sealed("");
  auto refused = MoveAside(Opts(), Paths(), &r);
  EXPECT_TRUE(IsAlreadyExists(refused.status())) << refused.status();
  EXPECT_EQ(ReadFile(layout_.Ready(fp_)), old_ready);
  EXPECT_TRUE(Quarantined().empty());

  SealOptions replace = Opts();
  replace.replace = true;
  auto aside = MoveAside(replace, Paths(), &r);
  ASSERT_TRUE(aside.ok()) << aside.status();
  EXPECT_TRUE(core::IsWithin(layout_.QuarantineRoot(), *aside));
  EXPECT_TRUE(aside->filename().string().ends_with("-replaced")) << *aside;
  EXPECT_EQ(ReadFile(*aside / core::kReadyFileName), old_ready);
  EXPECT_FALSE(Exists(layout_.Published(fp_)));
  EXPECT_EQ(r.outcome, core::SealOutcome::kReplaced);
  EXPECT_EQ(r.replaced_to, aside->string());
}

TEST_F(SealPhasesTest, PublishStagingRenamesStagingAndWritesReady) {
  const fs::path staging = MakeStaging(1);
  const std::string digest(64, 'a');
  ASSERT_TRUE(PublishStaging(Paths(), Sealed(digest)).ok());
  EXPECT_FALSE(Exists(staging));
  EXPECT_EQ(ReadFile(layout_.Ready(fp_)), digest + "\n");
  EXPECT_TRUE(Exists(layout_.Published(fp_) / "inductor/fxgraph/ab/fabc"));
}

// READY cannot be written when the staging tree holds a non-empty directory
// of that name: the rename of the written file over it fails.
TEST_F(SealPhasesTest, PublishStagingThatFailsPutsStagingBack) {
  const fs::path staging = MakeStaging(1);
  WriteFile(staging / core::kReadyFileName / "in-the-way", "x");
  Status s = PublishStaging(Paths(), Sealed(std::string(64, 'a')));
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(Exists(layout_.Published(fp_)));
  EXPECT_TRUE(Exists(staging / "inductor/fxgraph/ab/fabc"));
  for (const auto& e : fs::directory_iterator(staging)) {
    EXPECT_FALSE(e.path().filename().string().starts_with("READY.tmp")) << e.path();
  }
}

TEST_F(SealPhasesTest, PublishReplacesAReadyCache) {
  const std::string old_ready = PublishPrevious();
  MakeStaging(1);
  SealOptions replace = Opts();
  replace.replace = true;
  const std::string digest(64, 'b');
  SealResult r = Sealed(digest);
  ASSERT_TRUE(Publish(replace, Paths(), &r).ok());
  EXPECT_EQ(r.outcome, core::SealOutcome::kReplaced);
  EXPECT_EQ(ReadFile(layout_.Ready(fp_)), digest + "\n");
  EXPECT_EQ(ReadFile(fs::path(r.replaced_to) / core::kReadyFileName), old_ready);
}

TEST_F(SealPhasesTest, PublishThatFailsPutsThePreviousCacheBack) {
  const std::string old_ready = PublishPrevious();
  const fs::path staging = MakeStaging(1);
  WriteFile(staging / core::kReadyFileName / "in-the-way", "x");
  SealOptions replace = Opts();
  replace.replace = true;
  SealResult r = Sealed(std::string(64, 'b'));
  Status s = Publish(replace, Paths(), &r);
  ASSERT_FALSE(s.ok());
  // Replaced by exchange, the previous cache was never moved; moved aside
  // and renamed (a filesystem without RENAME_EXCHANGE), it is put back.
  EXPECT_NE(s.message().find("the previous cache is"), std::string::npos) << s;
  EXPECT_EQ(ReadFile(layout_.Ready(fp_)), old_ready);
  auto m = core::ParseManifest(ReadFile(layout_.Manifest(fp_)));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->producer_owner, "job-0");
  EXPECT_TRUE(Quarantined().empty());
  EXPECT_TRUE(Exists(staging / "inductor/fxgraph/ab/fabc"));  // left for a retry or GC
}

TEST_F(SealPhasesTest, PublishThatFailsWithNoPreviousCachePublishesNothing) {
  const fs::path staging = MakeStaging(1);
  WriteFile(staging / core::kReadyFileName / "in-the-way", "x");
  SealResult r = Sealed(std::string(64, 'b'));
  Status s = Publish(Opts(), Paths(), &r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find("READY again"), std::string::npos) << s;
  EXPECT_FALSE(Exists(layout_.Published(fp_)));
  EXPECT_TRUE(Exists(staging));
}

}  // namespace
}  // namespace kc::initwarm
