// Filesystem tests of prepare + seal (library level), with fault cases.
#include "initwarm/cache/seal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/cache/lock.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

class SealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "vol";
    view_ = dir_.path() / "run" / "view";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
  }

  fs::path PrepareStaging(const std::string& owner) {
    PrepareOptions p;
    p.root = root_;
    p.fingerprint = fp_;
    p.owner = owner;
    p.view = view_;
    auto r = Prepare(p);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->staging : fs::path();
  }

  SealOptions Opts(const std::string& owner) { return testing::H200SealOptions(root_, owner); }

  testing::ScratchDir dir_;
  fs::path root_;
  fs::path view_;
  std::string fp_;
};

// What seal publishes: directories 2775 (the cache group may quarantine
// and remove them whatever its uid), files 0644 (read-only but for their
// owner), whatever the warmup's umask left (docs/permissions.md).
TEST_F(SealTest, PublishesGroupWritableDirsAndReadOnlyFiles) {
  fs::path staging = PrepareStaging("job-1");
  testing::WriteTritonCache(view_, 2);
  fs::create_directories(view_ / "inductor" / "private");
  ASSERT_EQ(::chmod((view_ / "inductor" / "private").c_str(), 0700), 0);
  testing::WriteFile(view_ / "inductor" / "private" / "k.py", "x");
  ASSERT_EQ(::chmod((view_ / "inductor" / "private" / "k.py").c_str(), 0600), 0);
  auto r = Seal(Opts("job-1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->warning, "");
  const fs::path published = core::Layout(root_).Published(fp_);
  auto mode = [](const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0u;
  };
  EXPECT_EQ(mode(published), 02775u);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(published)) {
    if (e.is_symlink()) continue;
    if (e.is_directory()) {
      EXPECT_EQ(mode(e.path()), 02775u) << e.path();
    } else if (e.path().parent_path() != published) {  // content, not manifest/READY
      ++files;
      EXPECT_EQ(mode(e.path()), 0644u) << e.path();
    }
  }
  EXPECT_GT(files, 2u);
}

TEST_F(SealTest, PrepareThenSealPublishes) {
  fs::path staging = PrepareStaging("job-1");
  EXPECT_EQ(fs::read_symlink(view_), fs::absolute(staging));
  auto written = testing::WriteTritonCache(view_, 3);  // through the view, like a warmup
  auto r = Seal(Opts("job-1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::SealOutcome::kPublished);
  EXPECT_EQ(r->fingerprint, fp_);
  EXPECT_EQ(r->files, written.size());

  core::Layout l(root_);
  EXPECT_FALSE(Exists(staging));
  std::string manifest = ReadFile(l.Manifest(fp_));
  EXPECT_EQ(ReadFile(l.Ready(fp_)), core::Sha256Hex(manifest) + "\n");
  EXPECT_EQ(r->manifest_digest, core::Sha256Hex(manifest));
  auto m = core::ParseManifest(manifest);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->fingerprint_id, fp_);
  EXPECT_EQ(m->frameworks.at("triton"), "3.6.0");
  EXPECT_EQ(m->producer_owner, "job-1");
  ASSERT_EQ(m->files.size(), written.size());
  for (const auto& f : m->files) {
    EXPECT_EQ(f.sha256, core::Sha256Hex(ReadFile(l.Published(fp_) / f.path))) << f.path;
  }
  EXPECT_FALSE(Exists(l.Lock(fp_)));  // released
  // The result JSON carries what the operator checks.
  std::string js = SealResultJson(*r);
  for (const char* k : {"\"manifestDigest\"", "\"walkMs\"", "\"hashMs\"", "\"publishMs\"",
                        "\"totalMs\"", "\"outcome\":\"Published\"", "\"bytes\"", "\"files\""}) {
    EXPECT_NE(js.find(k), std::string::npos) << k << " in " << js;
  }
}

// A caller that verified staging's bytes (a harvest) hands seal the list:
// a file added or rewritten in staging after that is refused and nothing is
// published.
TEST_F(SealTest, WithAnExpectedTreeAnythingElseInStagingIsRefusedUnpublished) {
  fs::path staging = PrepareStaging("job-1");
  testing::WriteTritonCache(view_, 2);
  ExpectedTree verified;
  for (const auto& e : fs::recursive_directory_iterator(staging)) {
    if (!e.is_regular_file()) continue;
    const std::string bytes = ReadFile(e.path());
    verified.files.push_back({e.path().lexically_relative(staging).generic_string(), bytes.size(),
                              core::Sha256Hex(bytes)});
  }
  ASSERT_FALSE(verified.files.empty());
  SealOptions o = Opts("job-1");
  o.expected = verified;
  const core::Layout l(root_);

  WriteFile(staging / "triton" / "planted.cubin", "not verified");
  auto added = Seal(o);
  EXPECT_EQ(added.status().code(), StatusCode::kDataLoss) << added.status();
  EXPECT_NE(added.status().message().find("planted.cubin"), std::string::npos) << added.status();
  EXPECT_FALSE(Exists(l.Ready(fp_)));
  fs::remove(staging / "triton" / "planted.cubin");

  const fs::path first = staging / verified.files[0].path;
  std::string same_size(ReadFile(first).size(), 'x');
  fs::permissions(first, fs::perms::owner_write, fs::perm_options::add);
  WriteFile(first, same_size);
  auto rewritten = Seal(o);
  EXPECT_EQ(rewritten.status().code(), StatusCode::kDataLoss) << rewritten.status();
  EXPECT_NE(rewritten.status().message().find(verified.files[0].path), std::string::npos);
  EXPECT_FALSE(Exists(l.Ready(fp_)));
}

TEST_F(SealTest, SecondPreparerIsRefusedNamingTheHolder) {
  PrepareStaging("job-1");
  PrepareOptions p;
  p.root = root_;
  p.fingerprint = fp_;
  p.owner = "job-2";
  auto r = Prepare(p);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsConflict(r.status()));
  EXPECT_NE(r.status().message().find("job-1"), std::string::npos) << r.status();
}

TEST_F(SealTest, EmptyCacheRefusedUnlessAllowed) {
  PrepareStaging("job-1");
  auto r = Seal(Opts("job-1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status();
  EXPECT_FALSE(Exists(core::Layout(root_).Published(fp_)));
  EXPECT_FALSE(Exists(core::Layout(root_).Lock(fp_)));  // failure releases the lock
  auto o = Opts("job-1");
  o.allow_empty = true;
  auto r2 = Seal(o);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->files, 0u);
}

TEST_F(SealTest, SymlinkOutsideTheCacheIsRefused) {
  fs::path staging = PrepareStaging("job-1");
  testing::WriteTritonCache(staging, 1);
  fs::create_symlink("/etc/passwd", staging / "triton" / "evil");
  auto r = Seal(Opts("job-1"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("triton/evil"), std::string::npos) << r.status();
  EXPECT_FALSE(Exists(core::Layout(root_).Published(fp_)));
  fs::remove(staging / "triton" / "evil");
  fs::create_symlink("../../../../outside", staging / "triton" / "evil2");
  EXPECT_FALSE(Seal(Opts("job-1")).ok());
}

TEST_F(SealTest, InsideSymlinkIsRecorded) {
  fs::path staging = PrepareStaging("job-1");
  auto files = testing::WriteTritonCache(staging, 1);
  fs::create_symlink("../" + files[1], staging / "triton" / "alias");
  auto r = Seal(Opts("job-1"));
  ASSERT_TRUE(r.ok()) << r.status();
  auto m = core::ParseManifest(ReadFile(core::Layout(root_).Manifest(fp_)));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->links.size(), 1u);
  EXPECT_EQ(m->links[0].path, "triton/alias");
}

TEST_F(SealTest, SpecialFileIsRefused) {
  fs::path staging = PrepareStaging("job-1");
  testing::WriteTritonCache(staging, 1);
  ASSERT_EQ(::mkfifo((staging / "nv" / "fifo").c_str(), 0644), 0);
  auto r = Seal(Opts("job-1"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("special file"), std::string::npos) << r.status();
}

// `initwarm seal` tells a refused tree (exit core::kExitRefused) from bad options
// (core::kExitUsage) by SealFingerprint: options it accepts make any
// InvalidArgument of Seal a refusal of the tree.
TEST_F(SealTest, SealFingerprintChecksTheOptionsOnly) {
  fs::path staging = PrepareStaging("job-1");
  testing::WriteTritonCache(staging, 1);
  ASSERT_EQ(::mkfifo((staging / "nv" / "fifo").c_str(), 0644), 0);
  auto o = Opts("job-1");
  auto fp = SealFingerprint(o);
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(*fp, fp_);
  auto r = Seal(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
  auto bad = Opts("job-1");
  bad.fingerprint = "not-an-id";
  EXPECT_EQ(SealFingerprint(bad).status().code(), StatusCode::kInvalidArgument);
  bad = Opts("../escape");
  EXPECT_NE(SealFingerprint(bad).status().message().find("--job-uid"), std::string::npos);
}

TEST_F(SealTest, AlreadyPublishedIsNotReplacedByDefault) {
  PrepareStaging("job-1");
  testing::WriteTritonCache(view_, 2);
  ASSERT_TRUE(Seal(Opts("job-1")).ok());
  core::Layout l(root_);
  std::string first = ReadFile(l.Ready(fp_));

  fs::path staging2 = PrepareStaging("job-2");
  testing::WriteTritonCache(staging2, 3);
  auto r = Seal(Opts("job-2"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsAlreadyExists(r.status())) << r.status();
  EXPECT_EQ(ReadFile(l.Ready(fp_)), first);
  EXPECT_TRUE(Exists(staging2));  // kept for GC

  auto o = Opts("job-2");
  o.replace = true;
  auto r2 = Seal(o);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->outcome, core::SealOutcome::kReplaced);
  EXPECT_NE(ReadFile(l.Ready(fp_)), first);
  EXPECT_TRUE(Exists(fs::path(r2->replaced_to) / "READY"));
  EXPECT_TRUE(core::IsWithin(l.QuarantineRoot(), r2->replaced_to));
}

TEST_F(SealTest, LeftoverWithoutReadyIsMovedAside) {
  core::Layout l(root_);
  WriteFile(l.Published(fp_) / "triton" / "half", "x");  // a crashed publish
  PrepareStaging("job-1");
  testing::WriteTritonCache(view_, 1);
  auto r = Seal(Opts("job-1"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(Exists(l.Published(fp_) / "triton" / "half"));
  bool found = false;
  for (const auto& e : fs::directory_iterator(l.QuarantineRoot())) {
    found |= e.path().filename().string().ends_with("-incomplete");
  }
  EXPECT_TRUE(found);
}

TEST_F(SealTest, MismatchedFingerprintFlagIsRefused) {
  PrepareStaging("job-1");
  auto o = Opts("job-1");
  o.fingerprint = "0123456789abcdef";
  auto r = Seal(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SealTest, MissingStagingNamesPrepare) {
  auto r = Seal(Opts("job-9"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("initwarm prepare"), std::string::npos);
}

// Full disk during seal: a small tmpfs holds the volume; the cache fills it
// so manifest.json cannot be written. Nothing may be published.
TEST_F(SealTest, FullDiskPublishesNothing) {
  const fs::path mnt = dir_.path() / "small";
  testing::SmallVolume volume(mnt, "size=256k");
  if (!volume.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN)";
  root_ = mnt;
  fs::path staging = PrepareStaging("job-1");
  ASSERT_FALSE(staging.empty());
  testing::WriteTritonCache(staging, 2);
  // Fill the rest of the disk with a file inside the cache.
  {
    std::string chunk(4096, 'x');
    FILE* f = std::fopen((staging / "nv" / "filler").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }
  auto r = Seal(Opts("job-1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
  core::Layout l(root_);
  EXPECT_FALSE(Exists(l.Published(fp_)));
  EXPECT_FALSE(Exists(l.Ready(fp_)));
  EXPECT_TRUE(Exists(staging));  // left for GC or a retry
}

// A volume that fills up while a seal replaces a READY cache: whichever of
// its writes runs out of space (the manifest, or READY after the new cache
// was renamed in and the old one moved aside), the seal fails with
// ResourceExhausted and the previous cache is READY again. Found by the
// fault campaign (bench/faults/seal_faults.py): with room for the manifest
// but not READY, the previous cache was left in the quarantine and nothing
// was READY. Each pass leaves one more 4 KiB page free on a full tmpfs.
TEST_F(SealTest, FullDiskDuringReplaceKeepsThePreviousCacheReady) {
  const fs::path mnt = dir_.path() / "small";
  testing::SmallVolume volume(mnt, "size=1m");
  if (!volume.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN)";
  const fs::path filler = mnt / "filler";
  int failed_at_manifest = 0, failed_at_ready = 0, published = 0;
  for (int pages = 0; pages <= 16 && published == 0; ++pages) {
    SCOPED_TRACE("free pages: " + std::to_string(pages));
    root_ = mnt / ("vol" + std::to_string(pages));
    view_ = dir_.path() / ("view" + std::to_string(pages));
    core::Layout l(root_);
    fs::path s1 = PrepareStaging("job-1");
    ASSERT_FALSE(s1.empty());
    testing::WriteTritonCache(s1, 2);
    ASSERT_TRUE(Seal(Opts("job-1")).ok());
    const std::string old_digest = ReadFile(l.Ready(fp_));
    fs::path s2 = PrepareStaging("job-2");
    ASSERT_FALSE(s2.empty());
    testing::WriteTritonCache(s2, 4);
    {  // Fill the volume, then free `pages` pages.
      std::string chunk(4096, 'x');
      FILE* f = std::fopen(filler.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      setvbuf(f, nullptr, _IONBF, 0);
      while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size()) {
      }
      std::fclose(f);
      const auto size = fs::file_size(filler);
      fs::resize_file(filler, size > pages * 4096u ? size - pages * 4096u : 0);
    }
    auto o = Opts("job-2");
    o.replace = true;
    auto r = Seal(o);
    if (r.ok()) {
      EXPECT_EQ(r->outcome, core::SealOutcome::kReplaced);
      EXPECT_NE(ReadFile(l.Ready(fp_)), old_digest);
      ++published;
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
      ASSERT_TRUE(Exists(l.Ready(fp_))) << "the previous cache is not READY: " << r.status();
      EXPECT_EQ(ReadFile(l.Ready(fp_)), old_digest);
      auto m = core::ParseManifest(ReadFile(l.Manifest(fp_)));
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(m->producer_owner, "job-1");
      EXPECT_TRUE(Exists(s2));  // the new cache is left for a retry or GC
      if (Exists(s2 / core::kManifestFileName)) {
        ++failed_at_ready;
      } else {
        ++failed_at_manifest;
      }
    }
    fs::remove(filler);
  }
  EXPECT_GT(failed_at_manifest, 0);
  EXPECT_GT(failed_at_ready, 0) << "no pass had room for the manifest and not for READY";
  EXPECT_EQ(published, 1);
}

}  // namespace
}  // namespace kc::initwarm
