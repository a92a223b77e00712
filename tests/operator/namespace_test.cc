#include "tests/operator/namespace_test.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "kube/config.h"
#include "kube/rest_client.h"
#include "testing/eventually.h"

namespace kc::optest {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const kube::Resource kKernelCaches{"kernelcache.io", "v1alpha1", "kernelcaches", "KernelCache",
                                   true};
const kube::Resource kPvs{"", "v1", "persistentvolumes", "PersistentVolume", false};
const kube::Resource kSa{"", "v1", "serviceaccounts", "ServiceAccount", true};

}  // namespace

std::string InstallCrd(LocalCluster* cluster) {
  if (cluster == nullptr) return "";  // SetUp reports the cluster's own error
  Status s = cluster->ApplyCrd(std::string(KC_SOURCE_DIR) + "/crds/kernelcache.kernelcache.io.yaml",
                               "kernelcaches.kernelcache.io");
  return s.ok() ? "" : s.ToString();
}

void NamespaceTest::SetUpNamespace(LocalCluster* cluster, const std::string& suite_error) {
  cluster_ = cluster;
  ASSERT_NE(cluster_, nullptr) << SharedLocalCluster().status();
  ASSERT_TRUE(suite_error.empty()) << suite_error;
  auto cfg = kube::LoadKubeconfig(cluster_->kubeconfig_path());
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  auto client = kube::NewClient(*cfg);
  ASSERT_TRUE(client.ok()) << client.status();
  client_ = std::move(*client);
  name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& ch : name_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // A suffix keeps reruns against a long-lived cluster (KC_TEST_CLUSTER_DIR)
  // apart from a namespace still terminating.
  name_ += "-" + std::to_string(::getpid() % 100000);
  ns_ = "kc-" + name_;
  log_dir_ = cluster_->dir() + "/operator-logs";
  std::filesystem::create_directories(log_dir_);
  ASSERT_TRUE(
      client_->Create(kube::resources::kNamespaces, "", {{"metadata", {{"name", ns_}}}}).ok());
  // Pods need the namespace's default ServiceAccount.
  ASSERT_TRUE(testutil::Eventually([&] { return client_->Get(kSa, ns_, "default").ok(); }, 60s));
}

Status NamespaceTest::CreatePv(const std::string& name, const std::string& size,
                               const Json& host_path) {
  Json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", name}}},
             {"spec",
              {{"capacity", {{"storage", size}}},
               {"accessModes", {"ReadWriteMany"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"storageClassName", StorageClass()},
               {"hostPath", host_path}}}};
  auto created = client_->Create(kPvs, "", pv);
  if (!created.ok()) return created.status();
  pvs_.push_back(name);
  return OkStatus();
}

void NamespaceTest::CreateKc(const Json& kc) {
  auto r = client_->Create(kKernelCaches, ns_, kc);
  ASSERT_TRUE(r.ok()) << r.status();
}

Json NamespaceTest::GetKc(const std::string& name) {
  auto r = client_->Get(kKernelCaches, ns_, name);
  return r.ok() ? *r : Json();
}

void NamespaceTest::TearDown() {
  for (auto& op : operators_) {
    if (HasFailure()) std::cerr << "---- operator log " << op->log_path() << " ----\n" << op->Log();
    op->Kill(SIGKILL);
  }
  if (client_ == nullptr) return;
  // Best-effort cleanup: failures are ignored (the cluster is per suite).
  CleanUpSuiteObjects();
  // Drop finalizers so the namespace can go without an operator.
  auto kcs = client_->List(kKernelCaches, ns_, {});
  if (kcs.ok()) {
    for (const Json& kc : kcs->items) {
      (void)client_->Patch(kKernelCaches, ns_, kc["metadata"]["name"], kube::PatchType::kMerge,
                           {{"metadata", {{"finalizers", nullptr}}}});
    }
  }
  (void)client_->Delete(kube::resources::kNamespaces, "", ns_);
  for (const std::string& pv : pvs_) (void)client_->Delete(kPvs, "", pv);
}

}  // namespace kc::optest
