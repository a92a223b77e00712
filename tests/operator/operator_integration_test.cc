// The operator's integration scenarios, on the real local control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) with
// the real kernelcache-operator binary. kwok runs the warmup pods on fake GPU
// nodes carrying GPU Feature Discovery labels; tests/operator/kwok/
// pod-complete.yaml completes them with the seal container's termination
// message (outcome steered by the warmup env KC_TEST_OUTCOME).
//
// Isolation: every test has its own namespace, its own node label
// (kc-test=<name>, the KernelCache's nodeSelector), its own PersistentVolume
// and storage class, and its own operator process(es) watching only its
// namespace. Waits poll the API until a deadline; nothing sleeps to
// synchronise.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "core/api_types.h"
#include "core/gate_report.h"
#include "core/miss_channel.h"
#include "core/miss_report.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "operator/testing/http_get.h"
#include "operator/testing/objects.h"
#include "testing/eventually.h"
#include "tests/cluster/local_cluster.h"
#include "tests/operator/namespace_test.h"
#include "tests/operator/operator_process.h"

namespace kc::optest {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

const kube::Resource kKernelCaches{"kernelcache.io", "v1alpha1", "kernelcaches", "KernelCache",
                                   true};

constexpr char kDriverA[] = "580.159.04";
constexpr char kDriverB[] = "570.86.15";
constexpr char kDigest[] = "9f2c4b1a7e3d5c6b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b";

LocalCluster* TheCluster() {
  LocalClusterOptions o;
  o.with_kwok = true;
  o.kwok_stage_files = {std::string(KC_SOURCE_DIR) + "/tests/operator/kwok/pod-complete.yaml"};
  auto c = SharedLocalCluster(o);
  return c.ok() ? *c : nullptr;
}

using kc::testutil::Eventually;

class OperatorIntegrationTest : public NamespaceTest {
 protected:
  static void SetUpTestSuite() { crd_error_ = InstallCrd(TheCluster()); }

  void SetUp() override { SetUpNamespace(TheCluster(), crd_error_); }

  void CleanUpSuiteObjects() override {
    for (const std::string& n : nodes_) (void)client_->Delete(kube::resources::kNodes, "", n);
  }

  // --- objects ---

  void AddNode(const std::string& name, const std::string& driver,
               const std::map<std::string, std::string>& extra_labels = {},
               bool unschedulable = false, int gpus = 8) {
    Json labels = op::fixtures::GpuLabels(op::fixtures::kH200, driver);
    labels["kc-test"] = name_;
    labels["kubernetes.io/hostname"] = name;
    labels["type"] = "kwok";
    labels["kubernetes.io/os"] = "linux";
    for (const auto& [k, v] : extra_labels) labels[k] = v;
    Json resources = {{"cpu", "32"},
                      {"memory", "256Gi"},
                      {"pods", "110"},
                      {"nvidia.com/gpu", std::to_string(gpus)}};
    Json node = {
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata",
         {{"name", name}, {"labels", labels}, {"annotations", {{"kwok.x-k8s.io/node", "fake"}}}}},
        {"spec", {{"unschedulable", unschedulable}}},
        {"status",
         {{"capacity", resources},
          {"allocatable", resources},
          {"nodeInfo", {{"architecture", "amd64"}, {"operatingSystem", "linux"}}}}}};
    auto created = client_->Create(kube::resources::kNodes, "", node);
    ASSERT_TRUE(created.ok()) << created.status();
    nodes_.push_back(name);
    // kwok marks it Ready.
    ASSERT_TRUE(Eventually([&] {
      auto n = client_->Get(kube::resources::kNodes, "", name);
      if (!n.ok()) return false;
      for (const Json& c : (*n)["status"].value("conditions", Json::array())) {
        if (c.value("type", "") == "Ready" && c.value("status", "") == "True") return true;
      }
      return false;
    })) << "node "
        << name << " never became Ready (is kwok running?)";
  }

  // A static RWX PersistentVolume of class kc-<test>, so claims bind without
  // a provisioner.
  // A gated model pod (label kernelcache.io/consumer=`consumer`) that no
  // node can take, so neither kwok nor a kubelet writes its status: the test
  // plays the kubelet with WriteGateResult. Returns the pod's uid.
  std::string CreateGatedPod(const std::string& name, const std::string& consumer) {
    Json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", name}, {"labels", {{"app", "llama"}, {core::kConsumerLabel, consumer}}}}},
        {"spec",
         {{"nodeSelector", {{"kc-test-unschedulable", "true"}}},
          {"initContainers",
           {{{"name", core::kGateContainer}, {"image", "kc.local/initwarm:test"}}}},
          {"containers", {{{"name", "server"}, {"image", "registry.example/llama:1"}}}}}}};
    auto created = client_->Create(kube::resources::kPods, ns_, pod);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? (*created)["metadata"].value("uid", "") : "";
  }

  // The gate container of pod `name` terminated with `exit_code` and
  // `message` (its gate report), written to the pod's status.
  void WriteGateResult(const std::string& name, int exit_code, const std::string& reason,
                       const std::string& message) {
    const std::string now = api::FormatTime(std::chrono::system_clock::now());
    Json status = {{"status",
                    {{"phase", "Pending"},
                     {"initContainerStatuses",
                      {{{"name", core::kGateContainer},
                        {"image", "kc.local/initwarm:test"},
                        {"imageID", ""},
                        {"ready", false},
                        {"restartCount", 0},
                        {"state",
                         {{"terminated",
                           {{"exitCode", exit_code},
                            {"reason", reason},
                            {"message", message},
                            {"startedAt", now},
                            {"finishedAt", now}}}}}}}}}}};
    kube::PatchOptions po;
    po.subresource = "status";
    auto patched =
        client_->Patch(kube::resources::kPods, ns_, name, kube::PatchType::kMerge, status, po);
    ASSERT_TRUE(patched.ok()) << patched.status();
  }

  void AddPv(const std::string& suffix = "") {
    const std::string name = ns_ + "-pv" + suffix;
    const Status created = CreatePv(name, "100Gi", {{"path", "/tmp/" + name}});
    ASSERT_TRUE(created.ok()) << created;
  }

  // A model pod holding one GPU of this test's nodes (kwok runs it), with
  // `priority_class` ("" = none: priority 0). Returns once it runs.
  void AddGpuPod(const std::string& name, const std::string& priority_class = "") {
    Json spec = {{"nodeSelector", {{"kc-test", name_}}},
                 {"containers",
                  {{{"name", "server"},
                    {"image", "registry.example/llama:1"},
                    {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}};
    if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", {{"app", "model"}}}}},
                {"spec", spec}};
    auto created = client_->Create(kube::resources::kPods, ns_, pod);
    ASSERT_TRUE(created.ok()) << created.status();
    ASSERT_TRUE(Eventually([&] {
      auto p = client_->Get(kube::resources::kPods, ns_, name);
      return p.ok() && (*p)["status"].value("phase", "") == "Running";
    })) << "model pod "
        << name << " never ran";
  }

  // The KernelCache's condition `type` ({} when absent).
  Json Condition(const std::string& kc, const std::string& type) {
    Json obj = GetKc(kc);
    if (!obj.is_object()) return Json::object();
    for (const Json& c : obj.value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return Json::object();
  }

  Json KernelCache(const std::string& name) const {
    return {{"apiVersion", "kernelcache.io/v1alpha1"},
            {"kind", "KernelCache"},
            {"metadata", {{"name", name}, {"namespace", ns_}}},
            {"spec",
             {{"podSelector", {{"matchLabels", {{"app", name}}}}},
              {"nodeSelector", {{"kc-test", name_}}},
              {"image", "registry.example/llama@sha256:" + std::string(64, 'a')},
              {"runtime", {{"pytorch", "2.11.0"}, {"triton", "3.6.0"}}},
              {"warmup", {{"command", {"python3", "/app/warmup.py"}}, {"backoffLimit", 0}}},
              {"storage", {{"storageClassName", StorageClass()}, {"size", "10Gi"}}},
              {"retention", {{"staleAfter", "5s"}}}}}};
  }

  std::vector<Json> Fingerprints(const std::string& kc) {
    Json obj = GetKc(kc);
    if (!obj.is_object()) return {};
    return obj.value("status", Json::object()).value("fingerprints", Json::array());
  }

  std::vector<Json> Jobs(const std::string& selector) {
    kube::ListOptions o;
    o.label_selector = selector;
    auto r = client_->List(kube::resources::kJobs, ns_, o);
    return r.ok() ? r->items : std::vector<Json>{};
  }

  std::vector<Json> WarmupJobs(const std::string& kc) {
    return Jobs("kernelcache.io/name=" + kc + ",kernelcache.io/component=warmup");
  }

  // Starts an operator for this test's namespace; returns its HTTP port.
  int StartOperator(const std::vector<std::string>& extra = {}) {
    const int port = FreePort();
    auto op = std::make_unique<OperatorProcess>(
        KC_OPERATOR_BINARY,
        log_dir_ + "/" + name_ + "-" + std::to_string(operators_.size()) + ".log");
    std::vector<std::string> args = {"--kubeconfig=" + cluster_->kubeconfig_path(),
                                     "--namespaces=" + ns_,
                                     "--http-port=" + std::to_string(port),
                                     "--bind-address=127.0.0.1",
                                     "--initwarm-image=kc.local/initwarm:test",
                                     "--warmup-retry-base=2s",
                                     "--warmup-retry-cap=8s",
                                     "--resync-period=30s",
                                     "--log-level=debug"};
    bool has_le = false, has_pc = false;
    for (const auto& e : extra) {
      has_le |= e.rfind("--leader-elect", 0) == 0;
      has_pc |= e.rfind("--warmup-priority-class", 0) == 0;
    }
    if (!has_le) args.emplace_back("--leader-elect=false");
    // The chart ships the PriorityClass; tests that want it create it.
    if (!has_pc) args.emplace_back("--warmup-priority-class=");
    args.insert(args.end(), extra.begin(), extra.end());
    Status s = op->Start(args);
    EXPECT_TRUE(s.ok()) << s;
    operators_.push_back(std::move(op));
    EXPECT_TRUE(Eventually(
        [&] {
          auto r = op::HttpGet("127.0.0.1", port, "/readyz");
          return r.ok() && r->status == 200;
        },
        60s))
        << "operator never became ready:\n"
        << operators_.back()->Log();
    return port;
  }

  Json Http(int port, const std::string& target, int* status = nullptr) {
    auto r = op::HttpGet("127.0.0.1", port, target);
    if (!r.ok()) return Json();
    if (status != nullptr) *status = r->status;
    return Json::parse(r->body, nullptr, false);
  }

  std::string Kubectl(const std::vector<std::string>& args, Status* status = nullptr) {
    std::string out;
    Status s = cluster_->Kubectl(args, &out);
    if (status != nullptr) *status = s;
    return s.ok() ? out : s.message();
  }

  // Messages of the Events with `reason` on KernelCache `kc`, joined by "\n".
  std::string EventMessage(const std::string& kc, const std::string& reason) {
    kube::ListOptions o;
    o.field_selector = "involvedObject.name=" + kc + ",reason=" + reason;
    auto r = client_->List(kube::resources::kEvents, ns_, o);
    std::string out;
    if (!r.ok()) return out;
    for (const Json& e : r->items) out += e.value("message", "") + "\n";
    return out;
  }

  static Json StateOf(const std::vector<Json>& fps, const std::string& id) {
    for (const Json& f : fps) {
      if (f.value("id", "") == id) return f;
    }
    return Json();
  }

  static inline std::string crd_error_;
  std::vector<std::string> nodes_;  // Nodes to delete
};

// Nodes of two fingerprints: two Jobs, both Ready; status, printer columns,
// resolve and metrics right.
TEST_F(OperatorIntegrationTest, TwoFingerprints) {
  AddNode(ns_ + "-a", kDriverA);
  AddNode(ns_ + "-b", kDriverB);
  AddPv();
  const int port = StartOperator();
  CreateKc(KernelCache("llama"));

  ASSERT_TRUE(Eventually(
      [&] {
        Json kc = GetKc("llama");
        return kc.is_object() && kc.contains("status") &&
               kc["status"].value("readyFingerprints", 0) == 2 &&
               kc["status"].value("phase", "") == "Ready";
      },
      120s))
      << GetKc("llama").dump(2);

  auto fps = Fingerprints("llama");
  ASSERT_EQ(fps.size(), 2u);
  std::set<std::string> drivers;
  for (const Json& f : fps) {
    EXPECT_EQ(f["state"], "Ready");
    EXPECT_EQ(f["manifestDigest"], kDigest);
    EXPECT_EQ(f["bytes"], 1048576);
    EXPECT_EQ(f["files"], 42);
    EXPECT_EQ(f["nodes"], 1);
    EXPECT_EQ(f["gpuProduct"], "NVIDIA-H200");
    EXPECT_EQ(f["computeCapability"], "9.0");
    drivers.insert(f.value("driver", ""));
  }
  EXPECT_EQ(drivers, (std::set<std::string>{kDriverA, kDriverB}));
  auto jobs = WarmupJobs("llama");
  EXPECT_EQ(jobs.size(), 2u);
  Json kc = GetKc("llama");
  EXPECT_EQ(kc["status"]["observedGeneration"], kc["metadata"]["generation"]);

  // Printer columns: NAME READY PHASE SIZE AGE.
  std::string table = Kubectl({"get", "kcache", "-n", ns_});
  EXPECT_NE(table.find("READY"), std::string::npos) << table;
  EXPECT_NE(table.find("PHASE"), std::string::npos) << table;
  EXPECT_NE(table.find("SIZE"), std::string::npos) << table;
  EXPECT_NE(table.find("2/2"), std::string::npos) << table;
  EXPECT_NE(table.find("Ready"), std::string::npos) << table;
  EXPECT_NE(table.find("2Mi"), std::string::npos) << table;

  // Resolve for a node: Ready, its directory and digest.
  int code = 0;
  Json answer =
      Http(port, "/v1/resolve?namespace=" + ns_ + "&kernelcache=llama&node=" + ns_ + "-a", &code);
  EXPECT_EQ(code, 200) << answer.dump();
  EXPECT_EQ(answer["state"], "Ready");
  EXPECT_EQ(answer["manifestDigest"], kDigest);
  EXPECT_EQ(answer["node"]["driver"], kDriverA);
  EXPECT_EQ(answer["directory"], "v1/" + answer.value("fingerprint", ""));
  Http(port, "/v1/resolve?namespace=" + ns_ + "&kernelcache=nope&node=x", &code);
  EXPECT_EQ(code, 404);

  auto metrics = op::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("kernelcache_fingerprints{kernelcache=\"llama\",namespace=\"" + ns_ +
                               "\",state=\"Ready\"} 2"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("controller_runtime_reconcile_total{controller=\"kernelcache\""),
            std::string::npos);
  EXPECT_NE(metrics->body.find("kernelcache_cache_bytes{kernelcache=\"llama\",namespace=\"" + ns_ +
                               "\"} 2097152"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("kernelcache_time_to_ready_seconds_count 2"), std::string::npos)
      << metrics->body;

  // Events on the KernelCache, and a describe for the docs.
  std::string describe = Kubectl({"describe", "kcache", "llama", "-n", ns_});
  EXPECT_NE(describe.find("Events:"), std::string::npos) << describe;
  // Kept beside the logs; KC_UPDATE_DOCS=1 refreshes the copy in docs/.
  const char* update_docs = std::getenv("KC_UPDATE_DOCS");  // NOLINT(concurrency-mt-unsafe)
  const std::string example_path =
      update_docs != nullptr && std::string(update_docs) == "1"
          ? std::string(KC_SOURCE_DIR) + "/docs/operator-describe-example.txt"
          : log_dir_ + "/operator-describe-example.txt";
  std::ofstream(example_path) << "$ kubectl get kcache -n " << ns_ << "\n"
                              << table << "\n$ kubectl describe kcache llama -n " << ns_ << "\n"
                              << describe;
}

// A rolling driver upgrade of one node: a new fingerprint is warmed, the old
// one turns Stale once no node has it and is collected after staleAfter.
TEST_F(OperatorIntegrationTest, DriverUpgrade) {
  const std::string node = ns_ + "-a";
  AddNode(node, kDriverA);
  AddPv();
  StartOperator();
  CreateKc(KernelCache("llama"));
  std::string old_id;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1 || fps[0].value("state", "") != "Ready") return false;
        old_id = fps[0]["id"];
        return true;
      },
      120s))
      << GetKc("llama").dump(2);

  auto patched = client_->Patch(
      kube::resources::kNodes, "", node, kube::PatchType::kMerge,
      {{"metadata", {{"labels", {{"nvidia.com/cuda.driver-version.full", kDriverB}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status();

  std::string new_id;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Json& f : Fingerprints("llama")) {
          if (f.value("driver", "") == kDriverB && f.value("state", "") == "Ready") {
            new_id = f["id"];
            return true;
          }
        }
        return false;
      },
      120s))
      << GetKc("llama").dump(2);
  EXPECT_NE(new_id, old_id);

  // The old fingerprint: Stale (no node has it), then collected by a GC Job.
  bool saw_stale = false;
  ASSERT_TRUE(Eventually(
      [&] {
        Json old = StateOf(Fingerprints("llama"), old_id);
        if (old.is_object() && old.value("state", "") == "Stale") saw_stale = true;
        return saw_stale || old.is_null();
      },
      60s))
      << GetKc("llama").dump(2);
  ASSERT_TRUE(Eventually([&] { return StateOf(Fingerprints("llama"), old_id).is_null(); }, 120s))
      << GetKc("llama").dump(2);
  // The GC Job is deleted once done; its Events are the durable record.
  const std::string stale_msg = EventMessage("llama", "FingerprintStale");
  EXPECT_NE(stale_msg.find(old_id), std::string::npos) << stale_msg;
  std::string collected;
  ASSERT_TRUE(Eventually(
      [&] {
        collected = EventMessage("llama", "CacheCollected");
        return !collected.empty();
      },
      30s));
  EXPECT_NE(collected.find(old_id), std::string::npos) << collected;
  EXPECT_EQ(collected.find(new_id), std::string::npos) << "GC must keep the live fingerprint";
  EXPECT_EQ(StateOf(Fingerprints("llama"), new_id).value("state", ""), "Ready");
}

// A node in a GPU-driver upgrade or cordoned gets no warmup Job; once it is
// back, it does.
TEST_F(OperatorIntegrationTest, IneligibleNodesGetNoJob) {
  AddNode(ns_ + "-cordoned", kDriverA, {}, /*unschedulable=*/true);
  AddNode(ns_ + "-upgrading", kDriverB,
          {{"nvidia.com/gpu-driver-upgrade-state", "upgrade-required"}});
  AddPv();
  StartOperator();
  CreateKc(KernelCache("llama"));
  // The operator has seen both fingerprints (status written for this generation)...
  ASSERT_TRUE(Eventually(
      [&] {
        Json kc = GetKc("llama");
        return kc.is_object() && kc.contains("status") &&
               kc["status"].value("observedGeneration", 0) ==
                   kc["metadata"].value("generation", -1) &&
               kc["status"].value("fingerprints", Json::array()).size() == 2;
      },
      60s))
      << GetKc("llama").dump(2);
  // ...and created no Job for them.
  EXPECT_TRUE(WarmupJobs("llama").empty());
  for (const Json& f : Fingerprints("llama")) EXPECT_EQ(f["state"], "Pending") << f.dump();

  // Positive control: uncordon the first node; its fingerprint gets warmed.
  ASSERT_TRUE(client_
                  ->Patch(kube::resources::kNodes, "", ns_ + "-cordoned", kube::PatchType::kMerge,
                          {{"spec", {{"unschedulable", false}}}})
                  .ok());
  ASSERT_TRUE(Eventually([&] { return WarmupJobs("llama").size() == 1; }, 60s))
      << GetKc("llama").dump(2);
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Json& f : Fingerprints("llama")) {
          if (f.value("driver", "") == kDriverA && f.value("state", "") == "Ready") return true;
        }
        return false;
      },
      120s))
      << GetKc("llama").dump(2);
  // The upgrading node still has none.
  EXPECT_EQ(WarmupJobs("llama").size(), 1u);
}

// A server warmup: the Deployment's own template, 4 GPUs. The warmup runs
// only on a node with 4 allocatable GPUs; a fingerprint whose nodes all have
// fewer is reported (WarmupFits False, Event WarmupDoesNotFit) and gets no
// Job; a change of the Deployment's template reaches the KernelCache (the
// workload informer) and moves the fingerprints: at 2 GPUs every node fits.
TEST_F(OperatorIntegrationTest, ServerWarmupRunsWhereTheTemplatesGpusFit) {
  AddNode(ns_ + "-big", kDriverA, {}, false, /*gpus=*/8);
  AddNode(ns_ + "-small", kDriverA, {}, false, /*gpus=*/2);
  AddNode(ns_ + "-tiny", kDriverB, {}, false, /*gpus=*/2);
  AddPv();
  Json server = {{"name", "server"},
                 {"image", "registry.example/srv@sha256:" + std::string(64, 'b')},
                 {"args", {"--tensor-parallel-size", "4"}},
                 {"ports", {{{"name", "http"}, {"containerPort", 8000}}}},
                 {"readinessProbe", {{"httpGet", {{"path", "/health"}, {"port", "http"}}}}},
                 {"resources", {{"limits", {{"nvidia.com/gpu", "4"}}}}}};
  Json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "srv"}, {"namespace", ns_}}},
      {"spec",
       {{"replicas", 0},
        {"selector", {{"matchLabels", {{"app", "srv"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "srv"}}}}}, {"spec", {{"containers", {server}}}}}}}}};
  ASSERT_TRUE(client_->Create(kube::resources::kDeployments, ns_, deployment).ok());
  StartOperator();
  Json kc = KernelCache("srv");
  kc["spec"].erase("image");
  kc["spec"]["warmup"] = {{"server",
                           {{"workloadRef", {{"kind", "Deployment"}, {"name", "srv"}}},
                            {"parallel", {{"tensor", 4}}},
                            {"requests",
                             {{{"path", "/v1/completions"},
                               {"body", {{"model", "srv"}, {"max_tokens", 4}}},
                               {"promptTokens", {16, 512}}}}}}},
                          {"backoffLimit", 0}};
  CreateKc(kc);

  // The driver-A fingerprint is warmed on the 8-GPU node, never the 2-GPU one.
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Json& f : Fingerprints("srv")) {
          if (f.value("driver", "") == kDriverA && f.value("state", "") == "Ready") return true;
        }
        return false;
      },
      120s))
      << GetKc("srv").dump(2);
  auto jobs = WarmupJobs("srv");
  ASSERT_EQ(jobs.size(), 1u);
  kube::ListOptions by_job;
  by_job.label_selector = "job-name=" + jobs[0]["metadata"].value("name", "");
  auto pods = client_->List(kube::resources::kPods, ns_, by_job);
  ASSERT_TRUE(pods.ok() && !pods->items.empty());
  const Json& pod = pods->items[0];
  EXPECT_EQ(pod["spec"].value("nodeName", ""), ns_ + "-big");
  const Json& sidecar = pod["spec"]["initContainers"][1];
  EXPECT_EQ(sidecar.value("name", ""), "server");
  EXPECT_EQ(sidecar.value("restartPolicy", ""), "Always");
  EXPECT_EQ(sidecar["resources"]["limits"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(pod["spec"]["containers"][0]["args"][0], "drive");

  // The driver-B fingerprint: no node can host its warmup.
  ASSERT_TRUE(Eventually(
      [&] { return Condition("srv", "WarmupFits").value("status", "") == "False"; }, 60s))
      << GetKc("srv").dump(2);
  const Json fits = Condition("srv", "WarmupFits");
  EXPECT_EQ(fits.value("reason", ""), "NoNodeFits");
  EXPECT_NE(fits.value("message", "").find("a warmup needs 4 GPU(s) on one node"),
            std::string::npos)
      << fits.dump();
  for (const Json& f : Fingerprints("srv")) {
    if (f.value("driver", "") == kDriverB) {
      EXPECT_EQ(f.value("state", ""), "Pending") << f.dump();
      EXPECT_NE(fits.value("message", "").find(f.value("id", "")), std::string::npos);
    }
  }
  EXPECT_TRUE(Eventually([&] { return !EventMessage("srv", "WarmupDoesNotFit").empty(); }, 30s));
  EXPECT_EQ(WarmupJobs("srv").size(), 1u);

  // The Deployment moves to 2 GPUs: new fingerprints (the GPU count is an
  // input), and now every node can host a warmup.
  std::set<std::string> before;
  for (const Json& f : Fingerprints("srv")) before.insert(f.value("id", ""));
  ASSERT_TRUE(client_
                  ->Patch(kube::resources::kDeployments, ns_, "srv", kube::PatchType::kJsonPatch,
                          Json::array({{{"op", "replace"},
                                        {"path",
                                         "/spec/template/spec/containers/0/resources/limits/"
                                         "nvidia.com~1gpu"},
                                        {"value", "2"}}}))
                  .ok());
  ASSERT_TRUE(Eventually(
      [&] {
        int ready = 0;
        for (const Json& f : Fingerprints("srv")) {
          if (before.count(f.value("id", "")) == 0 && f.value("state", "") == "Ready") ++ready;
        }
        return ready == 2;
      },
      120s))
      << GetKc("srv").dump(2);
  EXPECT_EQ(Condition("srv", "WarmupFits").value("reason", ""), "Fits");
}

// An invalid spec: refused by the CRD schema naming the field; what the schema
// cannot see gives InvalidSpec naming the field, and nothing is created.
TEST_F(OperatorIntegrationTest, InvalidSpec) {
  AddNode(ns_ + "-a", kDriverA);
  StartOperator();

  Json both = KernelCache("both");
  both["spec"]["storage"]["existingClaim"] = "mine";
  Status s;
  std::string out;
  s = cluster_->KubectlWithInput({"apply", "-f", "-"}, both.dump(), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("spec.storage"), std::string::npos) << s;

  Json no_command = KernelCache("nocommand");
  no_command["spec"]["warmup"]["command"] = Json::array();
  s = cluster_->KubectlWithInput({"apply", "-f", "-"}, no_command.dump(), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("spec.warmup.command"), std::string::npos) << s;

  // Reserved cache-view variable: the schema accepts it, the operator refuses it.
  Json reserved = KernelCache("reserved");
  reserved["spec"]["warmup"]["env"] = {{{"name", "TRITON_CACHE_DIR"}, {"value", "/tmp/x"}}};
  CreateKc(reserved);
  ASSERT_TRUE(Eventually(
      [&] {
        Json kc = GetKc("reserved");
        for (const Json& c :
             kc.value("status", Json::object()).value("conditions", Json::array())) {
          if (c.value("type", "") == "InvalidSpec" && c.value("status", "") == "True") return true;
        }
        return false;
      },
      60s))
      << GetKc("reserved").dump(2);
  Json kc = GetKc("reserved");
  bool named = false;
  for (const Json& c : kc["status"]["conditions"]) {
    if (c.value("type", "") == "InvalidSpec") {
      named = c.value("message", "").find("spec.warmup.env") != std::string::npos;
    }
  }
  EXPECT_TRUE(named) << kc["status"].dump(2);
  EXPECT_TRUE(Jobs("kernelcache.io/name=reserved").empty());
  auto pvc = client_->Get(kube::resources::kPersistentVolumeClaims, ns_, "reserved-cache");
  EXPECT_TRUE(IsNotFound(pvc.status())) << "no claim for an invalid spec";
  std::string events;
  EXPECT_TRUE(Eventually([&] {
    events = Kubectl({"get", "events", "-n", ns_, "--field-selector",
                      "involvedObject.name=reserved", "-o", "json"});
    return events.find("InvalidSpec") != std::string::npos;
  })) << events;
}

// A failed warmup: Failed with its reason, then retried with backoff.
TEST_F(OperatorIntegrationTest, FailedWarmupRetries) {
  AddNode(ns_ + "-a", kDriverA);
  AddPv();
  StartOperator();
  Json spec = KernelCache("llama");
  spec["spec"]["warmup"]["env"] = {{{"name", "KC_TEST_OUTCOME"}, {"value", "fail"}}};
  CreateKc(spec);
  // The first warmup Job, seen while it exists.
  std::string first_uid;
  ASSERT_TRUE(Eventually([&] {
    auto jobs = WarmupJobs("llama");
    if (jobs.empty()) return false;
    first_uid = jobs[0]["metadata"].value("uid", "");
    return !first_uid.empty();
  })) << GetKc("llama").dump(2);

  Json failed;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1 || fps[0].value("state", "") != "Failed") return false;
        failed = fps[0];
        return true;
      },
      120s))
      << GetKc("llama").dump(2);
  EXPECT_GE(failed.value("failures", 0), 1);
  EXPECT_FALSE(failed.value("lastFailure", "").empty()) << failed.dump();
  EXPECT_TRUE(failed.value("manifestDigest", "").empty());

  // Retried with backoff: a later attempt fails again (failures grows).
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        return fps.size() == 1 && fps[0].value("failures", 0) >= 2;
      },
      120s))
      << GetKc("llama").dump(2);
  auto fps = Fingerprints("llama");
  EXPECT_EQ(fps[0]["state"], "Failed");
  auto later_jobs = WarmupJobs("llama");
  EXPECT_LE(later_jobs.size(), 1u) << "never two warmup Jobs for one fingerprint";
  // The second failure came from a new Job: the first one was removed, not
  // counted twice.
  for (const auto& job : later_jobs) EXPECT_NE(job["metadata"]["uid"], first_uid);
  std::string events;
  EXPECT_TRUE(Eventually([&] {
    events = Kubectl({"get", "events", "-n", ns_, "-o", "json"});
    return events.find("Warning") != std::string::npos;
  })) << events;
}

// A model pod's gate (`kernelcache-wait`) quarantined the Ready cache and
// said so in its termination message: the operator reads it from the pod
// status (kubelet-written; here patched through the status subresource, as
// the kubelet would), marks the fingerprint Degraded, emits an Event,
// re-warms it with a new Job generation, and tells new pods why they wait.
TEST_F(OperatorIntegrationTest, GateQuarantineIsSeenAndRewarmed) {
  const std::string node = ns_ + "-a";
  AddNode(node, kDriverA);
  AddPv();
  // The miss channel on a listener of its own.
  const int misses_port = FreePort();
  const int port = StartOperator({"--misses-port=" + std::to_string(misses_port)});
  CreateKc(KernelCache("llama"));
  std::string fp;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1 || fps[0].value("state", "") != "Ready") return false;
        fp = fps[0].value("id", "");
        return true;
      },
      120s))
      << GetKc("llama").dump(2);
  const std::string first_job = WarmupJobs("llama").at(0)["metadata"]["name"];

  CreateGatedPod("llama-0", "llama");
  const std::string report = Json{{"outcome", "Failed"},
                                  {"reason", "Quarantined"},
                                  {"fingerprint", fp},
                                  {"message", "cache failed validation"},
                                  {"quarantined",
                                   {{{"fingerprint", fp},
                                     {"expectedDigest", kDigest},
                                     {"foundDigest", kDigest},
                                     {"level", "Checksums"},
                                     {"file", "triton/k.cubin"},
                                     {"reason", "sha256 mismatch"},
                                     {"movedTo", "/var/cache/kernelcache/v1/.quarantine/x"}}}}}
                                 .dump();
  WriteGateResult("llama-0", 9, "Error", report);

  // Degraded, with the reason, a new warmup generation...
  Json degraded;
  ASSERT_TRUE(Eventually(
      [&] {
        Json f = StateOf(Fingerprints("llama"), fp);
        if (f.value("state", "") != "Degraded") return false;
        degraded = f;
        return true;
      },
      60s))
      << GetKc("llama").dump(2);
  EXPECT_NE(degraded.value("lastFailure", "").find("pod llama-0"), std::string::npos)
      << degraded.dump();
  EXPECT_EQ(degraded.value("warmGeneration", 0), 1) << degraded.dump();
  // Events are recorded asynchronously: the status can be seen first.
  EXPECT_TRUE(Eventually([&] {
    return EventMessage("llama", "CacheQuarantined").find("sha256 mismatch") != std::string::npos;
  })) << EventMessage("llama", "CacheQuarantined");
  // ...and, while it runs or once done, a Job other than the first.
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Json& j : WarmupJobs("llama")) {
          if (j["metadata"].value("name", "") != first_job) return true;
        }
        return false;
      },
      60s));
  // New pods are told why they wait while it is Degraded (or Ready again
  // once the re-warm sealed).
  int code = 0;
  Json answer =
      Http(port, "/v1/resolve?namespace=" + ns_ + "&kernelcache=llama&node=" + node, &code);
  EXPECT_EQ(code, 200) << answer.dump();
  if (answer.value("state", "") == "Degraded") {
    EXPECT_NE(answer.value("message", "").find("re-warmed"), std::string::npos) << answer.dump();
  } else {
    EXPECT_EQ(answer.value("state", ""), "Ready") << answer.dump();
  }
  // The re-warm seals (kwok completes it): Ready again, and the report that
  // stays in the pod's status does not start another re-warm.
  ASSERT_TRUE(Eventually(
      [&] { return StateOf(Fingerprints("llama"), fp).value("state", "") == "Ready"; }, 120s))
      << GetKc("llama").dump(2);
  Json kc = GetKc("llama");
  EXPECT_EQ(StateOf(Fingerprints("llama"), fp).value("warmGeneration", 0), 1);
  for (const Json& c : kc["status"]["conditions"]) {
    if (c.value("type", "") == "Degraded") {
      EXPECT_EQ(c["status"], "False") << c.dump();
    }
  }
}

// A fingerprint mismatch in the termination message is not accepted.
TEST_F(OperatorIntegrationTest, FingerprintMismatchRejected) {
  AddNode(ns_ + "-a", kDriverA);
  AddPv();
  StartOperator();
  Json spec = KernelCache("llama");
  spec["spec"]["warmup"]["env"] = {{{"name", "KC_TEST_OUTCOME"}, {"value", "mismatch"}}};
  CreateKc(spec);
  Json failed;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1 || fps[0].value("state", "") != "Failed") return false;
        failed = fps[0];
        return true;
      },
      120s))
      << GetKc("llama").dump(2);
  EXPECT_NE(failed.value("lastFailure", "").find("ismatch"), std::string::npos) << failed.dump();
  EXPECT_TRUE(failed.value("manifestDigest", "").empty()) << failed.dump();
  EXPECT_EQ(GetKc("llama")["status"].value("readyFingerprints", -1), 0);
}

// The operator killed mid-warmup and restarted: no duplicate Job, converges.
TEST_F(OperatorIntegrationTest, KilledMidWarmupConverges) {
  AddNode(ns_ + "-a", kDriverA);
  AddPv();
  StartOperator();
  CreateKc(KernelCache("llama"));
  // Kill it while the warmup is in flight: the Job exists and the status
  // says Warming (kwok completes warmup pods 3 s after they run).
  std::string uid;
  ASSERT_TRUE(Eventually(
      [&] {
        auto jobs = WarmupJobs("llama");
        auto f = Fingerprints("llama");
        if (jobs.size() != 1 || f.size() != 1 || f[0].value("state", "") != "Warming") return false;
        uid = jobs[0]["metadata"]["uid"];
        return true;
      },
      60s))
      << GetKc("llama").dump(2);
  operators_.back()->Kill(SIGKILL);
  auto jobs_at_kill = WarmupJobs("llama");
  ASSERT_EQ(jobs_at_kill.size(), 1u);
  std::cerr << "Job status when the operator was killed: "
            << jobs_at_kill[0].value("status", Json::object()).dump() << "\n";

  StartOperator();
  ASSERT_TRUE(Eventually(
      [&] {
        auto f = Fingerprints("llama");
        return f.size() == 1 && f[0].value("state", "") == "Ready";
      },
      120s))
      << GetKc("llama").dump(2);
  auto jobs = WarmupJobs("llama");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["uid"], uid) << "the restarted operator must adopt the Job";
}

// Two replicas with leader election: one leader, no double work; the
// follower takes over when the leader stops.
TEST_F(OperatorIntegrationTest, TwoReplicasOneLeader) {
  AddNode(ns_ + "-a", kDriverA);
  AddNode(ns_ + "-b", kDriverB);
  AddPv();
  const std::vector<std::string> le = {"--leader-elect=true", "--leader-election-namespace=" + ns_,
                                       "--lease-duration=6s", "--renew-deadline=4s",
                                       "--retry-period=1s"};
  auto with_id = [&](const std::string& id) {
    auto v = le;
    v.push_back("--identity=" + id);
    return v;
  };
  const int p1 = StartOperator(with_id("replica-1"));
  const int p2 = StartOperator(with_id("replica-2"));
  CreateKc(KernelCache("llama"));
  ASSERT_TRUE(Eventually(
      [&] {
        Json kc = GetKc("llama");
        return kc.is_object() &&
               kc.value("status", Json::object()).value("readyFingerprints", 0) == 2;
      },
      120s))
      << GetKc("llama").dump(2);
  EXPECT_EQ(WarmupJobs("llama").size(), 2u);

  auto lease = client_->Get(kube::resources::kLeases, ns_, "kernelcache-operator");
  ASSERT_TRUE(lease.ok()) << lease.status();
  const std::string holder = (*lease)["spec"].value("holderIdentity", "");
  EXPECT_TRUE(holder == "replica-1" || holder == "replica-2") << holder;
  auto is_leader = [&](int port) {
    auto m = op::HttpGet("127.0.0.1", port, "/metrics");
    return m.ok() &&
           m->body.find("leader_election_master_status{name=\"kernelcache-operator\"} 1") !=
               std::string::npos;
  };
  EXPECT_NE(is_leader(p1), is_leader(p2)) << "exactly one leader";
  // Only the leader created anything.
  const size_t leader_idx = holder == "replica-1" ? 0 : 1;
  EXPECT_EQ(operators_[1 - leader_idx]->Log().find("\"msg\":\"created\""), std::string::npos);
  EXPECT_NE(operators_[leader_idx]->Log().find("\"msg\":\"created\""), std::string::npos);
  // Both answer resolve from their caches (readiness regardless of leadership).
  int code = 0;
  Http(p1, "/v1/resolve?namespace=" + ns_ + "&kernelcache=llama&node=" + ns_ + "-a", &code);
  EXPECT_EQ(code, 200);
  Http(p2, "/v1/resolve?namespace=" + ns_ + "&kernelcache=llama&node=" + ns_ + "-a", &code);
  EXPECT_EQ(code, 200);

  // The leader stops gracefully (SIGTERM releases the lease); the other takes over.
  int st = operators_[leader_idx]->Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "graceful exit, status " << st;
  const std::string other = holder == "replica-1" ? "replica-2" : "replica-1";
  ASSERT_TRUE(Eventually(
      [&] {
        auto l = client_->Get(kube::resources::kLeases, ns_, "kernelcache-operator");
        return l.ok() && (*l)["spec"].value("holderIdentity", "") == other;
      },
      30s));
  // The new leader changes nothing that is already right.
  AddNode(ns_ + "-c", kDriverA);  // same fingerprint as -a: node count 2, no new Job
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Json& f : Fingerprints("llama")) {
          if (f.value("driver", "") == kDriverA) return f.value("nodes", 0) == 2;
        }
        return false;
      },
      60s))
      << GetKc("llama").dump(2);
  EXPECT_EQ(WarmupJobs("llama").size(), 2u);
}

// Deletion cleans up what the operator created and nothing else.
// A full GPU pool: the node's only GPU is held by a model
// pod, so the warmup pod stays Pending (PodScheduled=False Unschedulable).
// Past --warmup-unschedulable-grace the operator says so (condition and a
// Warning Event naming the fingerprint, its node class and the scheduler's
// message), /v1/resolve answers startCold, and a real `initwarm wait
// --on-timeout StartCold` against it starts cold at once instead of
// waiting out its timeout. Once the GPU is free the warmup runs and the
// condition clears.
TEST_F(OperatorIntegrationTest, WarmupOnAFullPoolIsReportedAndStartColdPodsProceed) {
  const std::string node = ns_ + "-a";
  AddNode(node, kDriverA, {}, false, /*gpus=*/1);
  AddPv();
  AddGpuPod("model-0");
  const int port = StartOperator({"--warmup-unschedulable-grace=2s"});
  CreateKc(KernelCache("llama"));
  std::string fp;
  Json cond;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1) return false;
        fp = fps[0].value("id", "");
        cond = Condition("llama", "WarmupUnschedulable");
        return cond.value("status", "") == "True";
      },
      90s))
      << GetKc("llama").dump(2);
  const std::string msg = cond.value("message", "");
  EXPECT_NE(msg.find("fingerprint " + fp), std::string::npos) << msg;
  EXPECT_NE(msg.find("NVIDIA-H200"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Insufficient nvidia.com/gpu"), std::string::npos) << msg;
  EXPECT_EQ(StateOf(Fingerprints("llama"), fp).value("state", ""), "Warming");
  EXPECT_TRUE(Eventually([&] {
    return EventMessage("llama", "WarmupUnschedulable").find(fp) != std::string::npos;
  })) << EventMessage("llama", "WarmupUnschedulable");

  int code = 0;
  const std::string resolve = "/v1/resolve?namespace=" + ns_ + "&kernelcache=llama&node=" + node;
  Json answer = Http(port, resolve, &code);
  ASSERT_EQ(code, 200) << answer.dump();
  EXPECT_EQ(answer.value("startCold", false), true) << answer.dump();
  EXPECT_EQ(answer.value("reason", ""), "WarmupUnschedulable") << answer.dump();
  EXPECT_FALSE(answer.value("final", false)) << answer.dump();

  // The gate of a StartCold pod: exits 0 with a cold view, long before its
  // 10-minute timeout.
  const std::string dir = log_dir_ + "/" + name_ + "-gate";
  std::filesystem::create_directories(dir + "/volume");
  const std::string out = dir + "/wait.log";
  const std::string cmd =
      std::string(KC_INITWARM_BINARY) + " wait --root=" + dir + "/volume --view=" + dir +
      "/run/view --resolve-url=http://127.0.0.1:" + std::to_string(port) + " --namespace=" + ns_ +
      " --kernelcache=llama --node=" + node +
      " --on-timeout=StartCold --timeout=600s --no-probe --termination-log=" + dir +
      "/termination-log >" + out + " 2>&1";
  const auto started = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const auto took = std::chrono::steady_clock::now() - started;
  std::ifstream log_in(out);
  const std::string log((std::istreambuf_iterator<char>(log_in)), {});
  ASSERT_TRUE(WIFEXITED(rc)) << log;
  EXPECT_EQ(WEXITSTATUS(rc), 0) << log;
  EXPECT_LT(took, 60s) << log;
  EXPECT_NE(log.find("WarmupUnschedulable"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/run/view/triton")) << log;
  std::ifstream term_in(dir + "/termination-log");
  const std::string term((std::istreambuf_iterator<char>(term_in)), {});
  EXPECT_NE(term.find("\"outcome\":\"Cold\""), std::string::npos) << term;

  // The GPU frees up: the warmup schedules, seals, and the condition clears.
  ASSERT_TRUE(client_->Delete(kube::resources::kPods, ns_, "model-0").ok());
  ASSERT_TRUE(Eventually(
      [&] { return StateOf(Fingerprints("llama"), fp).value("state", "") == "Ready"; }, 120s))
      << GetKc("llama").dump(2);
  ASSERT_TRUE(Eventually([&] {
    return Condition("llama", "WarmupUnschedulable").value("status", "") == "False";
  })) << GetKc("llama").dump(2);
  answer = Http(port, resolve, &code);
  EXPECT_FALSE(answer.value("startCold", false)) << answer.dump();
}

// The same full pool with the warmup PriorityClass (created here the way
// charts/kernelcache/templates/priorityclass.yaml defines it, with
// values.yaml's value): the scheduler preempts the low-priority model pod
// holding the GPU, and the warmup runs.
TEST_F(OperatorIntegrationTest, WarmupPriorityPreemptsAModelPodOnAFullPool) {
  static const kube::Resource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses",
                                               "PriorityClass", false};
  const std::string pc = ns_ + "-warmup";
  Json klass = {{"apiVersion", "scheduling.k8s.io/v1"},
                {"kind", "PriorityClass"},
                {"metadata", {{"name", pc}}},
                {"value", 1000000000},
                {"preemptionPolicy", "PreemptLowerPriority"},
                {"globalDefault", false},
                {"description", "KernelCache warmup Jobs"}};
  auto created = client_->Create(kPriorityClasses, "", klass);
  ASSERT_TRUE(created.ok()) << created.status();
  struct Cleanup {
    kube::Client* c;
    std::string name;
    ~Cleanup() { (void)c->Delete(kPriorityClasses, "", name); }
  } cleanup{client_.get(), pc};

  const std::string node = ns_ + "-a";
  AddNode(node, kDriverA, {}, false, /*gpus=*/1);
  AddPv();
  AddGpuPod("model-0");  // priority 0
  StartOperator({"--warmup-priority-class=" + pc, "--warmup-unschedulable-grace=2m"});
  CreateKc(KernelCache("llama"));
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        return fps.size() == 1 && fps[0].value("state", "") == "Ready";
      },
      120s))
      << GetKc("llama").dump(2) << "\nmodel pod: " << [&] {
           auto p = client_->Get(kube::resources::kPods, ns_, "model-0");
           return p.ok() ? p->dump(2) : p.status().ToString();
         }();
  // The warmup pod carried the class; the model pod was preempted.
  const std::vector<Json> jobs = WarmupJobs("llama");
  ASSERT_FALSE(jobs.empty());
  EXPECT_EQ(jobs[0]["spec"]["template"]["spec"].value("priorityClassName", ""), pc);
  EXPECT_TRUE(Eventually([&] {
    auto p = client_->Get(kube::resources::kPods, ns_, "model-0");
    return !p.ok() || (*p)["metadata"].contains("deletionTimestamp");
  })) << "the model pod holding the only GPU was not preempted";
  EXPECT_NE(Condition("llama", "WarmupUnschedulable").value("status", ""), "True");
}

TEST_F(OperatorIntegrationTest, DeletionCleansUpOnlyOwnObjects) {
  AddNode(ns_ + "-a", kDriverA);
  AddPv("-own");
  AddPv("-existing");
  StartOperator();
  // The user's claim and an unrelated Job.
  Json claim = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", "mine"}, {"namespace", ns_}}},
                {"spec",
                 {{"accessModes", {"ReadWriteMany"}},
                  {"storageClassName", StorageClass()},
                  {"resources", {{"requests", {{"storage", "10Gi"}}}}}}}};
  ASSERT_TRUE(client_->Create(kube::resources::kPersistentVolumeClaims, ns_, claim).ok());
  Json unrelated = Json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
      "metadata":{"name":"unrelated"},
      "spec":{"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","image":"busybox"}]}}}})");
  unrelated["metadata"]["namespace"] = ns_;
  unrelated["spec"]["template"]["spec"]["nodeSelector"] = {{"kc-test", name_}};
  ASSERT_TRUE(client_->Create(kube::resources::kJobs, ns_, unrelated).ok());

  Json own = KernelCache("own");
  CreateKc(own);
  Json existing = KernelCache("existing");
  existing["spec"]["storage"] = {{"existingClaim", "mine"}};
  CreateKc(existing);
  for (const char* name : {"own", "existing"}) {
    ASSERT_TRUE(Eventually(
        [&] {
          auto f = Fingerprints(name);
          return f.size() == 1 && f[0].value("state", "") == "Ready";
        },
        120s))
        << GetKc(name).dump(2);
  }
  ASSERT_TRUE(client_->Get(kube::resources::kPersistentVolumeClaims, ns_, "own-cache").ok());

  for (const char* name : {"own", "existing"}) {
    ASSERT_TRUE(client_->Delete(kKernelCaches, ns_, name).ok());
  }
  for (const char* name : {"own", "existing"}) {
    ASSERT_TRUE(Eventually(
        [&] { return IsNotFound(client_->Get(kKernelCaches, ns_, name).status()); }, 60s))
        << GetKc(name).dump(2);
  }
  // Warmup Jobs of both go (foreground of the finalizer), the created claim
  // goes, the user's claim and Job stay.
  ASSERT_TRUE(
      Eventually([&] { return WarmupJobs("own").empty() && WarmupJobs("existing").empty(); }, 60s));
  ASSERT_TRUE(Eventually(
      [&] {
        auto pvc = client_->Get(kube::resources::kPersistentVolumeClaims, ns_, "own-cache");
        return IsNotFound(pvc.status()) ||
               (pvc.ok() && (*pvc)["metadata"].contains("deletionTimestamp"));
      },
      60s));
  auto mine = client_->Get(kube::resources::kPersistentVolumeClaims, ns_, "mine");
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_FALSE((*mine)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(client_->Get(kube::resources::kJobs, ns_, "unrelated").ok());
}

}  // namespace
}  // namespace kc::optest

namespace kc::optest {
namespace {

// The real binary refuses bad configuration with exit 2 and a message naming
// the problem (no cluster needed).
// The miss channel against the real API server: a gated pod's own bound
// token passes a real TokenReview and its report counts; relabelled to a
// KernelCache that does not exist, the same pod's report is refused; a
// forged signature is refused by the review; a flood of junk tokens is
// refused before any review while /readyz answers.
// The channel listens on --misses-port, not on the resolve port.
TEST_F(OperatorIntegrationTest, MissReportsCountOnlyForTheirKernelCachesDigest) {
  const std::string node = ns_ + "-a";
  AddNode(node, kDriverA);
  AddPv();
  // The miss channel on a listener of its own.
  const int misses_port = FreePort();
  const int port = StartOperator({"--misses-port=" + std::to_string(misses_port)});
  CreateKc(KernelCache("llama"));
  std::string fp;
  ASSERT_TRUE(Eventually(
      [&] {
        auto fps = Fingerprints("llama");
        if (fps.size() != 1 || fps[0].value("state", "") != "Ready") return false;
        fp = fps[0].value("id", "");
        return true;
      },
      120s))
      << GetKc("llama").dump(2);

  const std::string uid = CreateGatedPod("llama-0", "llama");
  ASSERT_FALSE(uid.empty());
  core::GateReport warm;
  warm.outcome = core::GateOutcome::kWarm;
  warm.reason = "Validated";
  warm.fingerprint = fp;
  warm.manifest_digest = kDigest;
  WriteGateResult("llama-0", 0, "Completed", core::GateReportToJson(warm));

  // The pod's own token, bound to it, for the miss channel's audience.
  Status made;
  std::string token =
      Kubectl({"-n", ns_, "create", "token", "default", "--audience", core::kMissTokenAudience,
               "--bound-object-kind", "Pod", "--bound-object-name", "llama-0", "--bound-object-uid",
               uid, "--duration", "10m"},
              &made);
  ASSERT_TRUE(made.ok()) << token;
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  const std::string body = core::MissReportToJson(
      {fp, {{core::MissFramework::kTriton, "K1", "kernel add_kernel", 8, 100}}, std::nullopt});
  auto post_to = [&](int to, const std::string& bearer) {
    auto r = op::HttpPost("127.0.0.1", to, core::kMissReportPath, body, "Bearer " + bearer);
    return r.ok() ? *r : op::HttpGetResult{-1, r.status().message(), ""};
  };
  auto post = [&](const std::string& bearer) { return post_to(misses_port, bearer); };
  // Not on the resolve listener: only on its own.
  EXPECT_EQ(post_to(port, token).status, 404);
  op::HttpGetResult last;
  ASSERT_TRUE(Eventually(
      [&] {
        last = post(token);
        return last.status == 200;
      },
      60s))
      << last.status << " " << last.body;
  EXPECT_EQ(Json::parse(last.body).value("accepted", 0), 1) << last.body;

  // Forged: the pod's own claims under another signature. The claims pass
  // the checks before any API call, the real TokenReview refuses it: 401.
  std::string forged = token;
  const size_t sig = token.rfind('.') + 10;  // inside the signature
  ASSERT_LT(sig, token.size());
  forged[sig] = forged[sig] == 'A' ? 'B' : 'A';
  const op::HttpGetResult refused = post(forged);
  EXPECT_EQ(refused.status, 401) << refused.body;
  EXPECT_NE(refused.body.find("not authenticated"), std::string::npos) << refused.body;

  // Relabelled to a KernelCache that does not exist: refused, named.
  Json relabel = {{"metadata", {{"labels", {{core::kConsumerLabel, "ghost"}}}}}};
  ASSERT_TRUE(
      client_->Patch(kube::resources::kPods, ns_, "llama-0", kube::PatchType::kMerge, relabel, {})
          .ok());
  ASSERT_TRUE(Eventually(
      [&] {
        last = post(token);
        return last.status == 403;
      },
      60s))
      << last.status << " " << last.body;
  EXPECT_NE(last.body.find("ghost"), std::string::npos) << last.body;
  EXPECT_NE(last.body.find("does not exist"), std::string::npos) << last.body;

  // Junk: refused before any TokenReview, while the listener stays ready.
  for (int i = 0; i < 200; ++i) {
    op::HttpGetResult junk = post("junk-" + std::to_string(i));
    ASSERT_EQ(junk.status, 401) << junk.body;
    if (i == 0) {
      EXPECT_NE(junk.body.find("not a JWT"), std::string::npos) << junk.body;
    }
  }
  auto ready = op::HttpGet("127.0.0.1", port, "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200);
  auto metrics = op::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok());
  const std::string series = "kernelcache_miss_reports_total{code=\"401\"} ";
  const size_t at = metrics->body.find(series);
  ASSERT_NE(at, std::string::npos) << metrics->body.substr(0, 4000);
  EXPECT_GE(std::atof(metrics->body.c_str() + at + series.size()), 200.0);
}

TEST(OperatorBinaryTest, BadConfigExitsTwoNamingTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{"--workers=0"}, "--workers: 0 is out of range 1..64"},
      {{"--config=/nonexistent/kernelcache.yaml"},
       "--config: cannot read /nonexistent/kernelcache.yaml"},
      {{"--log-format=xml"}, "--log-format: \"xml\" is not one of json, text"},
      {{"--kubeconfig=/nonexistent/kubeconfig", "--leader-elect=false"}, "/nonexistent/kubeconfig"},
      // Hostile values: a clear message and exit 2, not an uncaught
      // std::out_of_range from std::stoll (which aborted the process).
      {{"--lease-duration=" + std::string(400, '9') + "s"}, "--lease-duration: duration"},
      {{"--retry-period=999999999h"}, "--retry-period: duration \"999999999h\" is too long"},
      {{"--workers=99999999999999999999"}, "--workers: 99999999999999999999 is out of range"},
  };
  const std::string dir = ::testing::TempDir();
  int i = 0;
  for (const Case& c : cases) {
    OperatorProcess op(KC_OPERATOR_BINARY, dir + "/bad-config-" + std::to_string(i++) + ".log");
    ASSERT_TRUE(op.Start(c.args).ok());
    int st = 0;
    ASSERT_TRUE(op.WaitExit(30000, &st)) << c.args[0];
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << c.args[0] << ": status " << st;
    EXPECT_NE(op.Log().find(c.want), std::string::npos) << op.Log();
  }
}

// --help prints the usage and exits 0 (it was reported as a NotFound error).
TEST(OperatorBinaryTest, HelpPrintsUsageAndExitsZero) {
  const std::string dir = ::testing::TempDir();
  int i = 0;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"--workers=3", "--help"}}) {
    OperatorProcess op(KC_OPERATOR_BINARY, dir + "/help-" + std::to_string(i++) + ".log");
    ASSERT_TRUE(op.Start(args).ok());
    int st = 0;
    ASSERT_TRUE(op.WaitExit(30000, &st)) << args[0];
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << args[0] << ": status " << st;
    EXPECT_NE(op.Log().find("Usage: kernelcache-operator"), std::string::npos) << op.Log();
    EXPECT_NE(op.Log().find("--leader-elect"), std::string::npos) << op.Log();
    EXPECT_EQ(op.Log().find("NotFound"), std::string::npos) << op.Log();
  }
}

}  // namespace
}  // namespace kc::optest
