// LocalClusterEnvironment: a gtest global environment that starts one
// LocalCluster (through SharedLocalCluster) before the first test and fails
// every test with the start error if it could not start. Header-only, so
// kc_test_cluster itself does not depend on gtest.
//
// Register it at namespace scope in a test file (gtest_main is linked):
//
//   kc::LocalClusterOptions KwokOptions() {
//     kc::LocalClusterOptions o;
//     o.with_kwok = true;
//     return o;
//   }
//   static auto* const kEnv = ::testing::AddGlobalTestEnvironment(
//       new kc::LocalClusterEnvironment(KwokOptions()));
//
// and use kc::LocalClusterEnvironment::cluster() in tests.
#pragma once

#include <gtest/gtest.h>

#include "tests/cluster/local_cluster.h"

namespace kc {

class LocalClusterEnvironment : public ::testing::Environment {
 public:
  explicit LocalClusterEnvironment(LocalClusterOptions options = {})
      : options_(std::move(options)) {}

  void SetUp() override {
    auto cluster = SharedLocalCluster(options_);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
  }

  // The shared cluster; nullptr if it failed to start (SetUp reported why).
  static LocalCluster* cluster() {
    auto cluster = SharedLocalCluster();
    return cluster.ok() ? *cluster : nullptr;
  }

 private:
  LocalClusterOptions options_;
};

}  // namespace kc
