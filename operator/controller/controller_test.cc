// The controller's wiring on the in-memory FakeClient (kube/testing/fake_client.h):
// informers -> handlers -> queue -> workers -> Reconciler -> Decide -> client.
// No cluster; the integration suite under tests/operator/ covers the real one.
#include "operator/controller/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "kube/testing/fake_client.h"
#include "operator/testing/objects.h"
#include "testing/eventually.h"

namespace kc::op {
namespace {

using Json = kube::Json;
using namespace std::chrono_literals;

Json GpuNode(const std::string& name, const std::string& driver) {
  return fixtures::GpuNodeJson(name, fixtures::GpuLabels(fixtures::kH200, driver));
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

// Takes every key queued now (the test plays the worker), sorted.
std::vector<std::string> Drain(kube::WorkQueue& q) {
  std::vector<std::string> keys;
  while (q.Len() > 0) {
    auto k = q.Get();
    if (!k) break;
    keys.push_back(*k);
    q.Done(*k);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// A node event queues only the KernelCaches whose nodeSelector matches the
// node's old or new labels, and none for a change Decide does not read (a
// heartbeat, the image list). Node events arrive in order, so each step
// ends with a change that does queue, and what it drains shows the steps
// before it queued nothing else.
TEST(ControllerTest, NodeEventsQueueOnlyTheKernelCachesTheyConcern) {
  kube::FakeClient fake;
  auto product = [](Json n, const std::string& p) {
    n["metadata"]["labels"]["nvidia.com/gpu.product"] = p;
    return n;
  };
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("h200-1", "580.159.04")).ok());
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "",
                          product(GpuNode("b200-1", "580.159.04"), "NVIDIA-B200"))
                  .ok());
  Json llama = KernelCacheObj();
  llama["spec"]["nodeSelector"]["nvidia.com/gpu.product"] = "NVIDIA-H200";
  Json other = KernelCacheObj();
  other["metadata"]["name"] = "other";
  other["spec"]["nodeSelector"]["nvidia.com/gpu.product"] = "NVIDIA-B200";
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", llama).ok());
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", other).ok());
  std::ostringstream logs;
  Controller controller(fake, ControllerOptions{}, nullptr, Logger(&logs, true, LogLevel::kInfo));
  controller.StartInformers();  // no workers: the test takes the keys
  ASSERT_TRUE(controller.WaitForSync({}, 10s));
  EXPECT_EQ(Drain(controller.queue()), (std::vector<std::string>{"ml/llama", "ml/other"}));

  auto change = [&](const std::string& name, const std::function<void(Json&)>& f) {
    auto node = fake.Get(kube::resources::kNodes, "", name);
    ASSERT_TRUE(node.ok());
    f(*node);
    ASSERT_TRUE(fake.Update(kube::resources::kNodes, "", *node).ok());
  };
  auto drained_after = [&](size_t n) {
    EXPECT_TRUE(Eventually([&] { return controller.queue().Len() >= n; })) << logs.str();
    return Drain(controller.queue());
  };
  auto driver = [](const std::string& v) {
    return [v](Json& n) { n["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = v; };
  };

  // A heartbeat and new images on the H200 node, then a B200 driver change.
  change("h200-1", [](Json& n) {
    n["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-12-02T09:00:00Z";
    n["status"]["images"] = {{{"names", {"registry.example/llama:1"}}}};
  });
  // Labels Decide does not read (the node controller's beta labels, GFD's
  // timestamp) on the selected H200 node: nothing either.
  change("h200-1", [](Json& n) {
    n["metadata"]["labels"]["beta.kubernetes.io/arch"] = "amd64";
    n["metadata"]["labels"]["nvidia.com/gfd.timestamp"] = "1733300000";
  });
  change("b200-1", driver("580.200.01"));
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/other"});

  // Cordoning or a driver change of the H200 node: only its KernelCache.
  change("h200-1", [](Json& n) { n["spec"]["unschedulable"] = true; });
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/llama"});
  change("h200-1", driver("580.200.01"));
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/llama"});

  // Relabelled from one pool to the other: both (old and new labels).
  change("h200-1", [&](Json& n) { n = product(n, "NVIDIA-B200"); });
  EXPECT_EQ(drained_after(2), (std::vector<std::string>{"ml/llama", "ml/other"}));

  // Deleted: the KernelCaches of its last labels (now the B200 pool's).
  ASSERT_TRUE(fake.Delete(kube::resources::kNodes, "", "h200-1").ok());
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/other"});
  EXPECT_EQ(controller.Resolve({"ml", "other", "h200-1"}).body.value("node", Json()), Json());

  // A deleted KernelCache's selector is forgotten: B200 events queue nothing
  // for it, only the KernelCache that selects every GPU node, added now.
  ASSERT_TRUE(fake.Delete(resources::KernelCaches(), "ml", "other").ok());
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/other"});  // its own delete event
  Json all = KernelCacheObj();
  all["metadata"]["name"] = "all";
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", all).ok());
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/all"});
  change("b200-1", driver("580.300.01"));
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/all"});
  controller.Stop();
}

// A node change can move a fingerprint, whose warmup Job users wait for: its
// KernelCaches go ahead of work queued before it (kube::WorkQueue::AddUrgent).
TEST(ControllerTest, NodeChangesQueueAheadOfOtherWork) {
  kube::FakeClient fake;
  ASSERT_TRUE(fake.Create(kube::resources::kNodes, "", GpuNode("h200-1", "580.159.04")).ok());
  ASSERT_TRUE(fake.Create(resources::KernelCaches(), "ml", KernelCacheObj()).ok());
  std::ostringstream logs;
  Controller controller(fake, ControllerOptions{}, nullptr, Logger(&logs, true, LogLevel::kInfo));
  controller.StartInformers();  // no workers: the test takes the keys
  ASSERT_TRUE(controller.WaitForSync({}, 10s));
  EXPECT_EQ(Drain(controller.queue()), std::vector<std::string>{"ml/llama"});

  controller.queue().Add("ml/earlier");  // queued first, without urgency
  auto node = fake.Get(kube::resources::kNodes, "", "h200-1");
  ASSERT_TRUE(node.ok());
  (*node)["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "580.200.01";
  ASSERT_TRUE(fake.Update(kube::resources::kNodes, "", *node).ok());
  EXPECT_TRUE(Eventually([&] { return controller.queue().Len() >= 2; })) << logs.str();
  std::vector<std::string> order;  // in hand-out order (Drain sorts)
  while (controller.queue().Len() > 0) {
    auto k = controller.queue().Get();
    if (!k) break;
    order.push_back(*k);
    controller.queue().Done(*k);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"ml/llama", "ml/earlier"}));
  controller.Stop();
}

// A warmup Job's or Pod's update queues its KernelCache only when what
// Decide reads of it changed (operator/decide/views.h): a Ready count, a condition
// it does not read or a new resourceVersion queue nothing. Each informer
// delivers in order, so each step ends with an update that does queue (for
// another KernelCache's object), and the drain shows nothing else was queued.
TEST(ControllerTest, JobAndPodUpdatesQueueOnlyWhenDecideSeesThem) {
  kube::FakeClient fake;
  auto owned = [](const char* kind, const char* name, const char* kc) {
    Json o = {{"apiVersion", std::string(kind) == "Job" ? "batch/v1" : "v1"},
              {"kind", kind},
              {"metadata", {{"name", name}, {"namespace", "ml"}, {"labels", {{kLabelName, kc}}}}},
              {"status", {{"active", 1}}}};
    if (std::string(kind) == "Pod") o["status"] = {{"phase", "Pending"}};
    return o;
  };
  for (const char* kc : {"quiet", "loud"}) {
    ASSERT_TRUE(fake.Create(kube::resources::kJobs, "ml", owned("Job", kc, kc)).ok());
    ASSERT_TRUE(fake.Create(kube::resources::kPods, "ml", owned("Pod", kc, kc)).ok());
  }
  std::ostringstream logs;
  Controller controller(fake, ControllerOptions{}, nullptr, Logger(&logs, true, LogLevel::kInfo));
  controller.StartInformers();  // no workers: the test takes the keys
  ASSERT_TRUE(controller.WaitForSync({}, 10s));
  EXPECT_EQ(Drain(controller.queue()), (std::vector<std::string>{"ml/loud", "ml/quiet"}));

  // Through the status subresource, as the Job controller and the kubelet
  // write (an update of the object itself keeps its status).
  auto change = [&](const kube::Resource& r, const char* name,
                    const std::function<void(Json&)>& f) {
    auto o = fake.Get(r, "ml", name);
    ASSERT_TRUE(o.ok());
    f(*o);
    auto updated = fake.Update(r, "ml", *o);
    ASSERT_TRUE(updated.ok());
    (*o)["metadata"]["resourceVersion"] = (*updated)["metadata"]["resourceVersion"];
    ASSERT_TRUE(fake.UpdateStatus(r, "ml", *o).ok());
  };
  auto drained_after = [&](size_t n) {
    EXPECT_TRUE(Eventually([&] { return controller.queue().Len() >= n; })) << logs.str();
    return Drain(controller.queue());
  };

  change(kube::resources::kJobs, "quiet", [](Json& j) { j["status"]["ready"] = 1; });
  change(kube::resources::kJobs, "quiet", [](Json& j) {
    j["status"]["conditions"] = {{{"type", "SuccessCriteriaMet"}, {"status", "True"}}};
  });
  change(kube::resources::kJobs, "loud", [](Json& j) { j["status"]["succeeded"] = 1; });
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/loud"});

  change(kube::resources::kPods, "quiet", [](Json& p) {
    p["status"]["conditions"] = {{{"type", "Initialized"}, {"status", "True"}}};
  });
  change(kube::resources::kPods, "quiet", [](Json& p) { p["status"]["podIP"] = "10.0.0.7"; });
  change(kube::resources::kPods, "loud", [](Json& p) { p["status"]["phase"] = "Running"; });
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/loud"});

  // What Decide reads does queue, and deletes always do.
  change(kube::resources::kPods, "quiet", [](Json& p) { p["spec"]["nodeName"] = "gpu-1"; });
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/quiet"});
  ASSERT_TRUE(fake.Delete(kube::resources::kJobs, "ml", "quiet").ok());
  EXPECT_EQ(drained_after(1), std::vector<std::string>{"ml/quiet"});
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

// A restart lists every resource at once; each page's response is held
// whole while it is parsed, so the operator asks for kListPageSize objects a
// page, not the API server's 500.
TEST(ControllerTest, InformersListInPagesOfKListPageSize) {
  kube::FakeClient fake;
  const int nodes = static_cast<int>(kListPageSize) * 2 + 1;
  for (int i = 0; i < nodes; ++i) {
    ASSERT_TRUE(
        fake.Create(kube::resources::kNodes, "", GpuNode("gpu-" + std::to_string(i), "580.159.04"))
            .ok());
  }
  fake.ClearActions();
  std::ostringstream logs;
  Controller controller(fake, ControllerOptions{}, nullptr, Logger(&logs, true, LogLevel::kInfo));
  controller.StartInformers();
  ASSERT_TRUE(Eventually([&] { return fake.WatchCalls() > 0; }));
  ASSERT_TRUE(Eventually([&] {
    int node_lists = 0;
    for (const auto& a : fake.Actions()) node_lists += a.verb == "list" && a.resource == "nodes";
    return node_lists == 3;  // 100 + 100 + 1
  })) << logs.str();
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
