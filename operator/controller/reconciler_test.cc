// Reconciler on the in-memory FakeClient with hand-filled stores: one status
// write per pass and none when unchanged; AlreadyExists from a stale cache
// writes no status and emits no Events; a missing object forgets metrics.
#include "operator/controller/reconciler.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "kube/testing/fake_client.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

using Json = kube::Json;

class RecordingSink : public EventSink {
 public:
  void Emit(const Json&, const std::string& type, const std::string& reason,
            const std::string&) override {
    reasons.push_back(type + "/" + reason);
  }
  std::vector<std::string> reasons;
};

Json Node() { return fixtures::GpuNodeJson("gpu-1"); }

Json Kc() {
  Json kc = Json::parse(R"({"apiVersion":"kernelcache.io/v1alpha1","kind":"KernelCache",
    "metadata":{"name":"llama","namespace":"ml"},
    "spec":{"podSelector":{"matchLabels":{"app":"llama"}},
            "nodeSelector":{"nvidia.com/gpu.present":"true"},
            "warmup":{"command":["python3","/app/warmup.py"]},
            "storage":{"size":"10Gi"}}})");
  kc["spec"]["image"] = "registry.example/llama@sha256:" + std::string(64, 'a');
  return kc;
}

struct Fixture {
  kube::FakeClient fake;
  kube::Store kcs, jobs, pods, pvcs;
  NodeIndex nodes;
  RecordingSink sink;
  OperatorMetrics metrics;
  std::ostringstream logs;
  std::unique_ptr<Reconciler> r;

  Fixture() {
    Caches c{{&kcs}, &nodes, {&jobs}, {&pods}, {&pvcs}, {}};
    r = std::make_unique<Reconciler>(fake, c, Settings{}, &sink, &metrics,
                                     Logger(&logs, true, LogLevel::kDebug));
    auto created = fake.Create(resources::KernelCaches(), "ml", Kc());
    EXPECT_TRUE(created.ok());
    kcs.Upsert(*created);
    nodes.Upsert(*fake.Create(kube::resources::kNodes, "", Node()));
  }
  // Copies the server's current objects into the stores (an informer catching up).
  void Sync() {
    kcs.Upsert(*fake.Get(resources::KernelCaches(), "ml", "llama"));
    // (Lists kept in locals: a range-for over a temporary's member dangles.)
    auto job_list = fake.List(kube::resources::kJobs, "ml", {});
    for (const Json& j : job_list->items) jobs.Upsert(j);
    auto pvc_list = fake.List(kube::resources::kPersistentVolumeClaims, "ml", {});
    for (const Json& p : pvc_list->items) pvcs.Upsert(p);
  }
  int StatusPatches() {
    int n = 0;
    for (const auto& a : fake.Actions()) n += a.verb == "patch" && a.body.contains("status");
    return n;
  }
};

TEST(ReconcilerTest, OneStatusWritePerPassAndNoneWhenUnchanged) {
  Fixture f;
  ReconcileResult r1 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r1.status.ok()) << r1.status << f.logs.str();
  EXPECT_FALSE(r1.stale_cache);
  EXPECT_EQ(f.StatusPatches(), 1);
  EXPECT_EQ(f.fake.List(kube::resources::kJobs, "ml", {})->items.size(), 1u);
  EXPECT_FALSE(f.sink.reasons.empty());
  auto kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  EXPECT_EQ((*kc)["metadata"]["finalizers"][0], "kernelcache.io/cleanup");
  EXPECT_EQ((*kc)["status"]["fingerprints"].size(), 1u);

  // Caches caught up: the pass records what it now sees (the Job's uid)...
  f.Sync();
  f.fake.ClearActions();
  ReconcileResult r2 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r2.status.ok()) << r2.status;
  EXPECT_EQ(f.StatusPatches(), 1);
  for (const auto& a : f.fake.Actions()) EXPECT_NE(a.verb, "create") << a.resource;
  // ...and once nothing changed, a pass writes nothing, creates nothing,
  // emits nothing.
  f.Sync();
  const size_t events = f.sink.reasons.size();
  f.fake.ClearActions();
  ReconcileResult r3 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r3.status.ok()) << r3.status;
  EXPECT_EQ(f.StatusPatches(), 0);
  for (const auto& a : f.fake.Actions()) EXPECT_NE(a.verb, "create") << a.resource;
  EXPECT_EQ(f.sink.reasons.size(), events);
}

TEST(ReconcilerTest, StaleCacheWritesNoStatusAndNoEvents) {
  Fixture f;
  ASSERT_TRUE(f.r->Reconcile("ml/llama").status.ok());
  // The KernelCache cache caught up, the Job and PVC caches did not: the
  // plan creates them again and meets AlreadyExists.
  f.kcs.Upsert(*f.fake.Get(resources::KernelCaches(), "ml", "llama"));
  const size_t events = f.sink.reasons.size();
  f.fake.ClearActions();
  ReconcileResult r = f.r->Reconcile("ml/llama");
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.stale_cache);
  EXPECT_EQ(f.StatusPatches(), 0);
  EXPECT_EQ(f.sink.reasons.size(), events) << "no duplicate Events";
  EXPECT_EQ(f.fake.List(kube::resources::kJobs, "ml", {})->items.size(), 1u);
}

TEST(ReconcilerTest, StatusConflictIsAnError) {
  Fixture f;
  // Someone else wrote the object after our cache read it.
  auto kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  (*kc)["metadata"]["labels"] = {{"touched", "yes"}};
  ASSERT_TRUE(f.fake.Update(resources::KernelCaches(), "ml", *kc).ok());
  ReconcileResult r = f.r->Reconcile("ml/llama");
  EXPECT_FALSE(r.status.ok());
  EXPECT_TRUE(IsConflict(r.status)) << r.status;
}

TEST(ReconcilerTest, DeletedKernelCacheForgetsMetrics) {
  Fixture f;
  ASSERT_TRUE(f.r->Reconcile("ml/llama").status.ok());
  EXPECT_NE(f.metrics.Render().find("kernelcache=\"llama\""), std::string::npos);
  f.kcs.Remove("ml/llama");
  ASSERT_TRUE(f.r->Reconcile("ml/llama").status.ok());
  EXPECT_EQ(f.metrics.Render().find("kernelcache=\"llama\""), std::string::npos);
}

// An exception escaping one pass (here thrown by the client while the pass
// creates the warmup Job; any bug or unforeseen input would do the same)
// does not leave Reconcile: the pass returns an Internal error (the worker
// retries it with backoff), the object's status says Degraded/ReconcileError
// with the message, and a Warning Event ReconcileError is emitted.
TEST(ReconcilerTest, AnExceptionBecomesAnErrorOnThatObject) {
  Fixture f;
  f.fake.SetReactor([](const kube::FakeAction& a) -> Status {
    if (a.verb == "create" && a.resource == "jobs.batch") {
      throw std::runtime_error("boom: injected by the test");
    }
    return OkStatus();
  });
  ReconcileResult r;
  ASSERT_NO_THROW(r = f.r->Reconcile("ml/llama"));
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), StatusCode::kInternal);
  EXPECT_NE(r.status.message().find("reconcile of ml/llama failed unexpectedly: boom"),
            std::string::npos)
      << r.status;
  auto kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  ASSERT_TRUE(kc.ok());
  const Json& st = (*kc)["status"];
  EXPECT_EQ(st.value("phase", ""), "Degraded") << st.dump();
  bool found = false;
  for (const Json& c : st.value("conditions", Json::array())) {
    if (c["type"] == "Degraded") {
      found = true;
      EXPECT_EQ(c["status"], "True");
      EXPECT_EQ(c["reason"], "ReconcileError");
      EXPECT_NE(c["message"].get<std::string>().find("boom: injected by the test"),
                std::string::npos);
    }
  }
  EXPECT_TRUE(found) << st.dump();
  EXPECT_NE(std::find(f.sink.reasons.begin(), f.sink.reasons.end(), "Warning/ReconcileError"),
            f.sink.reasons.end());
  EXPECT_NE(f.logs.str().find("failed unexpectedly"), std::string::npos);

  // Once the cause is gone, the next pass succeeds and clears Degraded.
  f.fake.SetReactor(nullptr);
  f.Sync();
  ReconcileResult again = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(again.status.ok()) << again.status;
  kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  for (const Json& c : (*kc)["status"]["conditions"]) {
    if (c["type"] == "Degraded") {
      EXPECT_EQ(c["status"], "False") << c.dump();
    }
  }
}

}  // namespace
}  // namespace kc::op
