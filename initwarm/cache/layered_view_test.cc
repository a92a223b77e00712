// The layered view over a sealed cache made in a scratch directory.
#include "initwarm/cache/layered_view.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "core/layout.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

// path -> (bytes or link target, mtime in ns) of every entry under `dir`.
using Snapshot = std::map<std::string, std::pair<std::string, std::int64_t>>;
Snapshot Snap(const fs::path& dir) {
  Snapshot s;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    EXPECT_EQ(::lstat(e.path().c_str(), &st), 0) << e.path();
    std::string content;
    if (S_ISLNK(st.st_mode)) {
      content = "-> " + fs::read_symlink(e.path()).string();
    } else if (S_ISREG(st.st_mode)) {
      content = ReadFile(e.path());
    } else {
      content = "<dir>";
    }
    s[e.path().lexically_relative(dir).string()] = {
        content, std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
  }
  return s;
}

class LayeredViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "vol";
    local_ = dir_.path() / "run" / "local";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
    auto published = testing::PublishH200Cache(root_, [](const fs::path& staging) {
      testing::WriteTritonCache(staging, 2);
      WriteFile(staging / "nv" / "ComputeCache" / "index", testing::Bytes(256, 1));
      WriteFile(staging / "nv" / "ComputeCache" / "0" / "a1", testing::Bytes(4096, 2));
    });
    ASSERT_TRUE(published.ok()) << published.status();
    published_ = *published;
    auto m = core::ParseManifest(ReadFile(published_ / "manifest.json"));
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = *m;
  }

  // The first listed file outside nv/.
  std::string LinkedFile() const {
    for (const auto& f : manifest_.files) {
      if (!CopiedInPlace(f.path)) return f.path;
    }
    return "";
  }

  testing::ScratchDir dir_;
  fs::path root_, local_, published_;
  std::string fp_;
  core::Manifest manifest_;
};

TEST(LayeredViewPure, CopiedInPlaceIsTheNvSubtree) {
  EXPECT_TRUE(CopiedInPlace("nv/ComputeCache/index"));
  EXPECT_TRUE(CopiedInPlace("nv/ComputeCache/0/a1"));
  EXPECT_FALSE(CopiedInPlace("triton/abc/k.cubin"));
  EXPECT_FALSE(CopiedInPlace("inductor/fxgraph/x"));
  EXPECT_FALSE(CopiedInPlace("nvidia/x"));
  EXPECT_FALSE(CopiedInPlace("manifest.json"));
}

TEST(LayeredViewPure, NewEntriesAfterGate) {
  core::Manifest m;
  m.files = {{"nv/ComputeCache/index", 3, "aaa"},
             {"nv/ComputeCache/0/a1", 5, "bbb"},
             {"triton/h1/k.cubin", 7, "ccc"}};
  struct Case {
    const char* name;
    std::vector<TreeFile> files;
    std::vector<NewEntry> want;
  };
  const std::vector<Case> cases = {
      {"nothing written",
       {{"nv/ComputeCache/index", 3, "aaa"}, {"nv/ComputeCache/0/a1", 5, "bbb"}},
       {}},
      {"a new kernel directory",
       {{"triton/h2/k.cubin", 9, ""}, {"triton/h2/k.json", 2, ""}},
       {{"triton/h2/k.cubin", NewEntryKind::kNew, 9}, {"triton/h2/k.json", NewEntryKind::kNew, 2}}},
      {"index rewritten in place, same size",
       {{"nv/ComputeCache/index", 3, "zzz"}},
       {{"nv/ComputeCache/index", NewEntryKind::kChanged, 3}}},
      {"index grown",
       {{"nv/ComputeCache/index", 4, "aaa"}},
       {{"nv/ComputeCache/index", NewEntryKind::kChanged, 4}}},
      {"a new ComputeCache entry",
       {{"nv/ComputeCache/1/b2", 11, "ddd"}},
       {{"nv/ComputeCache/1/b2", NewEntryKind::kNew, 11}}},
      {"a linked entry replaced by a rename",
       {{"triton/h1/k.cubin", 7, ""}},
       {{"triton/h1/k.cubin", NewEntryKind::kChanged, 7}}},
      {"sorted by path",
       {{"vllm/z", 1, ""}, {"inductor/a", 1, ""}},
       {{"inductor/a", NewEntryKind::kNew, 1}, {"vllm/z", NewEntryKind::kNew, 1}}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NewEntriesAfterGate(c.files, m), c.want) << c.name;
  }
  EXPECT_EQ(NewEntryKindName(NewEntryKind::kNew), "New");
  EXPECT_EQ(NewEntryKindName(NewEntryKind::kChanged), "Changed");
}

// Reading through the view gives the published bytes; every published file
// but nv/ is a symlink with an absolute target inside the published
// directory; nv/ is a group-writable copy; directories are real.
TEST_F(LayeredViewTest, MirrorsThePublishedCache) {
  auto tree = BuildLayeredView(published_, manifest_, local_, fp_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->parent_path(), local_);
  const std::string name = tree->filename().string();
  EXPECT_EQ(name.rfind("layered-" + fp_ + "-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("layered-").size() + fp_.size() + 1 + 16) << name;
  const fs::path abs_published = fs::absolute(published_).lexically_normal();
  size_t linked = 0, copied = 0;
  for (const auto& f : manifest_.files) {
    const fs::path p = *tree / f.path;
    EXPECT_EQ(ReadFile(p), ReadFile(published_ / f.path)) << f.path;
    EXPECT_TRUE(IsRealDirectory(p.parent_path())) << f.path;
    if (CopiedInPlace(f.path)) {
      ++copied;
      EXPECT_FALSE(fs::is_symlink(p)) << f.path;
      struct stat st {};
      ASSERT_EQ(::lstat(p.c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 07777, 0664u) << f.path;
    } else {
      ++linked;
      ASSERT_TRUE(fs::is_symlink(p)) << f.path;
      const fs::path target = fs::read_symlink(p);
      EXPECT_TRUE(target.is_absolute()) << target;
      EXPECT_EQ(target, abs_published / f.path);
    }
  }
  EXPECT_EQ(copied, 2u);
  EXPECT_GT(linked, 2u);
  for (auto dir : core::kFrameworkDirs) EXPECT_TRUE(IsRealDirectory(*tree / dir)) << dir;
  EXPECT_EQ(ReadFile(*tree / "manifest.json"), ReadFile(published_ / "manifest.json"));
  EXPECT_EQ(ReadFile(*tree / "READY"), ReadFile(published_ / "READY"));
  // Nothing was written after the gate yet.
  auto fresh = ListNewEntries(*tree, manifest_);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(fresh->empty());
}

// What frameworks do after the gate lands in the local tree; the published
// directory's bytes and mtimes are unchanged.
TEST_F(LayeredViewTest, WritesLandLocallyAndAreListed) {
  const Snapshot before = Snap(published_);
  auto tree = BuildLayeredView(published_, manifest_, local_, fp_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  // A new Triton hash directory, written tmp-and-rename as Triton does.
  ASSERT_TRUE(MkdirAll(*tree / "triton" / "newhash").ok());
  WriteFile(*tree / "triton" / "newhash" / "k.cubin.tmp.pid_1", "cubin");
  ASSERT_TRUE(
      Rename(*tree / "triton" / "newhash" / "k.cubin.tmp.pid_1", *tree / "triton/newhash/k.cubin")
          .ok());
  // A new file beside a published one, and a rename over a linked entry.
  const std::string linked = LinkedFile();
  ASSERT_FALSE(linked.empty());
  WriteFile(*tree / (linked + ".tmp"), "replaced");
  ASSERT_TRUE(Rename(*tree / (linked + ".tmp"), *tree / linked).ok());
  // The ComputeCache's index, updated in place (no truncate, no rename).
  {
    const fs::path index = *tree / "nv" / "ComputeCache" / "index";
    int fd = ::open(index.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << index;
    ASSERT_EQ(::pwrite(fd, "XYZ", 3, 10), 3);
    ::close(fd);
    EXPECT_EQ(ReadFile(index).substr(10, 3), "XYZ");
  }
  EXPECT_EQ(ReadFile(*tree / "triton/newhash/k.cubin"), "cubin");
  EXPECT_EQ(ReadFile(*tree / linked), "replaced");
  EXPECT_EQ(Snap(published_), before) << "the published directory was written";
  EXPECT_EQ(ReadFile(published_ / "nv/ComputeCache/index"), testing::Bytes(256, 1));

  auto entries = ListNewEntries(*tree, manifest_);
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::vector<NewEntry> want = {{"nv/ComputeCache/index", NewEntryKind::kChanged, 256},
                                {"triton/newhash/k.cubin", NewEntryKind::kNew, 5},
                                {linked, NewEntryKind::kChanged, 8}};
  std::sort(want.begin(), want.end(),
            [](const NewEntry& a, const NewEntry& b) { return a.path < b.path; });
  EXPECT_EQ(*entries, want);
}

// A second build (the gate restarted in the same pod) removes the earlier
// tree; the new one has a fresh name.
TEST_F(LayeredViewTest, RemovesStaleTrees) {
  auto first = BuildLayeredView(published_, manifest_, local_, fp_);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(MkdirAll(local_ / "cold" / "triton").ok());
  auto second = BuildLayeredView(published_, manifest_, local_, fp_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*first, *second);
  EXPECT_FALSE(Exists(*first));
  EXPECT_TRUE(Exists(*second));
  EXPECT_TRUE(Exists(local_ / "cold")) << "only layered trees are removed";
}

// Hostile published directories: the builder never follows a symlink in
// them and refuses what is not a regular file, naming the path; a failed
// build leaves no tree behind.
TEST_F(LayeredViewTest, RefusesSymlinksAndSpecialFiles) {
  const fs::path elsewhere = dir_.path() / "elsewhere";
  ASSERT_TRUE(MkdirAll(elsewhere).ok());
  const std::string linked = LinkedFile();
  const fs::path kernel_dir = published_ / fs::path(linked).parent_path();
  struct Case {
    const char* name;
    fs::path victim;  // replaced by the hostile entry
    std::function<void(const fs::path&)> make;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"a kernel directory that is a symlink", kernel_dir,
       [&](const fs::path& p) {
         fs::rename(p, elsewhere / "moved");
         fs::create_directory_symlink(elsewhere / "moved", p);
       },
       "is a symlink where a directory belongs"},
      {"a file that is a symlink", published_ / linked,
       [&](const fs::path& p) {
         fs::remove(p);
         fs::create_symlink("/etc/passwd", p);
       },
       "is a symlink where a regular file belongs"},
      {"an nv file that is a symlink", published_ / "nv/ComputeCache/index",
       [&](const fs::path& p) {
         fs::remove(p);
         fs::create_symlink("/etc/passwd", p);
       },
       "is a symlink where a regular file belongs"},
      {"a FIFO", published_ / linked,
       [&](const fs::path& p) {
         fs::remove(p);
         ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
       },
       "is not a regular file"},
      {"an nv FIFO", published_ / "nv/ComputeCache/0/a1",
       [&](const fs::path& p) {
         fs::remove(p);
         ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
       },
       "is not a regular file"},
      {"an nv file larger than listed: never read past its size",
       published_ / "nv/ComputeCache/index",
       [&](const fs::path& p) { WriteFile(p, testing::Bytes(1 << 20, 3)); },
       "has 1048576 bytes, its manifest lists 256"},
      {"an nv file with a second name outside", published_ / "nv/ComputeCache/0/a1",
       [&](const fs::path& p) { fs::create_hard_link(p, elsewhere / "second-name"); },
       "cannot be read as a listed file"},
  };
  for (const auto& c : cases) {
    testing::ScratchDir copy;
    const fs::path saved = copy.path() / "saved";
    fs::copy(published_, saved, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    c.make(c.victim);
    auto tree = BuildLayeredView(published_, manifest_, local_, fp_);
    ASSERT_FALSE(tree.ok()) << c.name;
    EXPECT_EQ(tree.status().code(), StatusCode::kFailedPrecondition) << c.name;
    EXPECT_NE(tree.status().message().find(c.victim.string()), std::string::npos)
        << c.name << ": " << tree.status();
    EXPECT_NE(tree.status().message().find(c.want), std::string::npos)
        << c.name << ": " << tree.status();
    EXPECT_TRUE(fs::is_empty(local_)) << c.name << ": a failed build left a tree";
    fs::remove_all(published_);
    fs::remove_all(elsewhere / "moved");
    fs::remove_all(elsewhere / "second-name");
    fs::copy(saved, published_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  EXPECT_TRUE(BuildLayeredView(published_, manifest_, local_, fp_).ok());
}

// A published directory on a read-only mount (a user and mount namespace,
// as `unshare -rm`, with a read-only bind mount): the view builds, and new
// entries, a tmp-and-rename and an in-place index update all work, while a
// write into the published directory fails with EROFS.
TEST_F(LayeredViewTest, WorksOverAReadOnlyMount) {
  const Snapshot before = Snap(published_);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(77);
    auto write_proc = [](const char* file, const std::string& text) {
      int fd = ::open(file, O_WRONLY);
      if (fd < 0) return false;
      bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::close(fd);
      return ok;
    };
    write_proc("/proc/self/setgroups", "deny");
    if (!write_proc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write_proc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      ::_exit(77);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    const char* p = published_.c_str();
    if (::mount(p, p, nullptr, MS_BIND | MS_REC, nullptr) != 0) ::_exit(77);
    // Keep the flags the outer mount has (a user namespace cannot clear them).
    struct statvfs sv {};
    if (::statvfs(p, &sv) != 0) ::_exit(77);
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
    if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
    if (::mount(nullptr, p, nullptr, flags, nullptr) != 0) ::_exit(77);
    // The mount is read-only: even root in the namespace cannot write.
    if (::mkdir((published_ / "triton" / "probe").c_str(), 0755) == 0 || errno != EROFS) {
      ::_exit(3);
    }
    auto tree = BuildLayeredView(published_, manifest_, local_, fp_);
    if (!tree.ok()) ::_exit(4);
    if (!MkdirAll(*tree / "triton" / "newhash").ok()) ::_exit(5);
    int fd = ::open((*tree / "triton/newhash/k.tmp").c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd < 0 || ::write(fd, "k", 1) != 1) ::_exit(6);
    ::close(fd);
    if (!Rename(*tree / "triton/newhash/k.tmp", *tree / "triton/newhash/k.cubin").ok()) ::_exit(7);
    fd = ::open((*tree / "nv/ComputeCache/index").c_str(), O_WRONLY);
    if (fd < 0 || ::pwrite(fd, "XYZ", 3, 0) != 3) ::_exit(8);
    ::close(fd);
    auto entries = ListNewEntries(*tree, manifest_);
    if (!entries.ok() || entries->size() != 2) ::_exit(9);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with status " << status;
  if (WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "no user/mount namespace with a read-only bind mount here";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "3: the bind mount was writable; 4: the build failed; 5-8: a write into the view "
         "failed; 9: the new entries were not listed";
  EXPECT_EQ(Snap(published_), before);
}

}  // namespace
}  // namespace kc::initwarm
