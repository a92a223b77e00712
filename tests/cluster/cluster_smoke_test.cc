// Smoke test of the local control plane: real etcd + kube-apiserver +
// controller-manager + scheduler, started through LocalCluster.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/cluster/local_cluster.h"

namespace kc {
namespace {

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

// Polls `pred` until true or the deadline; the cluster is real and
// asynchronous, so tests wait on observable state, never on fixed sleeps.
template <typename Pred>
bool Eventually(Pred pred, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

TEST(ClusterSmokeTest, StartsServesRestartsAndStopsCleanly) {
  auto started = LocalCluster::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<LocalCluster> cluster = std::move(started).value();
  const std::string dir = cluster->dir();

  EXPECT_EQ(cluster->server().rfind("https://127.0.0.1:", 0), 0u) << cluster->server();
  EXPECT_TRUE(std::filesystem::exists(cluster->kubeconfig_path()));

  std::string out;
  ASSERT_TRUE(cluster->Kubectl({"get", "--raw", "/version"}, &out).ok());
  EXPECT_NE(out.find("\"gitVersion\": \"v1.34."), std::string::npos) << out;
  EXPECT_NE(out.find("\"minor\": \"34\""), std::string::npos) << out;

  ASSERT_TRUE(cluster->Kubectl({"get", "--raw", "/readyz"}, &out).ok());
  EXPECT_EQ(out, "ok");

  // The admin identity is cluster-admin through system:masters.
  ASSERT_TRUE(cluster->Kubectl({"auth", "can-i", "*", "*"}, &out).ok());
  EXPECT_EQ(out, "yes\n");

  ASSERT_TRUE(cluster->Kubectl({"create", "namespace", "smoke"}, &out).ok());
  ASSERT_TRUE(cluster
                  ->KubectlWithInput({"apply", "-f", "-"},
                                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                     "  name: cm\n  namespace: smoke\ndata:\n  k: v\n",
                                     &out)
                  .ok());

  // The controller-manager runs: it creates the namespace's default
  // ServiceAccount and the kube-root-ca.crt ConfigMap.
  EXPECT_TRUE(Eventually(
      [&] {
        return cluster->Kubectl({"get", "serviceaccount", "default", "-n", "smoke"}).ok();
      },
      std::chrono::seconds(60)));

  // Restart the API server: the data lives in etcd and survives.
  ASSERT_TRUE(cluster->StopApiServer().ok());
  Status down = cluster->Kubectl({"get", "namespace", "smoke", "--request-timeout=5s"});
  EXPECT_FALSE(down.ok()) << "API server still answers after StopApiServer";
  ASSERT_TRUE(cluster->StartApiServer().ok());
  ASSERT_TRUE(cluster->Kubectl({"get", "namespace", "smoke", "-o", "name"}, &out).ok());
  EXPECT_EQ(out, "namespace/smoke\n");
  ASSERT_TRUE(cluster->RestartApiServer().ok());
  ASSERT_TRUE(
      cluster->Kubectl({"get", "configmap", "cm", "-n", "smoke", "-o", "jsonpath={.data.k}"}, &out)
          .ok());
  EXPECT_EQ(out, "v");

  // Compaction reports the revision it compacted at.
  int64_t rev = 0;
  ASSERT_TRUE(cluster->Compact(&rev).ok());
  EXPECT_GT(rev, 1);

  std::vector<pid_t> pids = cluster->RecordedPids();
  ASSERT_GE(pids.size(), 4u);  // etcd, apiserver, controller-manager, scheduler (+ watchdog)
  for (pid_t pid : pids) EXPECT_TRUE(Alive(pid)) << pid;

  ASSERT_TRUE(cluster->Stop().ok());
  for (pid_t pid : pids) EXPECT_FALSE(Alive(pid)) << "stray process " << pid;
  cluster.reset();
  EXPECT_FALSE(std::filesystem::exists(dir)) << "self-created dir not removed";
}

TEST(ClusterSmokeTest, RestartsAgainstTheSameEtcdData) {
  std::string dir = std::filesystem::temp_directory_path() / "kc-smoke-reuse-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  LocalClusterOptions options;
  options.dir = dir;
  {
    auto c = LocalCluster::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Kubectl({"create", "namespace", "persisted"}).ok());
  }  // destructor stops everything; dir is ours, so it stays
  ASSERT_TRUE(std::filesystem::exists(dir + "/etcd-data"));
  {
    auto c = LocalCluster::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    std::string out;
    ASSERT_TRUE((*c)->Kubectl({"get", "namespace", "persisted", "-o", "name"}, &out).ok());
    EXPECT_EQ(out, "namespace/persisted\n");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kc
