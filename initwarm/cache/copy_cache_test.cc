#include "initwarm/cache/copy_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

// CopyCache on several copiers: every listed file lands with its bytes, in
// its own directory; a listed file missing from the source fails the copy,
// naming it.
TEST(CopyCacheTest, ManyFilesOnSeveralCopiers) {
  testing::ScratchDir d;
  const fs::path src = d.path() / "src";
  core::Manifest m;
  for (int i = 0; i < 60; ++i) {
    std::string rel = "triton/k" + std::to_string(i % 7) + "/f" + std::to_string(i);
    std::string bytes = testing::Bytes(100 + static_cast<std::uint64_t>(i) * 37, i);
    testing::WriteFile(src / rel, bytes);
    m.files.push_back({rel, bytes.size(), ""});
  }
  testing::WriteFile(src / "manifest.json", "{}");
  testing::WriteFile(src / "READY", "x\n");
  ASSERT_TRUE(CopyCache(src, d.path() / "dst", m, 4).ok());
  for (const auto& f : m.files) {
    EXPECT_EQ(ReadFile(d.path() / "dst" / f.path), ReadFile(src / f.path)) << f.path;
  }
  m.files.push_back({"inductor/missing", 1, ""});
  Status s = CopyCache(src, d.path() / "dst2", m, 4);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("inductor/missing"), std::string::npos) << s;
}

// The source is volume content: a listed file that is a symlink (to a file
// of this machine), a FIFO (which would block a plain open), a hard link, or
// of another size than listed is refused, naming it; nothing outside the
// source is copied.
TEST(CopyCacheTest, RefusesWhatIsNotTheListedRegularFile) {
  testing::ScratchDir d;
  const fs::path src = d.path() / "src";
  testing::WriteFile(d.path() / "secret", "SECRET");
  testing::WriteFile(src / "triton/aa/k.cubin", "cubin");
  testing::WriteFile(src / "manifest.json", "{}");
  testing::WriteFile(src / "READY", "x\n");
  struct Case {
    std::string name;
    std::function<void()> make;  // replaces triton/aa/k.cubin
    std::uint64_t listed_size;
    std::string want;
  };
  const fs::path k = src / "triton/aa/k.cubin";
  const Case cases[] = {
      {"absolute symlink",
       [&] {
         fs::remove(k);
         fs::create_symlink(d.path() / "secret", k);
       },
       6, "is a symlink"},
      {"fifo",
       [&] {
         fs::remove(k);
         ASSERT_EQ(::mkfifo(k.c_str(), 0644), 0);
       },
       0, "is a FIFO"},
      {"hard link",
       [&] {
         fs::remove(k);
         fs::create_hard_link(d.path() / "secret", k);
       },
       6, "hard links"},
      {"longer than listed",
       [&] {
         fs::remove(k);
         testing::WriteFile(k, "cubin+more");
       },
       5, "larger than the 5 bytes"},
      {"shorter than listed",
       [&] {
         fs::remove(k);
         testing::WriteFile(k, "cu");
       },
       5, "has 2 bytes"},
  };
  int n = 0;
  for (const auto& c : cases) {
    c.make();
    core::Manifest m;
    m.files.push_back({"triton/aa/k.cubin", c.listed_size, ""});
    const fs::path dst = d.path() / ("dst" + std::to_string(n++));
    Status s = CopyCache(src, dst, m, 2);
    EXPECT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << c.name << ": " << s;
    EXPECT_NE(s.message().find("triton/aa/k.cubin"), std::string::npos) << c.name << ": " << s;
    EXPECT_NE(ReadFile(dst / "triton/aa/k.cubin"), "SECRET") << c.name;
  }
}

}  // namespace
}  // namespace kc::initwarm
