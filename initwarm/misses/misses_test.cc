// Runtime misses of real gate trees (layered, copy, cold) over a sealed
// cache made in a scratch directory.
#include "initwarm/misses/misses.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/layout.h"
#include "initwarm/cache/copy_cache.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;

// "framework key files" of each miss.
std::vector<std::string> Names(const std::vector<core::RuntimeMiss>& misses) {
  std::vector<std::string> out;
  for (const auto& m : misses) {
    out.push_back(std::string(core::MissFrameworkName(m.framework)) + " " + m.key + " " +
                  std::to_string(m.files));
  }
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class MissesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "vol";
    local_ = dir_.path() / "run" / "local";
    view_ = dir_.path() / "run" / "view";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
    auto published = testing::PublishH200Cache(root_, [](const fs::path& staging) {
      testing::WriteTritonCache(staging, 2);
      WriteFile(staging / "nv" / "ComputeCache" / "index", testing::Bytes(256, 1));
    });
    ASSERT_TRUE(published.ok()) << published.status();
    published_ = *published;
    auto m = core::ParseManifest(testing::ReadFile(published_ / "manifest.json"));
    ASSERT_TRUE(m.ok()) << m.status();
    manifest_ = *m;
  }

  void Point(const fs::path& tree) {
    ASSERT_TRUE(MkdirAll(view_.parent_path()).ok());
    ASSERT_TRUE(ReplaceSymlink(tree, view_).ok());
  }

  // What a serving process compiles after the gate: a new Triton kernel
  // (metadata named), an Inductor graph, and a ComputeCache index update.
  void Compile(const fs::path& tree) {
    const std::string meta =
        R"({"name":"k_768","num_warps":4,"num_stages":2,"target":{"backend":"cuda","arch":90}})";
    WriteFile(tree / "triton/NEWHASH/k_768.json", meta);
    WriteFile(tree / "triton/NEWHASH/k_768.cubin", testing::Bytes(900, 3));
    WriteFile(tree / "inductor/fxgraph/zz/fzz1/entry", testing::Bytes(50, 4));
    WriteFile(tree / "nv/ComputeCache/index", testing::Bytes(256, 9));  // same size, new bytes
  }

  testing::ScratchDir dir_;
  fs::path root_, local_, view_, published_;
  std::string fp_;
  core::Manifest manifest_;
};

const std::vector<std::string> kCompiled = {"triton NEWHASH 2", "inductor fxgraph/fzz1 1",
                                            "computecache ComputeCache 1"};

TEST_F(MissesTest, LayeredViewCountsWhatThePodCompiled) {
  auto tree = BuildLayeredView(published_, manifest_, local_, fp_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  Point(*tree);
  auto none = ViewMisses(view_);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty()) << ::testing::PrintToString(Names(*none));
  Compile(*tree);
  auto got = ViewMisses(view_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Sorted(Names(*got)), Sorted(kCompiled));
  for (const auto& m : *got) {
    if (m.framework == core::MissFramework::kTriton) {
      EXPECT_EQ(m.detail, "kernel k_768 num_warps=4 num_stages=2 sm_90");
    }
  }
}

TEST_F(MissesTest, CopyViewCountsWhatThePodCompiled) {
  const fs::path copy = local_ / ("copy-" + fp_ + "-0001");
  ASSERT_TRUE(CopyCache(published_, copy, manifest_).ok());
  Point(copy);
  auto none = ViewMisses(view_);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty()) << ::testing::PrintToString(Names(*none));
  Compile(copy);
  auto got = ViewMisses(view_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Sorted(Names(*got)), Sorted(kCompiled));
}

TEST_F(MissesTest, ColdViewCountsEveryFile) {
  const fs::path cold = local_ / "cold";
  Point(cold);
  Compile(cold);
  auto got = ViewMisses(view_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Sorted(Names(*got)), Sorted(kCompiled));
}

TEST_F(MissesTest, AViewThatIsNoGateTreeIsRefusedByName) {
  auto not_link = ViewMisses(published_);
  ASSERT_FALSE(not_link.ok());
  EXPECT_NE(not_link.status().message().find("is not a gate's view"), std::string::npos);
  Point(published_);
  auto other = ViewMisses(view_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("is not a tree `initwarm wait` builds"),
            std::string::npos)
      << other.status();
}

TEST(NewEntriesInCopyTest, NewChangedAndSame) {
  core::Manifest m;
  m.files = {{"a", 3, "s"}, {"nv/i", 4, "h1"}, {"b", 5, "x"}};
  const std::vector<TreeFile> files = {{"a", 3, ""}, {"b", 6, ""}, {"c", 1, ""}, {"nv/i", 4, "h2"}};
  const auto got = NewEntriesInCopy(files, m);
  ASSERT_EQ(got.size(), 3U);
  EXPECT_EQ(got[0], (NewEntry{"b", NewEntryKind::kChanged, 6}));
  EXPECT_EQ(got[1], (NewEntry{"c", NewEntryKind::kNew, 1}));
  EXPECT_EQ(got[2], (NewEntry{"nv/i", NewEntryKind::kChanged, 4}));
}

}  // namespace
}  // namespace kc::initwarm
