// Helpers shared by the kube/ integration tests (real control plane).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "testing/eventually.h"
#include "tests/cluster/local_cluster_gtest.h"

namespace kc::kube::testing {

// A client for the shared cluster (admin certificate); nullptr and a test
// failure when the cluster or the config is unusable.
inline std::unique_ptr<Client> ClusterClient() {
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  if (cluster == nullptr) {
    ADD_FAILURE() << "no local cluster";
    return nullptr;
  }
  auto config = LoadKubeconfig(cluster->kubeconfig_path());
  if (!config.ok()) {
    ADD_FAILURE() << config.status();
    return nullptr;
  }
  auto client = NewClient(*config);
  if (!client.ok()) {
    ADD_FAILURE() << client.status();
    return nullptr;
  }
  return std::move(client).value();
}

// Creates namespace `name` if it does not exist yet.
inline Status EnsureNamespace(Client& client, const std::string& name) {
  auto created = client.Create(resources::kNamespaces, "", Json{{"metadata", {{"name", name}}}});
  if (created.ok() || IsAlreadyExists(created.status())) return OkStatus();
  return created.status();
}

// A name unique within this process run: "<prefix>-<pid>-<n>".
inline std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

using kc::testutil::Eventually;

// The fixture of a kube/ integration suite: client_ talks to the shared
// cluster, and the namespace kNamespace exists. Use as
//   constexpr char kNs[] = "kube-x-test";
//   class XTest : public testing::ClusterTest<kNs> {};
template <const char* kNamespace>
class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = ClusterClient();
    ASSERT_NE(client_, nullptr);
    ASSERT_TRUE(EnsureNamespace(*client_, kNamespace).ok());
  }
  std::unique_ptr<Client> client_;
};

}  // namespace kc::kube::testing
