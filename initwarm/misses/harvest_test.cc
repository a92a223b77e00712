// Harvest on a real filesystem: what a merge adds, what it keeps out, and
// that a crash or a full volume leaves the previous generation READY.
#include "initwarm/misses/harvest.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/cache/verify.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/crash_at.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

class HarvestTest : public ::testing::Test {
 protected:
  void SetUp() override { Publish(dir_.path() / "vol"); }

  void Publish(const fs::path& root) {
    root_ = root;
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
    auto published = testing::PublishH200Cache(
        root_, [](const fs::path& d) { testing::WriteTritonCache(d, 2); }, "job-1");
    ASSERT_TRUE(published.ok()) << published.status();
    base_digest_ = Ready();
  }

  core::Layout L() const { return core::Layout(root_); }

  // READY's digest (its trailing newline dropped).
  std::string Ready() const {
    std::string d = ReadFile(L().Ready(fp_));
    while (!d.empty() && std::isspace(static_cast<unsigned char>(d.back()))) d.pop_back();
    return d;
  }

  // Writes `files` (path -> bytes) into the inbox of `uid`, with their
  // list as a watcher writes it, and returns the pod's accept-list entry.
  core::HarvestPod Inbox(const std::string& uid, const std::map<std::string, std::string>& files) {
    std::vector<core::HarvestFile> listed;
    for (const auto& [path, bytes] : files) {
      WriteFile(L().InboxOf(fp_, uid) / path, bytes);
      listed.push_back({path, bytes.size(), core::Sha256Hex(bytes)});
    }
    return List(uid, listed);
  }

  // Writes the list of `uid` as given (whatever its files are).
  core::HarvestPod List(const std::string& uid, const std::vector<core::HarvestFile>& listed) {
    WriteFile(L().InboxOf(fp_, uid) / ".list.json", core::HarvestListToJson(listed));
    return {uid, core::RefOf(listed)};
  }

  // Kernel k of testing::WriteTritonCache, as a pod would have compiled it.
  std::map<std::string, std::string> Kernel(int kernels, int arch = 90) {
    testing::ScratchDir scratch;
    std::map<std::string, std::string> out;
    for (const auto& rel : testing::WriteTritonCache(scratch.path(), kernels, arch)) {
      if (rel.starts_with("triton/")) out[rel] = ReadFile(scratch.path() / rel);
    }
    return out;
  }

  HarvestOptions Opts(std::vector<core::HarvestPod> accept, const std::string& owner = "hv-1") {
    HarvestOptions o;
    o.root = root_;
    o.fingerprint = fp_;
    o.owner = owner;
    o.base_digest = base_digest_;
    o.accept = std::move(accept);
    return o;
  }

  VerifyReport Verify() {
    VerifyOptions v;
    v.dir = L().Published(fp_);
    v.anchor = root_;
    v.level = core::Level::kTargetArch;
    v.expected_fingerprint = fp_;
    v.node = testing::H200Facts();
    return VerifyCache(v);
  }

  std::set<std::string> ManifestPaths() {
    auto m = core::ParseManifest(ReadFile(L().Manifest(fp_)));
    EXPECT_TRUE(m.ok());
    std::set<std::string> out;
    for (const auto& f : m->files) out.insert(f.path);
    return out;
  }

  testing::ScratchDir dir_;
  fs::path root_;
  std::string fp_;
  std::string base_digest_;
};

TEST_F(HarvestTest, MergesANewKernelIntoANewGenerationThatVerifies) {
  const auto before = ManifestPaths();
  // Kernels 0 and 1 are in the cache with these bytes; kernel 2 is new.
  auto r = Harvest(Opts({Inbox("pod-a", Kernel(3))}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::HarvestOutcome::kMerged);
  EXPECT_EQ(r->base_digest, base_digest_);
  EXPECT_EQ(r->added_files, 4);  // json, cubin, ptx, __grp__ of kernel 2
  ASSERT_EQ(r->added_entries.size(), 1u);
  EXPECT_TRUE(r->added_entries[0].starts_with("triton/H1002")) << r->added_entries[0];
  EXPECT_EQ(r->duplicate_count, 8);
  EXPECT_EQ(Ready(), r->manifest_digest);
  EXPECT_NE(r->manifest_digest, base_digest_);
  const auto after = ManifestPaths();
  EXPECT_EQ(after.size(), before.size() + 4);
  for (const auto& p : before) EXPECT_TRUE(after.contains(p)) << p;
  VerifyReport v = Verify();
  EXPECT_TRUE(v.ok) << v.finding.ToString();
  EXPECT_EQ(v.kernels, 3u);
  // The files are sealed like a warmup's, the inbox of the pod is gone and
  // the previous generation went to the quarantine.
  struct stat st {};
  ASSERT_EQ(::lstat((L().Published(fp_) / *after.rbegin()).c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_FALSE(Exists(L().InboxOf(fp_, "pod-a")));
  bool replaced = false;
  for (const auto& e : fs::directory_iterator(L().QuarantineRoot())) {
    replaced |= e.path().filename().string().ends_with("-replaced");
  }
  EXPECT_TRUE(replaced);
}

TEST_F(HarvestTest, NothingNewIsUnchangedAndPublishesNothing) {
  auto r = Harvest(Opts({Inbox("pod-a", Kernel(2))}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::HarvestOutcome::kUnchanged);
  EXPECT_EQ(r->added_files, 0);
  EXPECT_EQ(Ready(), base_digest_);
  EXPECT_FALSE(Exists(L().QuarantineRoot()) && !fs::is_empty(L().QuarantineRoot()));
}

TEST_F(HarvestTest, HostileInboxEntriesAreKeptOutWithTheirReasons) {
  auto k = Kernel(3);
  // pod-a: kernel 2 with a cubin whose bytes are not the listed ones.
  core::HarvestPod a = Inbox("pod-a", k);
  for (const auto& [path, bytes] : k) {
    if (path.ends_with(".cubin") && path.starts_with("triton/H1002")) {
      WriteFile(L().InboxOf(fp_, "pod-a") / path, std::string(bytes.size(), 'z'));
    }
  }
  // pod-b: a symlink out of the inbox, a FIFO, and a kernel for sm_80.
  std::vector<core::HarvestFile> b_files;
  fs::create_directories(L().InboxOf(fp_, "pod-b") / "triton/evil");
  fs::create_symlink("/etc/passwd", L().InboxOf(fp_, "pod-b") / "triton/evil/k.json");
  b_files.push_back({"triton/evil/k.json", 10, std::string(64, 'a')});
  ASSERT_EQ(::mkfifo((L().InboxOf(fp_, "pod-b") / "triton/evil/fifo").c_str(), 0644), 0);
  b_files.push_back({"triton/evil/fifo", 10, std::string(64, 'a')});
  testing::ScratchDir other;
  for (const auto& rel : testing::WriteTritonCache(other.path(), 4, /*arch=*/80)) {
    if (!rel.starts_with("triton/H1003")) continue;
    const std::string bytes = ReadFile(other.path() / rel);
    WriteFile(L().InboxOf(fp_, "pod-b") / rel, bytes);
    b_files.push_back({rel, bytes.size(), core::Sha256Hex(bytes)});
  }
  core::HarvestPod b = List("pod-b", b_files);
  // pod-c: a path the cache holds, with other bytes.
  std::string ptx;
  for (const auto& [path, bytes] : Kernel(1)) {
    if (path.ends_with(".ptx")) ptx = path;
  }
  core::HarvestPod c = Inbox("pod-c", {{ptx, "other bytes"}});
  auto r = Harvest(Opts({a, b, c}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::HarvestOutcome::kUnchanged) << r->added_entries.size();
  EXPECT_EQ(r->conflict_count, 1);
  // One reason per bad file; the rest of its pod's entry is kept out with it.
  EXPECT_EQ(r->rejected_count, 4) << ::testing::PrintToString(r->rejected);
  EXPECT_EQ(r->added_files, 0);
  std::string all;
  for (const auto& why : r->rejected) all += why + "\n";
  EXPECT_NE(all.find("sha256 is not the one the pod listed"), std::string::npos) << all;
  EXPECT_NE(all.find("is a symlink"), std::string::npos) << all;
  EXPECT_NE(all.find("is a FIFO"), std::string::npos) << all;
  EXPECT_NE(all.find("target.arch 80"), std::string::npos) << all;
  EXPECT_EQ(Ready(), base_digest_);
  EXPECT_TRUE(Verify().ok);
}

// A list whose sha256 is not the reported one is not read at all; a Triton
// group that names a file its entry lacks keeps the entry out (the gate's
// Checksums level would refuse the whole cache for it).
TEST_F(HarvestTest, AnAlteredListOrAnIncompleteTritonEntryIsKeptOut) {
  core::HarvestPod a = Inbox("pod-a", Kernel(3));
  WriteFile(L().InboxOf(fp_, "pod-a") / ".list.json", "[]");
  auto k = Kernel(3);
  std::erase_if(k, [](const auto& kv) {
    return kv.first.starts_with("triton/H1002") && kv.first.ends_with(".cubin");
  });
  core::HarvestPod b = Inbox("pod-b", k);
  auto r = Harvest(Opts({a, b}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::HarvestOutcome::kUnchanged);
  std::string all;
  for (const auto& why : r->rejected) all += why + "\n";
  EXPECT_NE(all.find("not the one the pod reported"), std::string::npos) << all;
  EXPECT_NE(all.find("kernel_2.cubin"), std::string::npos) << all;
  EXPECT_NE(all.find("does not exist in this cache"), std::string::npos) << all;
  EXPECT_EQ(Ready(), base_digest_);
}

TEST_F(HarvestTest, ACacheChangedSinceThePlanIsNotMergedInto) {
  auto o = Opts({Inbox("pod-a", Kernel(3))});
  o.base_digest = std::string(64, 'e');
  auto r = Harvest(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("changed since this harvest was planned"), std::string::npos);
  EXPECT_EQ(Ready(), base_digest_);
  EXPECT_TRUE(Exists(L().InboxOf(fp_, "pod-a")));  // kept for the next harvest
}

// A harvest killed at each step of its publish (seal's failpoints) leaves
// either the previous generation or the new one READY, never a half cache,
// and the next harvest (another Job) completes the merge.
TEST_F(HarvestTest, CrashAtEveryPublishStepLeavesAGenerationReady) {
  for (int step = 0; step <= 6; ++step) {
    SCOPED_TRACE("crash at publish:" + std::to_string(step));
    Publish(dir_.path() / ("vol" + std::to_string(step)));
    auto accept = std::vector<core::HarvestPod>{Inbox("pod-a", Kernel(3))};
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv(testing::kCrashEnv, ("publish:" + std::to_string(step)).c_str(), 1);
      testing::InstallCrashAtFromEnv();
      auto r = Harvest(Opts(accept, "hv-crash"));
      std::_Exit(r.ok() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the failpoint did not fire";
    const std::string ready = Ready();
    EXPECT_TRUE(Verify().ok) << "READY " << ready.substr(0, 12) << " does not verify";
    const bool merged = ready != base_digest_;
    if (!merged) {
      auto retry = Harvest(Opts(accept, "hv-retry"));
      ASSERT_TRUE(retry.ok()) << retry.status();
      EXPECT_EQ(retry->outcome, core::HarvestOutcome::kMerged);
      EXPECT_TRUE(Verify().ok);
    }
    EXPECT_EQ(ManifestPaths().size(), 13u);  // 9 sealed + 4 harvested
  }
}

// A volume that fills up during the merge: the harvest fails with
// ResourceExhausted and the previous generation is READY and verifies.
TEST_F(HarvestTest, FullVolumeKeepsThePreviousGenerationReady) {
  const fs::path mnt = dir_.path() / "small";
  testing::SmallVolume volume(mnt, "size=1m");
  if (!volume.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN)";
  Publish(mnt / "vol");
  auto accept = std::vector<core::HarvestPod>{Inbox("pod-a", Kernel(3))};
  {
    std::string chunk(4096, 'x');
    FILE* f = std::fopen((mnt / "filler").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    setvbuf(f, nullptr, _IONBF, 0);
    while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size()) {
    }
    std::fclose(f);
  }
  auto r = Harvest(Opts(accept));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status();
  EXPECT_EQ(Ready(), base_digest_);
  EXPECT_TRUE(Verify().ok);
  fs::remove(mnt / "filler");
  auto again = Harvest(Opts(accept, "hv-2"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->outcome, core::HarvestOutcome::kMerged);
}

}  // namespace
}  // namespace kc::initwarm
