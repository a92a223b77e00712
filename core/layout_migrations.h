// Cache layout versions and the migrations between them.
//
// The layout version is the volume's top directory (kLayoutVersionDir, "v1")
// and an input of every fingerprint (kLayoutSchemaVersion): a new version
// names every cache anew, so on its own it re-warms every cache of every
// cluster. It may change only together with a migration that carries the
// caches of the version before it over (or proves they cannot be), listed
// here, and a CHANGELOG.md entry saying what users see on upgrade.
// layout_migrations_test.cc pins the version together with this list.
// Pure: no I/O.
#pragma once

#include <array>
#include <string_view>

#include "core/fingerprint.h"
#include "core/layout.h"

namespace kc::core {

struct LayoutMigration {
  int from = 0;
  int to = 0;
  std::string_view code;  // the function that migrates, e.g. "initwarm/migrate_v1_v2.cc"
  friend constexpr bool operator==(const LayoutMigration&, const LayoutMigration&) = default;
};

// Every layout change since the first release, oldest first. Empty: the
// layout is still the first release's, v1.
inline constexpr std::array<LayoutMigration, 0> kLayoutMigrations = {};

}  // namespace kc::core
