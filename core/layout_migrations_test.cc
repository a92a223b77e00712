#include "core/layout_migrations.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::core {
namespace {

// The layout version moves only with a migration: version = 1 + the number
// of migrations, each from the version before to the next.
TEST(LayoutMigrations, VersionFollowsTheMigrations) {
  EXPECT_EQ(kLayoutSchemaVersion, 1 + static_cast<int>(kLayoutMigrations.size()))
      << "a layout version change needs a migration in kLayoutMigrations (and a CHANGELOG.md "
         "upgrade note)";
  for (size_t i = 0; i < kLayoutMigrations.size(); ++i) {
    EXPECT_EQ(kLayoutMigrations[i].from, static_cast<int>(i) + 1);
    EXPECT_EQ(kLayoutMigrations[i].to, static_cast<int>(i) + 2);
    EXPECT_FALSE(kLayoutMigrations[i].code.empty());
  }
  EXPECT_EQ(std::string(kLayoutVersionDir), "v" + std::to_string(kLayoutSchemaVersion))
      << "the volume's version directory and the fingerprint's schema are one version";
}

// Pinned: the layout of this release, and the migrations known to it.
TEST(LayoutMigrations, PinnedVersion) {
  EXPECT_EQ(kLayoutSchemaVersion, 1);
  EXPECT_EQ(kLayoutMigrations.size(), 0u);
}

}  // namespace
}  // namespace kc::core
