// Reconciler on the in-memory FakeClient with hand-filled stores: one status
// write per pass and none when unchanged; AlreadyExists from a stale cache
// writes no status and emits no Events; a missing object forgets metrics;
// gate runs are counted once, and not again by a restarted operator.
#include "operator/controller/reconciler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "api/meta.h"
#include "api/time.h"
#include "core/seal_report.h"
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
  kube::Store kcs, jobs, pods, pvcs, gated;
  NodeIndex nodes;
  RecordingSink sink;
  OperatorMetrics metrics;
  std::ostringstream logs;
  Time clock = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  std::unique_ptr<Reconciler> r;

  Fixture() {
    r = NewReconciler(&metrics);
    auto created = fake.Create(resources::KernelCaches(), "ml", Kc());
    EXPECT_TRUE(created.ok());
    kcs.Upsert(*created);
    nodes.Upsert(*fake.Create(kube::resources::kNodes, "", Node()));
  }
  // A Reconciler on the stores and the fixture's clock (another one: an
  // operator restarted).
  std::unique_ptr<Reconciler> NewReconciler(OperatorMetrics* m) {
    Caches c{{&kcs}, &nodes, {&jobs}, {&pods}, {&pvcs}, {&gated}};
    return std::make_unique<Reconciler>(fake, c, Settings{}, &sink, m,
                                        Logger(&logs, true, LogLevel::kDebug),
                                        [this] { return clock; });
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

TEST(ReconcilerTest, StatusPutOffWhileUrgentKeysWaitIsWrittenOnceByTheNextPass) {
  Fixture f;
  bool urgent_waiting = true;
  f.r->DeferStatusWhile([&] { return urgent_waiting; });
  ReconcileResult r1 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r1.status.ok()) << r1.status << f.logs.str();
  EXPECT_TRUE(r1.status_deferred);
  EXPECT_EQ(f.StatusPatches(), 0);
  EXPECT_EQ(f.fake.List(kube::resources::kJobs, "ml", {})->items.size(), 1u);
  auto kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  EXPECT_FALSE(kc->contains("status") && (*kc)["status"].contains("fingerprints"));
  const std::vector<std::string> events = f.sink.reasons;  // told at once: the Job exists
  EXPECT_NE(std::find(events.begin(), events.end(), "Normal/WarmupStarted"), events.end());

  // The next pass (urgent keys still waiting) reads the owed status as
  // written: it repeats no Event and creates nothing, and, writing no Job,
  // writes the status.
  f.Sync();
  f.fake.ClearActions();
  ReconcileResult r2 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r2.status.ok()) << r2.status << f.logs.str();
  EXPECT_FALSE(r2.status_deferred);
  EXPECT_FALSE(r2.stale_cache);
  EXPECT_EQ(f.StatusPatches(), 1);
  for (const auto& a : f.fake.Actions()) EXPECT_NE(a.verb, "create") << a.resource;
  EXPECT_EQ(f.sink.reasons, events);
  kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  ASSERT_EQ((*kc)["status"]["fingerprints"].size(), 1u);
  EXPECT_EQ((*kc)["status"]["fingerprints"][0]["state"], "Warming");

  // Written: later passes decide from the server's status again.
  urgent_waiting = false;
  f.Sync();
  f.fake.ClearActions();
  ReconcileResult r3 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r3.status.ok()) << r3.status;
  EXPECT_FALSE(r3.status_deferred);
  for (const auto& a : f.fake.Actions()) EXPECT_NE(a.verb, "create") << a.resource;
  EXPECT_EQ(f.sink.reasons, events);
}

TEST(ReconcilerTest, StatusPutOffAtMostTwiceInARow) {
  Fixture f;
  f.r->DeferStatusWhile([] { return true; });
  // A new fingerprint: its Job is created, the status owed.
  ReconcileResult r1 = f.r->Reconcile("ml/llama");
  ASSERT_TRUE(r1.status.ok()) << r1.status << f.logs.str();
  EXPECT_TRUE(r1.status_deferred);
  auto listed = f.fake.List(kube::resources::kJobs, "ml", {});
  ASSERT_EQ(listed->items.size(), 1u);
  const std::string job_key = "ml/" + api::MetaString(listed->items[0], "name");
  f.Sync();
  // One pass; the Jobs and status patches it left on the server.
  auto pass = [&f](bool want_deferred) {
    f.fake.ClearActions();
    ReconcileResult r = f.r->Reconcile("ml/llama");
    EXPECT_TRUE(r.status.ok()) << r.status << f.logs.str();
    EXPECT_EQ(r.status_deferred, want_deferred);
    return std::pair{f.fake.List(kube::resources::kJobs, "ml", {})->items.size(),
                     f.StatusPatches()};
  };
  // Its node goes (a revert): the warmup is cancelled, the status owed again.
  ASSERT_TRUE(f.nodes.Remove("gpu-1").has_value());
  EXPECT_EQ(pass(true), std::pair(size_t{0}, 0));
  // It comes back: a Job again, and this time the status is written.
  f.jobs.Remove(job_key);
  f.nodes.Upsert(Node());
  EXPECT_EQ(pass(false), std::pair(size_t{1}, 1));
  auto kc = f.fake.Get(resources::KernelCaches(), "ml", "llama");
  ASSERT_EQ((*kc)["status"]["fingerprints"].size(), 1u);
  EXPECT_EQ((*kc)["status"]["fingerprints"][0]["state"], "Warming");
}

TEST(ReconcilerTest, NoStatusPutOffWithoutAJobWrittenOrWithoutUrgentWork) {
  Fixture f;
  f.r->DeferStatusWhile([] { return false; });
  ReconcileResult r1 = f.r->Reconcile("ml/llama");  // creates the Job: nothing urgent waits
  ASSERT_TRUE(r1.status.ok()) << r1.status;
  EXPECT_FALSE(r1.status_deferred);
  EXPECT_EQ(f.StatusPatches(), 1);
  f.r->DeferStatusWhile([] { return true; });
  f.Sync();
  f.fake.ClearActions();
  ReconcileResult r2 = f.r->Reconcile("ml/llama");  // records the Job's uid, writes no Job
  ASSERT_TRUE(r2.status.ok()) << r2.status;
  EXPECT_FALSE(r2.status_deferred);
  EXPECT_EQ(f.StatusPatches(), 1);
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

// The warmup Job of the one fingerprint completes; its pod's warmup
// container ran 187 s and seal published. Returns the fingerprint id.
std::string WarmUp(Fixture& f) {
  EXPECT_TRUE(f.r->Reconcile("ml/llama").status.ok());
  f.Sync();
  EXPECT_TRUE(f.r->Reconcile("ml/llama").status.ok());
  f.Sync();
  Json job = f.fake.List(kube::resources::kJobs, "ml", {})->items.at(0);
  const std::string name = job["metadata"]["name"];
  std::string fp = job["metadata"]["labels"]["kernelcache.io/fingerprint"];
  const std::string done = api::FormatTime(f.clock + std::chrono::seconds(190));
  job["status"] = {{"succeeded", 1},
                   {"completionTime", done},
                   {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  f.jobs.Upsert(job);
  core::SealReport seal;
  seal.fingerprint = fp;
  seal.outcome = core::SealOutcome::kPublished;
  seal.manifest_digest = std::string(64, 'd');
  seal.bytes = 4096;
  seal.files = 8;
  f.pods.Upsert(
      {{"metadata",
        {{"name", name + "-x"},
         {"namespace", "ml"},
         {"uid", "warmup-pod"},
         {"labels", {{"job-name", name}, {"kernelcache.io/name", "llama"}}},
         {"ownerReferences",
          {{{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"name", name},
            {"uid", job["metadata"]["uid"]},
            {"controller", true}}}}}},
       {"spec", job["spec"]["template"]["spec"]},  // the Job's template, as its controller makes
       {"status",
        {{"phase", "Succeeded"},
         {"initContainerStatuses",
          {{{"name", "warmup"},
            {"state",
             {{"terminated",
               {{"exitCode", 0},
                {"startedAt", api::FormatTime(f.clock)},
                {"finishedAt", api::FormatTime(f.clock + std::chrono::seconds(187))}}}}}}}},
         {"containerStatuses",
          {{{"name", "seal"},
            {"state",
             {{"terminated", {{"exitCode", 0}, {"message", core::SealReportToJson(seal)}}}}}}}}}}});
  f.clock += std::chrono::seconds(200);
  EXPECT_TRUE(f.r->Reconcile("ml/llama").status.ok()) << f.logs.str();
  f.kcs.Upsert(*f.fake.Get(resources::KernelCaches(), "ml", "llama"));
  return fp;
}

// A gated pod of llama whose gate run `container` ended `finished` with `outcome`.
Json GatedPod(const std::string& uid, const std::string& container, core::GateOutcome outcome,
              const std::string& fp, Time finished) {
  core::GateReport report;
  report.outcome = outcome;
  report.reason = outcome == core::GateOutcome::kWarm ? "Validated" : "Timeout";
  report.fingerprint = fp;
  report.waited_ms = 1500;
  return {{"metadata",
           {{"name", "llama-" + uid},
            {"namespace", "ml"},
            {"uid", uid},
            {"labels", {{"kernelcache.io/consumer", "llama"}}}}},
          {"status",
           {{"initContainerStatuses",
             {{{"name", "kernelcache-wait"},
               {"state",
                {{"terminated",
                  {{"exitCode", outcome == core::GateOutcome::kFailed ? 3 : 0},
                   {"message", core::GateReportToJson(report)},
                   {"containerID", container},
                   {"finishedAt", api::FormatTime(finished)}}}}}}}}}}};
}

TEST(ReconcilerTest, GateRunsAreCountedOnce) {
  Fixture f;
  const Time first_pass = f.clock;
  const std::string fp = WarmUp(f);
  ASSERT_EQ(
      (*f.fake.Get(resources::KernelCaches(), "ml", "llama"))["status"]["fingerprints"][0].value(
          "state", ""),
      "Ready");
  const MetricLabels id = {{"namespace", "ml"}, {"kernelcache", "llama"}};
  auto outcome = [&](OperatorMetrics& m, const char* o) {
    MetricLabels l = id;
    l.emplace_back("outcome", o);
    return m.registry().Value("kernelcache_gate_outcomes_total", l);
  };
  auto saved = [&](OperatorMetrics& m) {
    MetricLabels l = id;
    l.emplace_back("fingerprint", fp);
    return m.registry().Value("kernelcache_compile_seconds_saved_total", l);
  };
  f.gated.Upsert(GatedPod("p1", "containerd://1", core::GateOutcome::kWarm, fp, f.clock));
  f.gated.Upsert(GatedPod("p2", "containerd://2", core::GateOutcome::kCold, fp, f.clock));
  // Finished before this process's first pass: not counted.
  f.gated.Upsert(GatedPod("p0", "containerd://0", core::GateOutcome::kFailed, fp,
                          first_pass - std::chrono::hours(1)));
  for (int pass = 0; pass < 3; ++pass) {  // a resync or another event: the same pods again
    ASSERT_TRUE(f.r->Reconcile("ml/llama").status.ok()) << f.logs.str();
    EXPECT_EQ(outcome(f.metrics, "Warm"), 1) << pass;
    EXPECT_EQ(outcome(f.metrics, "Cold"), 1) << pass;
    EXPECT_EQ(outcome(f.metrics, "Failed"), 0) << pass;
    EXPECT_EQ(f.metrics.registry().Count("kernelcache_gate_wait_seconds", id), 2u) << pass;
    EXPECT_EQ(saved(f.metrics), 187) << pass;
  }

  // The operator restarts: what finished before its first pass is not
  // counted again; a gate run after it is.
  OperatorMetrics after_restart;
  f.clock += std::chrono::seconds(60);
  auto restarted = f.NewReconciler(&after_restart);
  ASSERT_TRUE(restarted->Reconcile("ml/llama").status.ok());
  EXPECT_EQ(outcome(after_restart, "Warm"), 0);
  EXPECT_EQ(outcome(after_restart, "Cold"), 0);
  f.gated.Upsert(GatedPod("p3", "containerd://3", core::GateOutcome::kWarm, fp, f.clock));
  ASSERT_TRUE(restarted->Reconcile("ml/llama").status.ok());
  EXPECT_EQ(outcome(after_restart, "Warm"), 1);
  // Its warmup pod is still there: the restarted operator knows the seconds.
  EXPECT_EQ(saved(after_restart), 187);
  EXPECT_NE(after_restart.Render().find(
                "kernelcache_gate_wait_seconds_count{kernelcache=\"llama\",namespace=\"ml\"} 1"),
            std::string::npos)
      << after_restart.Render();
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
