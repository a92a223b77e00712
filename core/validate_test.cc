#include "core/validate.h"

#include <gtest/gtest.h>

#include "testing/objects.h"

namespace kc::core {
namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');

Manifest Two() {
  Manifest m;
  m.fingerprint_id = "0123456789abcdef";
  m.files = {{"triton/x/k.cubin", 10, kA}, {"triton/x/k.json", 5, kB}};
  m.created_at = "2026-12-02T09:40:00Z";
  FinalizeManifest(&m);
  return m;
}

TEST(Validate, Levels) {
  EXPECT_EQ(*ParseLevel("checksums"), Level::kChecksums);
  EXPECT_EQ(*ParseLevel("LoadTest"), Level::kLoadTest);
  EXPECT_FALSE(ParseLevel("all").ok());
}

TEST(Validate, ReadyAndManifest) {
  std::string text = ManifestToJson(Two());
  Finding f;
  EXPECT_TRUE(CheckReadyAndManifest(Sha256Hex(text) + "\n", text, &f).ok());
  auto bad = CheckReadyAndManifest(std::string(64, 'c'), text, &f);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(f.file, "READY");
  EXPECT_NE(f.reason.find("hashes to"), std::string::npos);
  EXPECT_FALSE(CheckReadyAndManifest("", text, &f).ok());
  std::string broken = text.substr(0, text.size() / 2);
  EXPECT_FALSE(CheckReadyAndManifest(Sha256Hex(broken), broken, &f).ok());
  EXPECT_EQ(f.file, "manifest.json");
}

TEST(Validate, Fingerprint) {
  Manifest m = Two();
  EXPECT_FALSE(CheckFingerprint(m, "0123456789abcdef", nullptr));
  auto f = CheckFingerprint(m, "fedcba9876543210", nullptr);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFingerprint);
  EXPECT_NE(f->reason.find("fedcba9876543210"), std::string::npos);
  NodeFacts n = testutil::H200Facts();
  m.node = n;
  NodeFacts other = n;
  other.driver_version = "570.1";
  EXPECT_FALSE(CheckFingerprint(m, "", &n));
  EXPECT_TRUE(CheckFingerprint(m, "", &other));
}

struct DiskCase {
  std::string name;
  std::vector<ObservedEntry> observed;
  std::string want_file;  // empty: passes
  std::string want_reason;
};

TEST(Validate, CompareWithDisk) {
  Manifest m = Two();
  const DiskCase cases[] = {
      {"good",
       {{"triton/x/k.cubin", false, 10, kA, ""}, {"triton/x/k.json", false, 5, kB, ""}},
       "",
       ""},
      {"good unhashed",
       {{"triton/x/k.cubin", false, 10, "", ""}, {"triton/x/k.json", false, 5, "", ""}},
       "",
       ""},
      {"truncated",
       {{"triton/x/k.cubin", false, 4, "", ""}, {"triton/x/k.json", false, 5, kB, ""}},
       "triton/x/k.cubin",
       "truncated"},
      {"flipped byte",
       {{"triton/x/k.cubin", false, 10, kB, ""}, {"triton/x/k.json", false, 5, kB, ""}},
       "triton/x/k.cubin",
       "sha256 mismatch"},
      {"missing", {{"triton/x/k.json", false, 5, kB, ""}}, "triton/x/k.cubin", "missing"},
      {"leftover",
       {{"triton/x/k.cubin", false, 10, kA, ""},
        {"triton/x/k.json", false, 5, kB, ""},
        {"triton/x/tmp.pid_1", false, 3, "", ""}},
       "triton/x/tmp.pid_1",
       "staging leftover"},
      {"leftover first",
       {{"a", false, 3, "", ""},
        {"triton/x/k.cubin", false, 10, kA, ""},
        {"triton/x/k.json", false, 5, kB, ""}},
       "a",
       "not in the manifest"},
      {"link instead of file",
       {{"triton/x/k.cubin", true, 0, "", "../y"}, {"triton/x/k.json", false, 5, kB, ""}},
       "triton/x/k.cubin",
       "symlink"},
  };
  for (const auto& c : cases) {
    auto f = CompareWithDisk(m, c.observed);
    if (c.want_file.empty()) {
      EXPECT_FALSE(f) << c.name << ": " << (f ? f->ToString() : "");
      continue;
    }
    ASSERT_TRUE(f) << c.name;
    EXPECT_EQ(f->file, c.want_file) << c.name;
    EXPECT_NE(f->reason.find(c.want_reason), std::string::npos) << c.name << ": " << f->reason;
  }
}

// Level 1 compares each listed entry's type and size, and leaves unlisted
// entries and checksums to level 3.
TEST(Validate, CheckListedOnDisk) {
  Manifest m = Two();
  Manifest huge = Two();
  huge.files[0].size = 1000000000000000000ull;  // 10^18 bytes listed, 10 on disk
  FinalizeManifest(&huge);
  struct ListedCase {
    std::string name;
    const Manifest* m;
    std::vector<ObservedEntry> observed;
    std::string want_file;  // "" = passes
    std::string want_reason;
  };
  const ListedCase cases[] = {
      {"good, leftover and wrong sha ignored",
       &m,
       {{"a", false, 3, "", ""},
        {"triton/x/k.cubin", false, 10, kB, ""},
        {"triton/x/k.json", false, 5, "", ""}},
       "",
       ""},
      {"size 10^18 listed",
       &huge,
       {{"triton/x/k.cubin", false, 10, "", ""}, {"triton/x/k.json", false, 5, "", ""}},
       "triton/x/k.cubin",
       "manifest says 1000000000000000000"},
      {"zero bytes on disk",
       &m,
       {{"triton/x/k.cubin", false, 0, "", ""}, {"triton/x/k.json", false, 5, "", ""}},
       "triton/x/k.cubin",
       "truncated"},
      {"symlink instead of file",
       &m,
       {{"triton/x/k.cubin", true, 0, "", "/etc/passwd"}, {"triton/x/k.json", false, 5, "", ""}},
       "triton/x/k.cubin",
       "is a symlink"},
      {"missing", &m, {{"triton/x/k.json", false, 5, "", ""}}, "triton/x/k.cubin", "missing"},
  };
  for (const auto& c : cases) {
    auto f = CheckListedOnDisk(*c.m, c.observed);
    if (c.want_file.empty()) {
      EXPECT_FALSE(f) << c.name << ": " << (f ? f->ToString() : "");
      continue;
    }
    ASSERT_TRUE(f) << c.name;
    EXPECT_EQ(f->level, Level::kManifest) << c.name;
    EXPECT_EQ(f->file, c.want_file) << c.name;
    EXPECT_NE(f->reason.find(c.want_reason), std::string::npos) << c.name << ": " << f->reason;
  }
}

TEST(Validate, TritonGroup) {
  std::set<std::string, std::less<>> listed = {"triton/x/k.cubin", "triton/x/k.json"};
  const std::string view = "/var/run/kernelcache/view";
  EXPECT_FALSE(CheckTritonGroup(
      "triton/x/__grp__k.json",
      R"({"child_paths":{"k.cubin":"/var/run/kernelcache/view/triton/x/k.cubin","k.json":"/var/run/kernelcache/view/triton/x/k.json"}})",
      view, listed));
  auto missing = CheckTritonGroup(
      "triton/x/__grp__k.json",
      R"({"child_paths":{"k.ptx":"/var/run/kernelcache/view/triton/x/k.ptx"}})", view, listed);
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->reason.find("does not exist"), std::string::npos);
  auto elsewhere = CheckTritonGroup(
      "triton/x/__grp__k.json", R"({"child_paths":{"k.cubin":"/root/.triton/cache/x/k.cubin"}})",
      view, listed);
  ASSERT_TRUE(elsewhere);
  EXPECT_NE(elsewhere->reason.find("outside the cache view"), std::string::npos);
  auto escape = CheckTritonGroup(
      "triton/x/__grp__k.json",
      R"({"child_paths":{"k":"/var/run/kernelcache/view/../../../etc/passwd"}})", view, listed);
  ASSERT_TRUE(escape);
  EXPECT_TRUE(CheckTritonGroup("triton/x/__grp__k.json", "nope", view, listed));
  EXPECT_TRUE(IsTritonGroupFile("triton/x/__grp__k.json"));
  EXPECT_FALSE(IsTritonGroupFile("triton/x/k.json"));
  EXPECT_TRUE(IsTritonMetadataFile("triton/x/k.json"));
  EXPECT_FALSE(IsTritonMetadataFile("inductor/x.json"));
}

TEST(Validate, ArchFromComputeCapability) {
  EXPECT_EQ(*ArchFromComputeCapability("9.0"), 90);
  EXPECT_EQ(*ArchFromComputeCapability("10.0"), 100);
  EXPECT_EQ(*ArchFromComputeCapability("8.6"), 86);
  EXPECT_FALSE(ArchFromComputeCapability("9").ok());
  EXPECT_FALSE(ArchFromComputeCapability("x.0").ok());
}

TEST(Validate, TargetArch) {
  const std::string good = R"({"target":{"backend":"cuda","arch":90,"warp_size":32}})";
  EXPECT_FALSE(CheckTritonTargetArch("triton/x/k.json", good, 90));
  auto foreign = CheckTritonTargetArch("triton/x/k.json", good, 80);
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->level, Level::kTargetArch);
  EXPECT_NE(foreign->reason.find("target.arch 90"), std::string::npos);
  EXPECT_FALSE(CheckTritonTargetArch("triton/x/k.json",
                                     R"({"target":{"backend":"cuda","arch":"sm_90a"}})", 90));
  EXPECT_FALSE(CheckTritonTargetArch("triton/x/k.autotune.json", R"({"configs_timings":[]})", 90));
  EXPECT_FALSE(CheckTritonTargetArch("triton/x/k.json",
                                     R"({"target":{"backend":"hip","arch":"gfx942"}})", 90));
  EXPECT_TRUE(CheckTritonTargetArch("triton/x/k.json", "{", 90));
}

}  // namespace
}  // namespace kc::core
