#include "core/layout.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

TEST(Layout, Paths) {
  Layout l("/vol");
  EXPECT_EQ(l.Published("3f9a1c2b7d4e5f60"), "/vol/v1/3f9a1c2b7d4e5f60");
  EXPECT_EQ(l.Ready("3f9a1c2b7d4e5f60"), "/vol/v1/3f9a1c2b7d4e5f60/READY");
  EXPECT_EQ(l.Manifest("3f9a1c2b7d4e5f60"), "/vol/v1/3f9a1c2b7d4e5f60/manifest.json");
  EXPECT_EQ(l.Staging("3f9a1c2b7d4e5f60", "job-1"), "/vol/v1/.staging/3f9a1c2b7d4e5f60-job-1");
  EXPECT_EQ(l.Quarantine("3f9a1c2b7d4e5f60", "20261202T093216Z", "replaced"),
            "/vol/v1/.quarantine/3f9a1c2b7d4e5f60-20261202T093216Z-replaced");
  EXPECT_EQ(l.Lock("3f9a1c2b7d4e5f60"), "/vol/v1/.locks/3f9a1c2b7d4e5f60.lock");
}

TEST(Layout, SplitFingerprintName) {
  auto s = SplitFingerprintName("3f9a1c2b7d4e5f60-abc-def");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->fingerprint, "3f9a1c2b7d4e5f60");
  EXPECT_EQ(s->suffix, "abc-def");
  EXPECT_FALSE(SplitFingerprintName("3f9a1c2b7d4e5f60").ok());
  EXPECT_FALSE(SplitFingerprintName("3f9a1c2b7d4e5f6X-a").ok());
  EXPECT_FALSE(SplitFingerprintName("lost+found").ok());
}

TEST(Layout, SafeUid) {
  EXPECT_TRUE(IsSafeUid("0b6a4c3e-1f2d-4c55-9d5e-123456789abc"));
  EXPECT_TRUE(IsSafeUid("job_1.a"));
  EXPECT_FALSE(IsSafeUid(""));
  EXPECT_FALSE(IsSafeUid(".."));
  EXPECT_FALSE(IsSafeUid("a/b"));
  EXPECT_FALSE(IsSafeUid("a b"));
  EXPECT_FALSE(IsSafeUid(std::string(129, 'a')));
}

struct PathCase {
  std::string path;
  bool ok;
};

TEST(Layout, CheckRelativePath) {
  const PathCase cases[] = {
      {"triton/ab/k.cubin", true},
      {"a", true},
      {"a/.hidden/b", true},
      {"a..b/c", true},
      {"", false},
      {"/etc/passwd", false},
      {"../x", false},
      {"a/../../x", false},
      {"a/..", false},
      {"./a", false},
      {"a//b", false},
      {"triton/\xFF\xFE/k.cubin", false},  // not UTF-8: manifest.json could not name it
      {"triton/\xC3\xBC/k.cubin", true},   // UTF-8 (u with diaeresis)
      {"a/", false},
      {"a\\b", false},
      {std::string("a\0b", 3), false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CheckRelativePath(c.path).ok(), c.ok) << "path=" << c.path;
  }
}

TEST(Layout, IsWithin) {
  EXPECT_TRUE(IsWithin("/a/b", "/a/b"));
  EXPECT_TRUE(IsWithin("/a/b", "/a/b/c"));
  EXPECT_TRUE(IsWithin("/a/b/", "/a/b/c/../d"));
  EXPECT_FALSE(IsWithin("/a/b", "/a/bc"));
  EXPECT_FALSE(IsWithin("/a/b", "/a/b/../c"));
  EXPECT_TRUE(IsWithin("/", "/x"));
}

struct LinkCase {
  std::string link;
  std::string target;
  bool ok;
};

TEST(Layout, CheckSymlinkTarget) {
  const LinkCase cases[] = {
      {"triton/a/k.json", "../b/k.json", true},
      {"triton/a/k.json", "k2.json", true},
      {"triton/a/k.json", "../../../etc/passwd", false},
      {"triton/a/k.json", "../../..", false},
      {"triton/a/k.json", "/etc/passwd", false},
      {"triton/a/k.json", "/var/run/kernelcache/view/triton/b/k.json", true},
      {"triton/a/k.json", "/var/run/kernelcache/view/../../../etc", false},
      {"triton/a/k.json", "/var/run/kernelcache/viewx/a", false},
      {"triton/a/k.json", "", false},
      {"triton/a/k.json", "k\xFF.json", false},  // not UTF-8
      {"../x", "a", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CheckSymlinkTarget(c.link, c.target).ok(), c.ok)
        << c.link << " -> " << c.target << ": " << CheckSymlinkTarget(c.link, c.target);
  }
}

TEST(Layout, TimeTag) { EXPECT_EQ(TimeTag(1796204136), "20261202T093536Z"); }

}  // namespace
}  // namespace kc::core
