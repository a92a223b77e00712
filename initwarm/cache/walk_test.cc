#include "initwarm/cache/walk.h"

#include <gtest/gtest.h>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

TEST(Walk, ATreeOverTheBoundIsRefusedNamingIt) {
  testing::ScratchDir d;
  const fs::path root = d.path() / "cache";
  for (int i = 0; i < 6; ++i) {
    testing::WriteFile(root / "triton" / ("k" + std::to_string(i) + ".json"), "{}");
  }
  // triton/ and its six files: seven entries.
  auto fits = WalkCache(root, 7);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->files.size(), 6u);
  auto over = WalkCache(root, 6);
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("more than 6 files, symlinks and directories"),
            std::string::npos)
      << over.status();
  // One flat directory over the bound is refused while it is listed.
  testing::ScratchDir flat;
  for (int i = 0; i < 50; ++i) {
    testing::WriteFile(flat.path() / ("f" + std::to_string(i)), "x");
  }
  EXPECT_EQ(WalkCache(flat.path(), 10).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kc::initwarm
