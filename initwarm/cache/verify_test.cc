// The validation ladder on real sealed caches, with the fault cases.
#include "initwarm/cache/verify.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/manifest.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cache/seal.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using core::Level;
using testing::ReadFile;
using testing::WriteFile;

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "vol";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
  }

  // Prepares, fills (by `fill`) and seals a cache; returns its directory.
  fs::path Publish(const std::function<void(const fs::path&)>& fill) {
    auto r = testing::SealTestCache(root_, fp_, "job-1", fill);
    EXPECT_TRUE(r.ok()) << r.status();
    return core::Layout(root_).Published(fp_);
  }
  fs::path PublishTriton(int arch = 90) {
    return Publish([arch](const fs::path& d) { testing::WriteTritonCache(d, 3, arch); });
  }

  VerifyOptions Opts(const fs::path& dir, Level level = Level::kTargetArch) {
    VerifyOptions o;
    o.dir = dir;
    o.level = level;
    o.expected_fingerprint = fp_;
    o.node = testing::H200Facts();
    return o;
  }

  static void ExpectFail(const VerifyReport& r, Level level, const std::string& file,
                         const std::string& reason) {
    ASSERT_FALSE(r.ok);
    EXPECT_EQ(r.finding.level, level) << r.finding.ToString();
    EXPECT_EQ(r.finding.file, file) << r.finding.ToString();
    EXPECT_NE(r.finding.reason.find(reason), std::string::npos) << r.finding.ToString();
  }

  // Rewrites manifest.json with `edit` applied and READY matching it.
  static void RewriteManifest(const fs::path& dir, const std::function<void(std::string*)>& edit) {
    std::string text = ReadFile(dir / "manifest.json");
    edit(&text);
    WriteFile(dir / "manifest.json", text);
    WriteFile(dir / "READY", core::Sha256Hex(text) + "\n");
  }

  testing::ScratchDir dir_;
  fs::path root_;
  std::string fp_;
};

TEST_F(VerifyTest, GoodCachePassesEveryLevel) {
  fs::path d = PublishTriton();
  VerifyReport r = VerifyCache(Opts(d));
  ASSERT_TRUE(r.ok) << r.finding.ToString();
  EXPECT_EQ(r.passed, 4);
  EXPECT_EQ(r.kernels, 3u);
  std::vector<std::string> loaded;
  auto o = Opts(d, Level::kLoadTest);
  o.load_cubin = [&](std::string_view image, std::string_view name) {
    loaded.emplace_back(name);
    return OkStatus();
  };
  r = VerifyCache(o);
  ASSERT_TRUE(r.ok) << r.finding.ToString();
  EXPECT_EQ(r.passed, 5);
  EXPECT_EQ(loaded.size(), 3u);
  // Without a loader LoadTest is skipped and says so.
  r = VerifyCache(Opts(d, Level::kLoadTest));
  ASSERT_TRUE(r.ok);
  EXPECT_NE(r.notes.back().find("no GPU"), std::string::npos);
}

TEST_F(VerifyTest, CubinThatDoesNotLoad) {
  fs::path d = PublishTriton();
  auto o = Opts(d, Level::kLoadTest);
  o.load_cubin = [](std::string_view, std::string_view name) -> Status {
    if (name.find("kernel_1") != std::string_view::npos) {
      return FailedPreconditionError(std::string(name) + ": CUDA_ERROR_NO_BINARY_FOR_GPU");
    }
    return OkStatus();
  };
  VerifyReport r = VerifyCache(o);
  ExpectFail(r, Level::kLoadTest, "triton/H1001ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_1.cubin",
             "NO_BINARY_FOR_GPU");
}

// LoadTest's package rung runs after the cubins, for `initwarm verify` and
// the gate alike; never below LoadTest.
TEST_F(VerifyTest, APackageThatDoesNotLoadFailsLoadTest) {
  fs::path d = PublishTriton();
  int calls = 0;
  auto o = Opts(d, Level::kLoadTest);
  o.check_packages = [&](const fs::path& dir, const core::Manifest& m,
                         std::vector<std::string>* notes) -> std::optional<core::Finding> {
    ++calls;
    EXPECT_EQ(dir, d);
    EXPECT_FALSE(m.files.empty());
    notes->push_back("aoti: checked 1 package");
    return core::Finding{Level::kLoadTest, "inductor/model.pt2", "built for sm_80"};
  };
  VerifyReport r = VerifyCache(o);
  ExpectFail(r, Level::kLoadTest, "inductor/model.pt2", "built for sm_80");
  EXPECT_EQ(r.passed, 4);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.notes.back(), "aoti: checked 1 package");
  o.level = Level::kTargetArch;
  ASSERT_TRUE(VerifyCache(o).ok);
  EXPECT_EQ(calls, 1);
}

TEST_F(VerifyTest, TruncatedFile) {
  fs::path d = PublishTriton();
  const std::string f = "triton/H1000ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_0.cubin";
  fs::resize_file(d / f, 100);
  // Sizes are compared from level 1 on.
  ExpectFail(VerifyCache(Opts(d, Level::kManifest)), Level::kManifest, f, "truncated");
}

TEST_F(VerifyTest, OneFlippedByte) {
  fs::path d = PublishTriton();
  const std::string f = "triton/H1002ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_2.cubin";
  std::string content = ReadFile(d / f);
  content[content.size() / 2] ^= 0x01;
  WriteFile(d / f, content);
  ExpectFail(VerifyCache(Opts(d)), Level::kChecksums, f, "sha256 mismatch");
  // Manifest level alone does not read file contents.
  EXPECT_TRUE(VerifyCache(Opts(d, Level::kFingerprint)).ok);
}

TEST_F(VerifyTest, MissingReady) {
  fs::path d = PublishTriton();
  fs::remove(d / "READY");
  ExpectFail(VerifyCache(Opts(d, Level::kManifest)), Level::kManifest, "READY", "missing");
}

TEST_F(VerifyTest, ReadyDigestMismatch) {
  fs::path d = PublishTriton();
  WriteFile(d / "READY", std::string(64, '0') + "\n");
  ExpectFail(VerifyCache(Opts(d, Level::kManifest)), Level::kManifest, "READY", "hashes to");
}

// The operator's digest is compared with READY before manifest.json is
// read: a cache whose READY names another manifest is refused for 64 bytes
// read, whatever the manifest holds (here: none at all).
TEST_F(VerifyTest, TheOperatorsDigestIsComparedBeforeTheManifestIsRead) {
  fs::path dir = PublishTriton();
  const std::string sealed = testing::ReadFile(dir / "READY").substr(0, 64);
  VerifyOptions o = Opts(dir, Level::kManifest);
  o.expected_digest = sealed;
  EXPECT_TRUE(VerifyCache(o).ok) << VerifyCache(o).finding.ToString();
  RewriteManifest(dir, [](std::string* t) { t->insert(t->find('{') + 1, " "); });
  fs::remove(dir / "manifest.json");
  ExpectFail(VerifyCache(o), Level::kManifest, "READY",
             "differs from the one the operator recorded");
  o.expected_digest.clear();
  ExpectFail(VerifyCache(o), Level::kManifest, "manifest.json", "");
}

TEST_F(VerifyTest, StagingLeftovers) {
  fs::path d = PublishTriton();
  WriteFile(d / "triton/tmp.pid_123_456/kernel.cubin", "partial");
  ExpectFail(VerifyCache(Opts(d)), Level::kChecksums, "triton/tmp.pid_123_456/kernel.cubin",
             "staging leftover");
}

TEST_F(VerifyTest, MissingGroupChild) {
  fs::path d = Publish([](const fs::path& s) {
    testing::WriteTritonCache(s, 2);
    // A group whose child was never written (a cache copied without it).
    WriteFile(
        s / "triton/GONE/__grp__gone.json",
        R"({"child_paths":{"gone.cubin":"/var/run/kernelcache/view/triton/GONE/gone.cubin"}})");
  });
  ExpectFail(VerifyCache(Opts(d)), Level::kChecksums, "triton/GONE/__grp__gone.json",
             "does not exist in this cache");
}

TEST_F(VerifyTest, GroupWrittenAtAnotherPath) {
  fs::path d = Publish(
      [](const fs::path& s) { testing::WriteTritonCache(s, 1, 90, "/root/.triton/cache/.."); });
  auto r = VerifyCache(Opts(d));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.finding.reason.find("outside the cache view"), std::string::npos)
      << r.finding.ToString();
}

TEST_F(VerifyTest, ForeignTargetArch) {
  fs::path d = PublishTriton(/*arch=*/80);
  auto r = VerifyCache(Opts(d));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.finding.level, Level::kTargetArch);
  EXPECT_NE(r.finding.reason.find("target.arch 80"), std::string::npos) << r.finding.ToString();
  EXPECT_TRUE(VerifyCache(Opts(d, Level::kChecksums)).ok);
}

TEST_F(VerifyTest, ManifestFromAnotherFingerprint) {
  fs::path d = PublishTriton();
  auto o = Opts(d);
  o.expected_fingerprint = "fedcba9876543210";
  ExpectFail(VerifyCache(o), Level::kFingerprint, "manifest.json", "fedcba9876543210");
  // And a node whose driver differs from the cache's inputs.
  auto o2 = Opts(d);
  o2.node->driver_version = "570.86.15";
  ExpectFail(VerifyCache(o2), Level::kFingerprint, "manifest.json", "570.86.15");
}

TEST_F(VerifyTest, PathTraversalInManifestIsRefused) {
  fs::path d = PublishTriton();
  RewriteManifest(d, [](std::string* t) {
    auto pos = t->find("\"inductor/fxgraph/ab/fabc\"");
    ASSERT_NE(pos, std::string::npos);
    t->replace(pos, 26, "\"../../../../etc/passwdxx\"");
  });
  auto r = VerifyCache(Opts(d, Level::kManifest));
  ExpectFail(r, Level::kManifest, "manifest.json", "path traversal");
}

TEST_F(VerifyTest, SymlinkOutsideTheCacheIsRefused) {
  fs::path d = PublishTriton();
  fs::create_symlink("/etc/passwd", d / "nv" / "escape");
  auto r = VerifyCache(Opts(d, Level::kManifest));  // the walk runs from level 1 on
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.finding.level, Level::kManifest);
  EXPECT_NE(r.finding.reason.find("nv/escape"), std::string::npos) << r.finding.ToString();
}

// Level 1 reads the volume as hostile: a listed file that is a symlink (the
// manifest rewritten to list the target's size and sha256), a special file
// anywhere, a hard link; and a v1/<fp> reached through a planted link.
TEST_F(VerifyTest, ManifestLevelRefusesWhatIsNotAListedRegularFile) {
  const std::string f = "triton/H1000ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_0.cubin";
  const fs::path outside = dir_.path() / "outside";
  WriteFile(outside, "outside bytes");
  struct Case {
    std::string name;
    std::function<void(const fs::path& d)> edit;
    std::string file;
    std::string reason;
  };
  const Case cases[] = {
      {"listed file is a relative link out",
       [&](const fs::path& d) {
         fs::remove(d / f);
         fs::create_symlink("../../../../../outside", d / f);
         RewriteManifest(d, [&](std::string* t) {
           auto m = core::ParseManifest(*t);
           for (auto& e : m->files) {
             if (e.path == f) {
               e.size = 13;
               e.sha256 = core::Sha256Hex("outside bytes");
             }
           }
           core::FinalizeManifest(&*m);
           *t = core::ManifestToJson(*m);
         });
       },
       "", "target leaves the cache"},
      {"unlisted FIFO",
       [&](const fs::path& d) { ASSERT_EQ(::mkfifo((d / "nv/pipe").c_str(), 0644), 0); }, "",
       "special file (FIFO)"},
      {"hard link to a file outside",
       [&](const fs::path& d) {
         fs::remove(d / f);
         fs::create_hard_link(outside, d / f);
       },
       "", "hard links"},
  };
  for (const auto& c : cases) {
    fs::remove_all(root_);
    fs::path d = PublishTriton();
    c.edit(d);
    auto r = VerifyCache(Opts(d, Level::kManifest));
    ExpectFail(r, Level::kManifest, c.file, c.reason);
  }
  fs::remove_all(root_);
  fs::path d = PublishTriton();
  fs::rename(root_ / "v1", dir_.path() / "v1-away");
  fs::create_symlink(dir_.path() / "v1-away", root_ / "v1");
  VerifyOptions o = Opts(d, Level::kManifest);
  o.anchor = root_;
  ExpectFail(VerifyCache(o), Level::kManifest, "", "is a symlink, not a directory");
  o.anchor.clear();  // an admin's --dir is trusted as given
  EXPECT_TRUE(VerifyCache(o).ok);
}

TEST_F(VerifyTest, QuarantineMovesAndExplains) {
  fs::path d = PublishTriton();
  core::Finding why{Level::kChecksums, "triton/x", "sha256 mismatch"};
  core::Layout l(root_);
  auto q = Quarantine(l, fp_, d, why);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_FALSE(Exists(d));
  EXPECT_TRUE(core::IsWithin(l.QuarantineRoot(), *q));
  EXPECT_TRUE(q->filename().string().starts_with(fp_ + "-"));
  std::string reason = ReadFile(*q / "REASON");
  EXPECT_NE(reason.find("Checksums: triton/x: sha256 mismatch"), std::string::npos) << reason;
}

}  // namespace
}  // namespace kc::initwarm
