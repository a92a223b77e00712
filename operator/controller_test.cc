// The controller's wiring on the in-memory FakeClient (kube/testing/fake_client.h):
// informers -> handlers -> queue -> workers -> Reconciler -> Decide -> client.
// No cluster; the integration suite under tests/operator/ covers the real one.
#include "operator/controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "kube/testing/fake_client.h"
#include "testing/eventually.h"

namespace kc::op {
namespace {

using Json = kube::Json;
using namespace std::chrono_literals;

Json GpuNode(const std::string& name, const std::string& driver) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"nvidia.com/gpu.present", "true"},
              {"nvidia.com/gpu.product", "NVIDIA-H200"},
              {"nvidia.com/gpu.compute.major", "9"},
              {"nvidia.com/gpu.compute.minor", "0"},
              {"nvidia.com/cuda.driver-version.full", driver},
              {"nvidia.com/cuda.runtime-version.full", "13.0"},
              {"nvidia.com/cuda.runtime-version.major", "13"},
              {"nvidia.com/cuda.runtime-version.minor", "0"},
              {"kubernetes.io/arch", "amd64"}}}}},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", "8"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

Json KernelCacheObj() {
  return {{"apiVersion", "kernelcache.io/v1alpha1"},
          {"kind", "KernelCache"},
          {"metadata", {{"name", "llama"}, {"namespace", "ml"}}},
          {"spec",
           {{"podSelector", {{"matchLabels", {{"app", "llama"}}}}},
            {"nodeSelector", {{"nvidia.com/gpu.present", "true"}}},
            {"image", "registry.example/llama@sha256:" + std::string(64, 'a')},
            {"warmup", {{"command", {"python3", "/app/warmup.py"}}}},
            {"storage", {{"size", "10Gi"}}}}}};
}

using kc::testutil::Eventually;

std::vector<Json> Jobs(kube::FakeClient& fake) {
  auto list = fake.List(kube::resources::kJobs, "ml", {});
  return list.ok() ? list->items : std::vector<Json>{};
}

TEST(ControllerTest, WarmsOneJobPerFingerprintAndFollowsNodeChanges) {
  kube::FakeClient fake;
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("gpu-1", "580.159.04")).ok());
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("gpu-2", "580.159.04")).ok());
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", KernelCacheObj()).ok());

  std::ostringstream logs;
  OperatorMetrics metrics;
  ControllerOptions opts;
  opts.workers = 2;
  Controller controller(fake, opts, &metrics, Logger(&logs, true, LogLevel::kDebug));
  controller.StartInformers();
  std::jthread workers([&](const std::stop_token& stop) { controller.RunWorkers(stop); });

  // One fingerprint (both nodes alike): one Job, a claim, a finalizer, status.
  ASSERT_TRUE(Eventually([&] { return Jobs(fake).size() == 1; })) << logs.str();
  ASSERT_TRUE(Eventually([&] {
    auto kc = fake.Get(resources::KernelCaches(), "ml", "llama");
    return kc.ok() && kc->contains("status") &&
           (*kc)["status"].value("fingerprints", Json::array()).size() == 1 &&
           !(*kc)["metadata"].value("finalizers", Json::array()).empty();
  })) << logs.str();
  EXPECT_TRUE(fake.Get(kube::resources::kPersistentVolumeClaims, "ml", "llama-cache").ok());

  // A driver upgrade on one node: a second fingerprint, a second Job.
  auto node = fake.Get(kube::resources::kNodes, "", "gpu-2");
  ASSERT_TRUE(node.ok());
  (*node)["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "580.200.01";
  ASSERT_TRUE(fake.Update(kube::resources::kNodes, "", *node).ok());
  ASSERT_TRUE(Eventually([&] { return Jobs(fake).size() == 2; })) << logs.str();

  // Reconciles happened and were counted; the logs are JSON with the key.
  EXPECT_GT(
      metrics.registry().Value("controller_runtime_reconcile_total",
                               {{"controller", "kernelcache"}, {"result", "success"}}) +
          metrics.registry().Value("controller_runtime_reconcile_total",
                                   {{"controller", "kernelcache"}, {"result", "requeue_after"}}),
      0);
  EXPECT_NE(logs.str().find("\"kernelcache\":\"ml/llama\""), std::string::npos);

  // Resolve answers from the caches.
  ResolveResponse r = controller.Resolve({"ml", "llama", "gpu-2"});
  EXPECT_EQ(r.http_status, 200) << r.body.dump();
  EXPECT_EQ(r.body["node"]["driver"], "580.200.01");
  EXPECT_EQ(controller.Resolve({"ml", "nope", "gpu-2"}).http_status, 404);

  // No duplicate Jobs after more passes: a resync of everything.
  controller.queue().Add("ml/llama");
  ASSERT_TRUE(Eventually([&] { return controller.queue().Len() == 0; }));
  EXPECT_EQ(Jobs(fake).size(), 2u);

  workers.request_stop();
  workers.join();
  controller.Stop();
}

TEST(ControllerTest, WatchesOnlyTheListedNamespaces) {
  kube::FakeClient fake;
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("gpu-1", "580.159.04")).ok());
  for (const char* ns : {"ml", "team-b", "ignored"}) {
    Json kc = KernelCacheObj();
    kc["metadata"]["namespace"] = ns;
    ASSERT_TRUE(fake.Create(resources::KernelCaches(), ns, kc).ok());
  }
  std::ostringstream logs;
  ControllerOptions opts;
  opts.namespaces = {"ml", "team-b"};
  Controller controller(fake, opts, nullptr, Logger(&logs, true, LogLevel::kInfo));
  controller.StartInformers();
  std::jthread workers([&](const std::stop_token& stop) { controller.RunWorkers(stop); });
  auto jobs_in = [&](const char* ns) {
    auto list = fake.List(kube::resources::kJobs, ns, {});
    return list.ok() ? list->items.size() : 0u;
  };
  ASSERT_TRUE(Eventually([&] { return jobs_in("ml") == 1 && jobs_in("team-b") == 1; }))
      << logs.str();
  ASSERT_TRUE(Eventually([&] { return controller.queue().Len() == 0; }));
  const auto actions = fake.Actions();  // before this test's own reads below
  EXPECT_EQ(jobs_in("ignored"), 0u);
  EXPECT_FALSE(fake.Get(resources::KernelCaches(), "ignored", "llama")->contains("status"));
  // Nothing was ever listed or watched in the unlisted namespace, nor
  // cluster-wide for a namespaced resource (that would see it too).
  int namespaced_watches = 0;
  for (const auto& a : actions) {
    if (a.verb != "list" && a.verb != "watch") continue;
    EXPECT_NE(a.ns, "ignored") << a.verb << " " << a.resource;
    const bool namespaced_kind = a.resource.starts_with("kernelcaches") ||
                                 a.resource.starts_with("jobs") || a.resource.starts_with("pods") ||
                                 a.resource.starts_with("persistentvolumeclaims");
    EXPECT_FALSE(namespaced_kind && a.ns.empty()) << "cluster-wide " << a.verb << " " << a.resource;
    if (a.verb == "watch" && (a.ns == "ml" || a.ns == "team-b")) ++namespaced_watches;
  }
  EXPECT_GT(namespaced_watches, 0);
  workers.request_stop();
  workers.join();
  controller.Stop();
}

// controller-runtime's per-item panic recovery: a reconcile that throws
// (here: every Job create for KernelCache "bad") does not end the process
// or stop the workers. That object gets Degraded/ReconcileError and is
// retried with rate-limited backoff; the other KernelCache is warmed as if
// nothing happened.
TEST(ControllerTest, AThrowingReconcileIsRetriedAndOthersGoOn) {
  kube::FakeClient fake;
  std::atomic<int> throws{0};
  fake.SetReactor([&throws](const kube::FakeAction& a) -> Status {
    if (a.verb == "create" && a.resource == "jobs.batch" &&
        a.body["metadata"]["labels"].value(kLabelName, "") == "bad") {
      ++throws;
      throw std::runtime_error("injected: a reconcile bug");
    }
    return OkStatus();
  });
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("gpu-1", "580.159.04")).ok());
  Json bad = KernelCacheObj();
  bad["metadata"]["name"] = "bad";
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", bad).ok());
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", KernelCacheObj()).ok());

  std::ostringstream logs;
  OperatorMetrics metrics;
  ControllerOptions opts;
  opts.workers = 1;  // one worker: the good key is served although the bad one keeps failing
  Controller controller(fake, opts, &metrics, Logger(&logs, true, LogLevel::kDebug));
  controller.StartInformers();
  std::jthread workers([&](const std::stop_token& stop) { controller.RunWorkers(stop); });

  // The good one is warmed...
  ASSERT_TRUE(Eventually([&] {
    for (const Json& j : Jobs(fake)) {
      if (j["metadata"]["labels"].value(kLabelName, "") == "llama") return true;
    }
    return false;
  })) << logs.str();
  // ...the bad one is retried (with backoff) and says why in its status.
  ASSERT_TRUE(Eventually([&] { return throws.load() >= 3; })) << logs.str();
  ASSERT_TRUE(Eventually([&] {
    auto kc = fake.Get(resources::KernelCaches(), "ml", "bad");
    if (!kc.ok() || !kc->contains("status")) return false;
    for (const Json& c : (*kc)["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == "Degraded" && c.value("reason", "") == "ReconcileError" &&
          c.value("message", "").find("injected: a reconcile bug") != std::string::npos) {
        return true;
      }
    }
    return false;
  })) << logs.str();
  EXPECT_GT(metrics.registry().Value("controller_runtime_reconcile_total",
                                     {{"controller", "kernelcache"}, {"result", "error"}}),
            0);
  EXPECT_GE(controller.queue().NumRequeues("ml/bad"), 1);
  for (const Json& j : Jobs(fake)) EXPECT_NE(j["metadata"]["labels"].value(kLabelName, ""), "bad");

  workers.request_stop();
  workers.join();
  controller.Stop();
}

}  // namespace
}  // namespace kc::op
