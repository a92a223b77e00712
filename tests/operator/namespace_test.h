// NamespaceTest: the fixture the suites that run the operator against the
// local control plane share (tests/operator on kwok, tests/node on the real
// node). Each test gets its own namespace (kc-<test name>-<pid>), a client,
// a folder for operator logs, and on TearDown: the operators it started
// killed (their logs printed when the test failed), its PersistentVolumes
// deleted, the KernelCaches' finalizers dropped and the namespace deleted.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kube/client.h"
#include "tests/cluster/local_cluster.h"
#include "tests/operator/operator_process.h"

namespace kc::optest {

// Applies the KernelCache CRD (crds/) and waits until it is Established;
// returns "" or the error. For a suite's SetUpTestSuite.
std::string InstallCrd(LocalCluster* cluster);

class NamespaceTest : public ::testing::Test {
 protected:
  // Call from SetUp with the suite's cluster (nullptr: not up) and the
  // error InstallCrd returned.
  void SetUpNamespace(LocalCluster* cluster, const std::string& suite_error);
  void TearDown() override;
  // What a suite cleans up of its own, after the operators are killed and
  // before the namespace is deleted (nodes, a helm release, logs).
  virtual void CleanUpSuiteObjects() {}

  // The test's storage class name (its PersistentVolumes and claims).
  std::string StorageClass() const { return "kc-" + name_; }
  // A ReadWriteMany hostPath PersistentVolume of StorageClass() (Retain),
  // deleted on TearDown: so claims bind without a provisioner.
  Status CreatePv(const std::string& name, const std::string& size,
                  const nlohmann::json& host_path);
  // Creates a KernelCache in the test's namespace (a failure fails the test).
  void CreateKc(const nlohmann::json& kc);
  // The KernelCache `name` of the test's namespace; null when it cannot be read.
  nlohmann::json GetKc(const std::string& name);

  LocalCluster* cluster_ = nullptr;
  std::unique_ptr<kube::Client> client_;
  std::string name_, ns_, log_dir_;
  std::vector<std::string> pvs_;  // PersistentVolumes to delete
  std::vector<std::unique_ptr<OperatorProcess>> operators_;
};

}  // namespace kc::optest
