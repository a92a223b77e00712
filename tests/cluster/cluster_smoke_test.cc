// Smoke test of the local control plane: real etcd + kube-apiserver +
// controller-manager + scheduler, started through LocalCluster.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "testing/eventually.h"
#include "tests/cluster/local_cluster.h"

namespace kc {
namespace {

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

using kc::testutil::Eventually;

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

// leave_running: the cluster outlives the object; the next Start attaches.
TEST(ClusterSmokeTest, LeaveRunningKeepsTheClusterForTheNextStart) {
  std::string dir = std::filesystem::temp_directory_path() / "kc-smoke-leave-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  LocalClusterOptions options;
  options.dir = dir;
  options.leave_running = true;
  std::vector<pid_t> pids;
  {
    auto c = LocalCluster::Start(options);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Kubectl({"create", "namespace", "kept"}).ok());
    pids = (*c)->RecordedPids();
  }
  ASSERT_GE(pids.size(), 4u);
  for (pid_t pid : pids) EXPECT_TRUE(Alive(pid)) << pid;
  auto c = LocalCluster::Start(options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->RecordedPids().size(), pids.size());
  for (pid_t pid : (*c)->RecordedPids()) {
    EXPECT_NE(std::find(pids.begin(), pids.end(), pid), pids.end()) << "restarted " << pid;
  }
  EXPECT_TRUE((*c)->Kubectl({"get", "namespace", "kept"}).ok());
  ASSERT_TRUE((*c)->Stop().ok());
  for (pid_t pid : pids) EXPECT_FALSE(Alive(pid)) << "stray process " << pid;
  std::filesystem::remove_all(dir);
}

// kwok runs pods on fake nodes; an extra stage file completes Job pods with
// a termination message while the default stages still make pods Running.
TEST(ClusterSmokeTest, KwokRunsPodsOnFakeNodesWithExtraStages) {
  LocalClusterOptions options;
  options.with_kwok = true;
  options.kwok_stage_files = {std::string(KC_CLUSTER_TESTDATA_DIR) +
                              "/pod-complete-with-message.yaml"};
  auto started = LocalCluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  LocalCluster& c = **started;
  const std::string tolerate =
      "      nodeName: fake-1\n"
      "      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists}]\n";
  ASSERT_TRUE(c.KubectlWithInput({"apply", "-f", "-"},
                                 "apiVersion: v1\nkind: Node\nmetadata:\n  name: fake-1\n"
                                 "  annotations: {kwok.x-k8s.io/node: fake}\n"
                                 "spec:\n  taints: [{key: kwok.x-k8s.io/node, value: fake, "
                                 "effect: NoSchedule}]\n"
                                 "---\n"
                                 "apiVersion: v1\nkind: Pod\nmetadata: {name: server}\nspec:\n"
                                 "  nodeName: fake-1\n"
                                 "  tolerations: [{key: kwok.x-k8s.io/node, operator: Exists}]\n"
                                 "  containers: [{name: c, image: busybox}]\n"
                                 "---\n"
                                 "apiVersion: batch/v1\nkind: Job\nmetadata: {name: warm}\nspec:\n"
                                 "  template:\n    metadata:\n      annotations:\n"
                                 "        kwok.kernelcache.io/termination-message: sealed\n"
                                 "    spec:\n      restartPolicy: Never\n" +
                                     tolerate + "      containers: [{name: c, image: busybox}]\n")
                  .ok());
  std::string out;
  EXPECT_TRUE(Eventually(
      [&] {
        return c.Kubectl({"get", "pod", "server", "-o", "jsonpath={.status.phase}"}, &out).ok() &&
               out == "Running";
      },
      std::chrono::seconds(60)))
      << out;
  EXPECT_TRUE(Eventually(
      [&] {
        return c.Kubectl(
                    {"get", "pods", "-l", "job-name=warm", "-o",
                     "jsonpath={.items[0].status.containerStatuses[0].state.terminated.message}"},
                    &out)
                   .ok() &&
               out == "sealed";
      },
      std::chrono::seconds(60)))
      << out;
  EXPECT_TRUE(Eventually(
      [&] {
        return c.Kubectl({"get", "job", "warm", "-o", "jsonpath={.status.succeeded}"}, &out).ok() &&
               out == "1";
      },
      std::chrono::seconds(60)))
      << out;
}

// If the test process dies without stopping the cluster, the watchdog does.
TEST(ClusterSmokeTest, WatchdogStopsClusterWhenOwnerDies) {
  std::string dir = std::filesystem::temp_directory_path() / "kc-smoke-watchdog-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The owner: start a cluster, then die without running destructors.
    LocalClusterOptions options;
    options.dir = dir;
    auto c = LocalCluster::Start(options);
    _exit(c.ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "cluster start failed in child";
  std::vector<pid_t> pids;
  for (const char* name : {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}) {
    std::ifstream in(dir + "/pids/" + name + ".pid");
    long pid = 0;  // NOLINT(google-runtime-int)
    if (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  }
  EXPECT_EQ(pids.size(), 4u);
  EXPECT_TRUE(Eventually(
      [&] {
        for (pid_t pid : pids) {
          if (Alive(pid)) return false;
        }
        return true;
      },
      std::chrono::seconds(60)))
      << "components still running after their owner exited";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kc
