// Table-driven and scenario tests of Decide. A World holds an Observed and
// applies each Plan the way the reconciler would (creates appear in the
// "informer", deletes disappear, status is written back), so multi-pass
// scenarios run without a cluster.
#include "operator/decide/decide.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/fingerprint.h"
#include "operator/decide/decide_fingerprint.h"
#include "operator/decide/decide_nodes.h"
#include "operator/decide/names.h"
#include "operator/testing/objects.h"
#include "testing/objects.h"

namespace kc::op {
namespace {

using core::FingerprintStatus;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using Labels = std::map<std::string, std::string>;
using fixtures::GpuLabels;
using fixtures::GpuNodeView;
using Kind = Action::Kind;

const Time kT0 = api::ParseTime("2026-12-02T10:00:00Z").value();
const std::string kDigest(64, 'b');
const std::string kPinned = "registry.example/llama@sha256:" + std::string(64, 'a');

core::KernelCache Kc() {
  core::KernelCache kc = testutil::KernelCacheNamed();
  kc.metadata.generation = 1;
  kc.metadata.finalizers = {std::string(core::kFinalizer)};
  kc.spec.pod_selector.match_labels = {{"app", "llama"}};
  kc.spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  kc.spec.image = kPinned;
  kc.spec.runtime = {{"pytorch", "2.11.0"}};
  kc.spec.warmup.command = {"python3", "/app/warmup.py"};
  return kc;
}

std::string SealMsg(const std::string& fp, int64_t bytes = 1 << 20) {
  return nlohmann::json{
      {"fingerprint", fp}, {"manifestDigest", kDigest}, {"bytes", bytes}, {"files", 10}}
      .dump();
}

size_t CountKind(const Plan& p, Kind k) {
  return std::count_if(p.actions.begin(), p.actions.end(),
                       [&](const Action& a) { return a.kind == k; });
}

std::vector<std::string> Names(const Plan& p, Kind k) {
  std::vector<std::string> out;
  for (const auto& a : p.actions) {
    if (a.kind == k) out.push_back(a.name);
  }
  return out;
}

const Action* FindEvent(const Plan& p, const std::string& reason) {
  for (const auto& a : p.actions) {
    if (a.kind == Kind::kEmitEvent && a.event_reason == reason) return &a;
  }
  return nullptr;
}

size_t Mutations(const Plan& p) { return p.actions.size() - CountKind(p, Kind::kEmitEvent); }

const api::Condition& Cond(const core::KernelCacheStatus& s, std::string_view type) {
  static const api::Condition kNone;
  const api::Condition* c = api::FindCondition(s.conditions, type);
  return c != nullptr ? *c : kNone;
}

struct World {
  Observed obs;
  int next_uid = 0;

  World() {
    obs.kc = Kc();
    obs.settings.initwarm_image = "ghcr.io/kc/initwarm:test";
  }

  std::string Fp(const Labels& labels) const {
    return core::ComputeFingerprint(core::NodeFactsFromLabels(labels).value(),
                                    core::RuntimeFactsFor(obs.kc.spec))
        .id;
  }

  Plan Decide(Time now) const { return op::Decide(obs, now); }

  // Decide, then carry the plan out as the reconciler would.
  Plan Step(Time now) {
    Plan p = Decide(now);
    Apply(p, now);
    return p;
  }

  void Apply(const Plan& p, Time now) {
    for (const auto& a : p.actions) {
      switch (a.kind) {
        case Kind::kAddFinalizer:
          obs.kc.metadata.finalizers.push_back(a.name);
          break;
        case Kind::kRemoveFinalizer:
          std::erase(obs.kc.metadata.finalizers, a.name);
          break;
        case Kind::kCreatePvc: {
          PvcView v;
          v.name = a.name;
          v.uid = "pvc-uid";
          v.phase = "Bound";
          v.access_modes = {"ReadWriteMany"};
          v.owned_by_us = true;
          v.created = now;
          obs.pvc = v;
          break;
        }
        case Kind::kCreateJob: {
          if (FindJob(a.name) != nullptr) break;  // AlreadyExists
          JobView j;
          j.name = a.name;
          j.uid = a.name + "-uid-" + std::to_string(next_uid++);
          for (const auto& [k, v] : a.object["metadata"]["labels"].items()) j.labels[k] = v;
          for (const auto& [k, v] : a.object["metadata"]["annotations"].items()) {
            j.annotations[k] = v;
          }
          j.created = now;
          obs.jobs.push_back(j);
          break;
        }
        case Kind::kDeleteJob:
          std::erase_if(obs.jobs, [&](const JobView& j) { return j.name == a.name; });
          std::erase_if(obs.pods, [&](const PodView& pd) { return pd.job_name == a.name; });
          break;
        case Kind::kCancelJob:  // foreground: the Job stays until its pods are gone
          if (JobView* j = FindJob(a.name); j != nullptr) {
            j->deleting = true;
            j->foreground_deletion = true;
          }
          break;
        case Kind::kDeletePvc:
          obs.pvc.reset();
          break;
        case Kind::kEmitEvent:
          break;
      }
    }
    obs.kc.status = p.status;
  }

  // The garbage collector finished the foreground deletes: the pods of the
  // cancelled Jobs are gone, then the Jobs.
  void ForegroundDeletesDone() {
    for (const auto& j : obs.jobs) {
      if (j.deleting)
        std::erase_if(obs.pods, [&](const PodView& pd) { return pd.job_name == j.name; });
    }
    std::erase_if(obs.jobs, [](const JobView& j) { return j.deleting; });
  }

  JobView* FindJob(const std::string& name) {
    for (auto& j : obs.jobs) {
      if (j.name == name) return &j;
    }
    return nullptr;
  }

  void Succeed(const std::string& job, const std::string& message, Time t,
               const std::string& node = "gpu-1") {
    JobView* j = FindJob(job);
    ASSERT_NE(j, nullptr) << job;
    j->complete = true;
    j->succeeded = 1;
    j->active = 0;
    j->finished = t;
    PodView pod;
    pod.name = job + "-pod";
    pod.job_name = job;
    pod.job_uid = j->uid;
    pod.node_name = node;
    pod.phase = "Succeeded";
    pod.seal_message = message;
    pod.seal_exit_code = 0;
    pod.created = t;
    obs.pods.push_back(pod);
  }

  void Fail(const std::string& job, Time t, const std::string& why = "CUDA error: out of memory") {
    JobView* j = FindJob(job);
    ASSERT_NE(j, nullptr) << job;
    j->failed_condition = true;
    j->failure_reason = "BackoffLimitExceeded";
    j->failure_message = "Job has reached the specified backoff limit";
    j->failed = 3;
    j->finished = t;
    PodView pod;
    pod.name = job + "-pod-" + std::to_string(next_uid++);
    pod.job_name = job;
    pod.job_uid = j->uid;
    pod.node_name = "gpu-1";
    pod.phase = "Failed";
    pod.failure_summary = "warmup: Error (exit 1): " + why;
    pod.created = t;
    obs.pods.push_back(pod);
  }

  const FingerprintStatus* Status(const std::string& id) const {
    for (const auto& f : obs.kc.status.fingerprints) {
      if (f.id == id) return &f;
    }
    return nullptr;
  }

  // Warm every fingerprint to Ready.
  void WarmAll(Time now) {
    Step(now);
    for (const auto& j : std::vector<JobView>(obs.jobs)) {
      if (j.complete || j.failed_condition) continue;
      Succeed(j.name, SealMsg(j.labels.at(kLabelFingerprint)), now);
    }
    Step(now);
  }
};

// ---- first sight, basic warming -------------------------------------------

TEST(Decide, FirstSightAddsFinalizerAndCreatesClaim) {
  World w;
  w.obs.kc.metadata.finalizers.clear();
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  Plan p = w.Decide(kT0);
  ASSERT_FALSE(p.actions.empty());
  EXPECT_EQ(p.actions[0].kind, Kind::kAddFinalizer);
  EXPECT_EQ(p.actions[0].name, core::kFinalizer);
  EXPECT_EQ(Names(p, Kind::kCreatePvc), std::vector<std::string>{"llama-cache"});
  const Action& pvc = *std::find_if(p.actions.begin(), p.actions.end(),
                                    [](const Action& a) { return a.kind == Kind::kCreatePvc; });
  EXPECT_EQ(pvc.object["spec"]["accessModes"][0], "ReadWriteMany");
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);  // the claim is created first in the plan
  EXPECT_EQ(p.status.claim_name, "llama-cache");
  EXPECT_EQ(p.status.observed_generation, 1);
}

TEST(Decide, TwoFingerprintsTwoJobs) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()), GpuNodeView("gpu-2", GpuLabels()),
                 GpuNodeView("a100-1", GpuLabels("NVIDIA-A100-SXM4-40GB", "550.54.15", "8"))};
  Plan p = w.Step(kT0);
  const std::string h200 = w.Fp(GpuLabels());
  const std::string a100 = w.Fp(GpuLabels("NVIDIA-A100-SXM4-40GB", "550.54.15", "8"));
  auto jobs = Names(p, Kind::kCreateJob);
  std::sort(jobs.begin(), jobs.end());
  std::vector<std::string> want = {WarmupJobName("llama", h200), WarmupJobName("llama", a100)};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(jobs, want);
  ASSERT_NE(w.Status(h200), nullptr);
  EXPECT_EQ(w.Status(h200)->state, "Warming");
  EXPECT_EQ(w.Status(h200)->nodes, 2);
  EXPECT_EQ(w.Status(h200)->gpu_product, "NVIDIA-H200");
  EXPECT_EQ(w.Status(h200)->driver, "580.159.04");
  EXPECT_EQ(w.Status(a100)->compute_capability, "8.0");
  EXPECT_EQ(p.status.ready, "0/2");
  EXPECT_EQ(p.status.phase, "Warming");
  EXPECT_EQ(Cond(p.status, "Warming").status, "True");
  // A new fingerprint whose warmup starts at once: one Event that says both.
  ASSERT_NE(FindEvent(p, "WarmupStarted"), nullptr);
  EXPECT_EQ(FindEvent(p, "WarmupStarted")->event_message.rfind("new fingerprint on ", 0), 0u);
  EXPECT_EQ(FindEvent(p, "NewFingerprint"), nullptr);

  // Both seal; both Ready.
  w.Succeed(WarmupJobName("llama", h200), SealMsg(h200, 1 << 30), kT0 + minutes(5));
  w.Succeed(WarmupJobName("llama", a100), SealMsg(a100, 1 << 29), kT0 + minutes(6));
  p = w.Step(kT0 + minutes(7));
  EXPECT_EQ(w.Status(h200)->state, "Ready");
  EXPECT_EQ(w.Status(h200)->bytes, 1 << 30);
  EXPECT_EQ(w.Status(h200)->files, 10);
  EXPECT_EQ(w.Status(h200)->manifest_digest, kDigest);
  EXPECT_EQ(api::FormatTime(*w.Status(h200)->ready_at), "2026-12-02T10:05:00Z");
  EXPECT_EQ(p.status.ready, "2/2");
  EXPECT_EQ(p.status.ready_fingerprints, 2);
  EXPECT_EQ(p.status.total_fingerprints, 2);
  EXPECT_EQ(p.status.phase, "Ready");
  EXPECT_EQ(p.status.size, "1.5Gi");
  EXPECT_EQ(Cond(p.status, "Ready").status, "True");
  EXPECT_EQ(Cond(p.status, "Warming").status, "False");
  EXPECT_NE(FindEvent(p, "CacheReady"), nullptr);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
}

TEST(Decide, NothingToDoWhenReady) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  ASSERT_EQ(w.obs.kc.status.phase, "Ready");
  Plan p = w.Decide(kT0 + hours(1));
  EXPECT_TRUE(p.actions.empty()) << ActionKindName(p.actions[0].kind) << " " << p.actions[0].name
                                 << " " << p.actions[0].event_reason;
  EXPECT_EQ(p.status, w.obs.kc.status);  // no status write needed
  EXPECT_FALSE(p.requeue_after.has_value());
}

// ---- eligibility ------------------------------------------------------------

TEST(Decide, NodeEligibility) {
  struct Case {
    const char* name;
    std::function<void(NodeView&)> edit;
    bool want_job;
    const char* why;  // in the Ready condition when no Job
  } cases[] = {
      {"schedulable ready", [](NodeView&) {}, true, ""},
      {"cordoned", [](NodeView& n) { n.unschedulable = true; }, false, "cordoned"},
      {"NotReady", [](NodeView& n) { n.ready = false; }, false, "NotReady"},
      {"upgrade in progress",
       [](NodeView& n) {
         n.labels = n.labels.With("nvidia.com/gpu-driver-upgrade-state", "upgrade-required");
       },
       false, "GPU driver upgrade: upgrade-required"},
      {"drain in progress",
       [](NodeView& n) {
         n.labels = n.labels.With("nvidia.com/gpu-driver-upgrade-state", "drain-required");
       },
       false, "GPU driver upgrade"},
      {"upgrade done",
       [](NodeView& n) {
         n.labels = n.labels.With("nvidia.com/gpu-driver-upgrade-state", "upgrade-done");
       },
       true, ""},
      {"upgrade state empty",
       [](NodeView& n) { n.labels = n.labels.With("nvidia.com/gpu-driver-upgrade-state", ""); },
       true, ""},
      {"no allocatable GPU", [](NodeView& n) { n.gpu_allocatable = 0; }, false,
       "no allocatable nvidia.com/gpu"},
  };
  for (const auto& c : cases) {
    World w;
    NodeView n = GpuNodeView("gpu-1", GpuLabels());
    c.edit(n);
    w.obs.nodes = {n};
    Plan p = w.Step(kT0);
    EXPECT_EQ(CountKind(p, Kind::kCreateJob), c.want_job ? 1u : 0u) << c.name;
    const std::string fp = w.Fp(GpuLabels());
    ASSERT_NE(w.Status(fp), nullptr) << c.name;
    EXPECT_EQ(w.Status(fp)->nodes, 1) << c.name;  // in use even when not eligible
    if (!c.want_job) {
      EXPECT_EQ(w.Status(fp)->state, "Pending") << c.name;
      EXPECT_NE(Cond(p.status, "Ready").message.find(c.why), std::string::npos)
          << c.name << ": " << Cond(p.status, "Ready").message;
    }
  }
}

TEST(Decide, JobPlacedOnEligibleNodesLabelsOnly) {
  World w;
  NodeView cordoned = GpuNodeView("gpu-1", GpuLabels("NVIDIA-H200-SHARED"));
  cordoned.unschedulable = true;
  w.obs.nodes = {cordoned, GpuNodeView("gpu-2", GpuLabels())};
  Plan p = w.Decide(kT0);
  ASSERT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  const Action& a = *std::find_if(p.actions.begin(), p.actions.end(),
                                  [](const Action& x) { return x.kind == Kind::kCreateJob; });
  const auto& terms =
      a.object["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
              ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);  // one label set (gpu-2's), two upgrade-state terms
  bool has_product = false;
  for (const auto& e : terms[0]["matchExpressions"]) {
    if (e["key"] == "nvidia.com/gpu.product") {
      has_product = true;
      EXPECT_EQ(e["values"][0], "NVIDIA-H200");
    }
  }
  EXPECT_TRUE(has_product);
  EXPECT_EQ(a.object["spec"]["template"]["spec"]["initContainers"][0]["image"],
            "ghcr.io/kc/initwarm:test");
}

TEST(Decide, NodesOutsideNodeSelectorAreIgnored) {
  World w;
  Labels l = GpuLabels();
  l.erase("nvidia.com/gpu.present");
  w.obs.nodes = {GpuNodeView("cpu-1", l)};
  Plan p = w.Step(kT0);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_TRUE(p.status.fingerprints.empty());
  EXPECT_EQ(Cond(p.status, "Ready").reason, "NoNodes");
  EXPECT_EQ(p.status.phase, "Pending");
}

// ---- missing labels -----------------------------------------------------------

TEST(Decide, MissingLabelsGiveConditionAndEventNeverAGuess) {
  World w;
  Labels l = GpuLabels();
  l.erase("nvidia.com/gpu.compute.major");
  w.obs.nodes = {GpuNodeView("gpu-7", l), GpuNodeView("gpu-1", GpuLabels())};
  Plan p = w.Step(kT0);
  const auto& c = Cond(p.status, "NodesMissingLabels");
  EXPECT_EQ(c.status, "True");
  EXPECT_NE(c.message.find("gpu-7"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("nvidia.com/gpu.compute.major"), std::string::npos) << c.message;
  const Action* e = FindEvent(p, "NodeMissingLabels");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->event_type, "Warning");
  EXPECT_NE(e->event_message.find("gpu-7"), std::string::npos);
  EXPECT_NE(e->event_message.find("nvidia.com/gpu.compute.major"), std::string::npos);
  EXPECT_EQ(p.status.fingerprints.size(), 1u);  // only gpu-1's
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  // Second pass: no repeated event.
  p = w.Step(kT0 + seconds(10));
  EXPECT_EQ(FindEvent(p, "NodeMissingLabels"), nullptr);
  // Labels fixed: the condition clears.
  w.obs.nodes[0].labels = GpuLabels();
  p = w.Step(kT0 + seconds(20));
  EXPECT_EQ(Cond(p.status, "NodesMissingLabels").status, "False");
}

TEST(Decide, ManyNodesMissingLabelsDoNotFloodEvents) {
  World w;
  Labels l = GpuLabels();
  l.erase("kubernetes.io/arch");
  for (int i = 0; i < 7; ++i) w.obs.nodes.push_back(GpuNodeView("gpu-" + std::to_string(i), l));
  Plan p = w.Step(kT0);
  size_t events = 0;
  for (const auto& a : p.actions) events += a.event_reason == "NodeMissingLabels";
  EXPECT_EQ(events, 5u);
  EXPECT_NE(Cond(p.status, "NodesMissingLabels").message.find("7 node(s)"), std::string::npos);
  EXPECT_NE(Cond(p.status, "NodesMissingLabels").message.find("and 2 more"), std::string::npos);
  p = w.Step(kT0 + seconds(5));
  EXPECT_EQ(FindEvent(p, "NodeMissingLabels"), nullptr);
}

// ---- seal result ------------------------------------------------------------------

TEST(Decide, SealResultOutcomes) {
  struct Case {
    const char* name;
    std::function<std::string(const std::string& fp)> message;
    std::string want_state;
    std::string want_failure_prefix;
    std::string want_event;
  } cases[] = {
      {"good", [](const std::string& fp) { return SealMsg(fp); }, "Ready", "", "CacheReady"},
      {"mismatch", [](const std::string&) { return SealMsg("00000000deadbeef"); }, "Failed",
       "FingerprintMismatch: sealed 00000000deadbeef, expected ", "FingerprintMismatch"},
      {"garbage", [](const std::string&) { return std::string("Error: disk full"); }, "Failed",
       "BadTerminationMessage", "BadTerminationMessage"},
      {"digest missing",
       [](const std::string& fp) {
         return nlohmann::json{{"fingerprint", fp}}.dump();
       },
       "Failed", "BadTerminationMessage", "BadTerminationMessage"},
  };
  for (const auto& c : cases) {
    World w;
    w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
    w.Step(kT0);
    const std::string fp = w.Fp(GpuLabels());
    const std::string job = WarmupJobName("llama", fp);
    w.Succeed(job, c.message(fp), kT0 + minutes(3));
    Plan p = w.Step(kT0 + minutes(4));
    const FingerprintStatus* f = w.Status(fp);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->state, c.want_state) << c.name;
    EXPECT_EQ(f->last_failure.rfind(c.want_failure_prefix, 0), 0u)
        << c.name << ": " << f->last_failure;
    EXPECT_NE(FindEvent(p, c.want_event), nullptr) << c.name;
    if (c.want_state != "Ready") {
      EXPECT_TRUE(f->manifest_digest.empty()) << c.name;  // never recorded as a cache
      EXPECT_EQ(f->failures, 1) << c.name;
      EXPECT_EQ(p.status.phase, "Degraded") << c.name;
      EXPECT_EQ(Cond(p.status, "Degraded").reason, "WarmupFailed") << c.name;
      // Counted once: the next pass does not count the same Job again.
      w.Step(kT0 + minutes(4) + seconds(5));
      EXPECT_EQ(w.Status(fp)->failures, 1) << c.name;
    }
  }
}

TEST(Decide, SucceededJobWaitsBrieflyForItsPod) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  JobView* j = w.FindJob(WarmupJobName("llama", fp));
  j->complete = true;
  j->finished = kT0 + minutes(1);
  Plan p = w.Step(kT0 + minutes(1) + seconds(5));
  EXPECT_EQ(w.Status(fp)->state, "Warming");
  EXPECT_EQ(w.Status(fp)->failures, 0);
  ASSERT_TRUE(p.requeue_after.has_value());
  EXPECT_LE(*p.requeue_after, seconds(55));
  // Still no pod after the grace: a failure, not a guess.
  p = w.Step(kT0 + minutes(3));
  EXPECT_EQ(w.Status(fp)->state, "Failed");
  EXPECT_EQ(w.Status(fp)->last_failure.rfind("NoSealResult", 0), 0u);
}

// ---- failure, backoff, retry -------------------------------------------------------

TEST(Decide, FailedJobBacksOffThenRetries) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  const std::string job = WarmupJobName("llama", fp);
  const Time t_fail = kT0 + minutes(2);
  w.Fail(job, t_fail);
  Plan p = w.Step(t_fail + seconds(1));
  const FingerprintStatus* f = w.Status(fp);
  EXPECT_EQ(f->state, "Failed");
  EXPECT_EQ(f->failures, 1);
  EXPECT_EQ(
      f->last_failure,
      "BackoffLimitExceeded: warmup: Error (exit 1): CUDA error: out of memory on node gpu-1");
  const Action* e = FindEvent(p, "WarmupFailed");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->event_type, "Warning");
  EXPECT_NE(e->event_message.find("retry in 30s"), std::string::npos) << e->event_message;
  EXPECT_EQ(CountKind(p, Kind::kDeleteJob), 0u);  // kept for `kubectl logs` during backoff
  ASSERT_TRUE(p.requeue_after.has_value());
  EXPECT_EQ(*p.requeue_after, seconds(29));

  // Inside the backoff: nothing.
  p = w.Step(t_fail + seconds(20));
  EXPECT_EQ(Mutations(p), 0u);
  // Backoff over: the failed Job is deleted...
  p = w.Step(t_fail + seconds(30));
  EXPECT_EQ(Names(p, Kind::kDeleteJob), std::vector<std::string>{job});
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  // ...and created again under the same name on the next pass.
  p = w.Step(t_fail + seconds(31));
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{job});
  EXPECT_EQ(w.Status(fp)->state, "Warming");
  EXPECT_EQ(w.Status(fp)->failures, 1);

  // A second failure doubles the backoff.
  const Time t_fail2 = t_fail + minutes(5);
  w.Fail(job, t_fail2);
  p = w.Step(t_fail2 + seconds(1));
  EXPECT_EQ(w.Status(fp)->failures, 2);
  EXPECT_EQ(*p.requeue_after, seconds(59));
  p = w.Step(t_fail2 + seconds(45));
  EXPECT_EQ(CountKind(p, Kind::kDeleteJob), 0u);

  // Then it succeeds: Ready, failures reset.
  w.Step(t_fail2 + seconds(60));
  w.Step(t_fail2 + seconds(61));
  w.Succeed(job, SealMsg(fp), t_fail2 + minutes(3));
  p = w.Step(t_fail2 + minutes(4));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_EQ(w.Status(fp)->failures, 0);
  EXPECT_TRUE(w.Status(fp)->last_failure.empty());
  EXPECT_EQ(p.status.phase, "Ready");
}

// A failed warmup never reaches seal, so its prepare-held lock stays on the
// volume; the next Job's prepare is told the failed Job's uid.
TEST(Decide, RetriedWarmupNamesTheFailedJobAsDeadLockOwner) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  Plan first = w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  const std::string job = WarmupJobName("llama", fp);
  auto prepare_args = [](const Plan& p) {
    for (const auto& a : p.actions) {
      if (a.kind != Kind::kCreateJob) continue;
      return a.object["spec"]["template"]["spec"]["initContainers"][0]["args"];
    }
    return Json();
  };
  auto has_break = [](const Json& args, const std::string& want) {
    for (const auto& a : args) {
      if (a.get<std::string>().rfind("--break-lock-of", 0) == 0) return a == want;
    }
    return want.empty();
  };
  // The first Job has no dead predecessor.
  EXPECT_TRUE(has_break(prepare_args(first), "")) << prepare_args(first);
  const std::string failed_uid = w.FindJob(job)->uid;
  w.Fail(job, kT0 + minutes(2));
  w.Step(kT0 + minutes(2) + seconds(1));
  w.Step(kT0 + minutes(3));  // backoff over: the failed Job is deleted
  ASSERT_EQ(w.FindJob(job), nullptr);
  Plan p = w.Step(kT0 + minutes(3) + seconds(1));
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{job});
  EXPECT_TRUE(has_break(prepare_args(p), "--break-lock-of=" + failed_uid)) << prepare_args(p);
  EXPECT_NE(w.FindJob(job)->uid, failed_uid);
}

// A model pod's gate quarantined the Ready cache (its termination message,
// read from the pod status): the fingerprint turns Degraded, a new warmup
// generation is created, and once it seals, Ready again. Reports about a
// cache the status no longer records change nothing.
TEST(Decide, GateQuarantineMarksDegradedAndRewarms) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  ASSERT_EQ(w.Status(fp)->state, "Ready");
  ASSERT_EQ(w.Status(fp)->manifest_digest, kDigest);

  GateReportView stale_report;
  stale_report.pod = "llama-0";
  stale_report.node = "gpu-1";
  stale_report.report.outcome = core::GateOutcome::kFailed;
  stale_report.report.reason = "Quarantined";
  stale_report.report.quarantined.push_back(
      {fp, std::string(64, 'e'), std::string(64, 'e'), "Checksums", "triton/x", "sha256", ""});
  w.obs.gate_reports = {stale_report};
  Plan p = w.Step(kT0 + minutes(10));
  EXPECT_EQ(Mutations(p), 0u) << "a report about another digest changes nothing";
  EXPECT_EQ(w.Status(fp)->state, "Ready");

  // A report that finished before the cache was sealed is not about it.
  GateReportView early = stale_report;
  early.report.quarantined[0].expected_digest = kDigest;
  early.finished = kT0 - minutes(1);
  w.obs.gate_reports = {early};
  p = w.Step(kT0 + minutes(10));
  EXPECT_EQ(Mutations(p), 0u) << "a report older than the cache changes nothing";

  w.obs.gate_reports = {stale_report};
  GateReportView report = stale_report;
  report.finished = kT0 + minutes(11);
  report.report.quarantined[0] = {fp,
                                  kDigest,
                                  kDigest,
                                  "Checksums",
                                  "triton/H1/k.cubin",
                                  "sha256 mismatch",
                                  "/var/cache/kernelcache/v1/.quarantine/x"};
  w.obs.gate_reports.push_back(report);
  p = w.Step(kT0 + minutes(11));
  const FingerprintStatus* f = w.Status(fp);
  EXPECT_EQ(f->state, "Degraded");
  EXPECT_TRUE(f->manifest_digest.empty());
  EXPECT_EQ(f->warm_generation, 1);
  EXPECT_NE(f->last_failure.find("pod llama-0 on node gpu-1"), std::string::npos)
      << f->last_failure;
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{WarmupJobName("llama", fp, 1)});
  const Action* e = FindEvent(p, "CacheQuarantined");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->event_type, "Warning");
  EXPECT_NE(e->event_message.find("sha256 mismatch"), std::string::npos) << e->event_message;
  EXPECT_EQ(Cond(p.status, "Degraded").status, "True");
  EXPECT_EQ(Cond(p.status, "Degraded").reason, "CacheQuarantined");
  EXPECT_EQ(Cond(p.status, "Ready").status, "False");
  EXPECT_EQ(p.status.phase, "Degraded");

  // The same report again (the pod status keeps it): nothing new.
  p = w.Step(kT0 + minutes(12));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_EQ(w.Status(fp)->state, "Degraded");
  EXPECT_EQ(w.Status(fp)->warm_generation, 1);

  // The re-warm seals a new cache: Ready; the old report stays inert.
  const std::string fresh(64, 'c');
  w.Succeed(
      WarmupJobName("llama", fp, 1),
      nlohmann::json{{"fingerprint", fp}, {"manifestDigest", fresh}, {"bytes", 5}, {"files", 1}}
          .dump(),
      kT0 + minutes(20));
  p = w.Step(kT0 + minutes(21));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_EQ(w.Status(fp)->manifest_digest, fresh);
  EXPECT_EQ(Cond(p.status, "Degraded").status, "False");
  p = w.Step(kT0 + minutes(22));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_EQ(w.Status(fp)->state, "Ready");
}

TEST(Decide, BackoffIsCapped) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  auto& f = w.obs.kc.status.fingerprints[0];
  f.state = "Failed";
  f.failures = 20;
  f.last_failure = "x";
  f.last_failure_time = kT0;
  w.obs.jobs.clear();
  Plan p = w.Decide(kT0 + minutes(59));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_EQ(*p.requeue_after, minutes(1));
  p = w.Decide(kT0 + hours(1));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);
}

// ---- purge re-warm; a Ready cache is never downgraded ---------------------------------

TEST(Decide, PurgeRewarmsAndKeepsServingTheOldCache) {
  World w;
  w.obs.kc.spec.retention.purge_schedule = "168h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  const std::string job0 = WarmupJobName("llama", fp);
  ASSERT_EQ(w.Status(fp)->state, "Ready");
  Plan p = w.Step(kT0 + hours(1));
  ASSERT_TRUE(p.requeue_after.has_value());
  EXPECT_EQ(*p.requeue_after, hours(167));

  const Time due = kT0 + hours(168);
  p = w.Step(due);
  const std::string job1 = WarmupJobName("llama", fp, 1);
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{job1});
  EXPECT_NE(FindEvent(p, "PurgeRewarm"), nullptr);
  EXPECT_EQ(w.Status(fp)->state, "Ready");  // old cache serves meanwhile
  EXPECT_EQ(w.Status(fp)->warm_generation, 1);
  EXPECT_EQ(Cond(p.status, "Warming").status, "True");

  // The re-warm fails: the cache stays Ready.
  w.Fail(job1, due + minutes(5));
  p = w.Step(due + minutes(5) + seconds(1));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_EQ(w.Status(fp)->failures, 1);
  EXPECT_EQ(Cond(p.status, "Ready").status, "True");
  const Action* e = FindEvent(p, "WarmupFailed");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->event_message.find("stays in use"), std::string::npos);
  // Retry after the backoff, then success replaces the cache.
  p = w.Step(due + minutes(6));  // backoff over: deletes job1
  EXPECT_EQ(Names(p, Kind::kDeleteJob), std::vector<std::string>{job1});
  p = w.Step(due + minutes(6) + seconds(1));  // re-warms again
  ASSERT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  const std::string retry_job = Names(p, Kind::kCreateJob)[0];
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  w.Succeed(retry_job, SealMsg(fp, 2 << 20), due + minutes(20));
  p = w.Step(due + minutes(21));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_EQ(w.Status(fp)->bytes, 2 << 20);
  EXPECT_EQ(api::FormatTime(*w.Status(fp)->ready_at), api::FormatTime(due + minutes(20)));
  EXPECT_NE(FindEvent(p, "CacheRewarmed"), nullptr);
  // The first generation's Job is cleaned up once the new cache is recorded.
  w.Step(due + minutes(22));
  EXPECT_EQ(w.FindJob(job0), nullptr);
  EXPECT_NE(w.FindJob(retry_job), nullptr);
}

// ---- invalidation: driver upgrade, spec change, stale, GC ----------------------------

TEST(Decide, DriverUpgradeWarmsNewFingerprintAndCollectsOldAfterGrace) {
  World w;
  w.obs.kc.spec.retention.stale_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()), GpuNodeView("gpu-2", GpuLabels())};
  w.WarmAll(kT0);
  const std::string old_fp = w.Fp(GpuLabels());
  const std::string new_fp = w.Fp(GpuLabels("NVIDIA-H200", "590.10.01"));
  ASSERT_NE(old_fp, new_fp);

  // gpu-1 upgraded: both fingerprints in use, the new one warmed.
  w.obs.nodes[0].labels = GpuLabels("NVIDIA-H200", "590.10.01");
  Plan p = w.Step(kT0 + hours(1));
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{WarmupJobName("llama", new_fp)});
  EXPECT_EQ(w.Status(old_fp)->state, "Ready");
  EXPECT_EQ(w.Status(old_fp)->nodes, 1);
  EXPECT_EQ(p.status.ready, "1/2");
  w.Succeed(WarmupJobName("llama", new_fp), SealMsg(new_fp), kT0 + hours(1) + minutes(5));
  w.Step(kT0 + hours(1) + minutes(6));
  EXPECT_EQ(w.Status(new_fp)->state, "Ready");

  // gpu-2 upgraded too: the old fingerprint is Stale.
  const Time t_stale = kT0 + hours(2);
  w.obs.nodes[1].labels = GpuLabels("NVIDIA-H200", "590.10.01");
  p = w.Step(t_stale);
  EXPECT_EQ(w.Status(old_fp)->state, "Stale");
  EXPECT_EQ(w.Status(old_fp)->nodes, 0);
  EXPECT_EQ(api::FormatTime(*w.Status(old_fp)->stale_since), api::FormatTime(t_stale));
  EXPECT_NE(FindEvent(p, "FingerprintStale"), nullptr);
  EXPECT_EQ(p.status.ready, "1/1");
  EXPECT_EQ(p.status.phase, "Ready");
  EXPECT_EQ(*p.requeue_after, hours(1));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);

  // Inside the grace period: kept.
  p = w.Step(t_stale + minutes(30));
  EXPECT_EQ(Mutations(p), 0u);
  // After it: a GC Job that keeps the new fingerprint only.
  p = w.Step(t_stale + hours(1));
  const std::string gc = GcJobName("llama", {old_fp});
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{gc});
  const Action& a = *std::find_if(p.actions.begin(), p.actions.end(),
                                  [](const Action& x) { return x.kind == Kind::kCreateJob; });
  // Only the stale fingerprint, with the digest recorded for it: never the
  // new one, nor anything else on the claim; the finished warmup of the
  // old one is a dead lock owner.
  const Json& gc_args = a.object["spec"]["template"]["spec"]["containers"][0]["args"];
  ASSERT_EQ(gc_args.size(), 4u) << gc_args;
  EXPECT_EQ(gc_args[2], "--remove=" + old_fp + ":" + kDigest);
  EXPECT_EQ(gc_args[3], "--break-lock-of=" + w.Status(old_fp)->job_uid);
  for (const auto& arg : gc_args) EXPECT_EQ(arg.get<std::string>().find(new_fp), std::string::npos);
  EXPECT_NE(FindEvent(p, "GcStarted"), nullptr);
  // While it runs: nothing new.
  p = w.Step(t_stale + hours(1) + seconds(10));
  EXPECT_EQ(Mutations(p), 0u);
  // GC done: the old fingerprint leaves the status, its Jobs and the GC Job go.
  w.FindJob(gc)->complete = true;
  w.FindJob(gc)->finished = t_stale + hours(1) + minutes(1);
  p = w.Step(t_stale + hours(1) + minutes(2));
  EXPECT_EQ(w.Status(old_fp), nullptr);
  EXPECT_NE(FindEvent(p, "CacheCollected"), nullptr);
  auto deleted = Names(p, Kind::kDeleteJob);
  std::sort(deleted.begin(), deleted.end());
  std::vector<std::string> want = {gc, WarmupJobName("llama", old_fp)};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(deleted, want);
  EXPECT_EQ(p.status.fingerprints.size(), 1u);
  // Converged.
  p = w.Step(t_stale + hours(1) + minutes(3));
  EXPECT_EQ(Mutations(p), 0u);
}

TEST(Decide, AbsentFingerprintComingBackIsReadyAgain) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  auto node = w.obs.nodes;
  w.obs.nodes.clear();
  w.Step(kT0 + hours(1));
  EXPECT_EQ(w.Status(fp)->state, "Absent");
  w.obs.nodes = node;
  Plan p = w.Step(kT0 + hours(2));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_FALSE(w.Status(fp)->stale_since.has_value());
  EXPECT_FALSE(w.Status(fp)->absent_since.has_value());
  EXPECT_NE(FindEvent(p, "FingerprintInUse"), nullptr);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
}

TEST(Decide, StaleFingerprintComingBackIsReadyAgain) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  w.obs.nodes[0].labels = GpuLabels("NVIDIA-H200", "590.10.01");  // upgraded
  w.Step(kT0 + hours(1));
  EXPECT_EQ(w.Status(fp)->state, "Stale");
  w.obs.nodes[0].labels = GpuLabels();  // rolled back
  Plan p = w.Step(kT0 + hours(2));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_FALSE(w.Status(fp)->stale_since.has_value());
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
}

// ---- a full pool: the warmup pod cannot be scheduled ----------------------------------

TEST(Decide, UnschedulableWarmupIsReportedAndClearsWhenItSchedules) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  const std::string job = WarmupJobName("llama", fp);
  ASSERT_NE(w.FindJob(job), nullptr);
  PodView pod;
  pod.name = job + "-abcde";
  pod.job_name = job;
  pod.phase = "Pending";
  pod.created = kT0 + seconds(1);
  pod.unschedulable_since = kT0 + seconds(2);
  pod.unschedulable_message = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.";
  w.obs.pods = {pod};

  // Inside the grace (2m): nothing said yet; woken when it ends.
  Plan p = w.Step(kT0 + minutes(1));
  EXPECT_EQ(api::FindCondition(p.status.conditions, "WarmupUnschedulable"), nullptr);
  EXPECT_EQ(FindEvent(p, "WarmupUnschedulable"), nullptr);
  ASSERT_TRUE(p.requeue_after.has_value());
  EXPECT_EQ(*p.requeue_after, seconds(62));

  // Past it: a condition and a Warning Event naming the fingerprint, its
  // node class and the scheduler's message.
  p = w.Step(kT0 + minutes(3));
  const api::Condition& c = Cond(p.status, "WarmupUnschedulable");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "Unschedulable");
  for (const std::string& want : {fp, std::string("NVIDIA-H200"), std::string("driver 580.159.04"),
                                  pod.name, std::string("Insufficient nvidia.com/gpu")}) {
    EXPECT_NE(c.message.find(want), std::string::npos) << want << " in " << c.message;
  }
  const Action* e = FindEvent(p, "WarmupUnschedulable");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->event_type, "Warning");
  EXPECT_NE(e->event_message.find(fp), std::string::npos) << e->event_message;
  EXPECT_NE(e->event_message.find("PriorityClass"), std::string::npos) << e->event_message;
  EXPECT_EQ(w.Status(fp)->state, "Warming");
  EXPECT_EQ(CountKind(p, Kind::kDeleteJob), 0u) << "the Job is kept: it runs once a GPU is free";

  // Said once: a later pass repeats no Event and writes the same status.
  p = w.Step(kT0 + minutes(4));
  EXPECT_EQ(FindEvent(p, "WarmupUnschedulable"), nullptr);
  EXPECT_EQ(p.status, w.obs.kc.status);

  // The pod schedules (a GPU freed or was preempted): cleared.
  w.obs.pods[0].node_name = "gpu-1";
  w.obs.pods[0].phase = "Running";
  w.obs.pods[0].unschedulable_since.reset();
  p = w.Step(kT0 + minutes(5));
  EXPECT_EQ(Cond(p.status, "WarmupUnschedulable").status, "False");
  EXPECT_EQ(Cond(p.status, "WarmupUnschedulable").reason, "Scheduled");
  EXPECT_EQ(FindEvent(p, "WarmupUnschedulable"), nullptr);
}

// ---- scale to zero: Absent vs Stale -------------------------------------------------

TEST(Decide, ScaledToZeroPoolKeepsItsCacheUntilAbsentAfter) {
  // An autoscaled pool goes to zero at night: its Node objects are deleted,
  // none of them turned into another fingerprint. Its cache is kept for
  // absentAfter (168h by default), far past staleAfter.
  World w;
  w.obs.kc.spec.retention.stale_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()), GpuNodeView("gpu-2", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  ASSERT_EQ(w.Status(fp)->last_nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
  const auto pool = w.obs.nodes;

  const Time night = kT0 + hours(10);
  w.obs.nodes.clear();
  Plan p = w.Step(night);
  const FingerprintStatus* f = w.Status(fp);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->state, "Absent");
  EXPECT_EQ(f->nodes, 0);
  ASSERT_TRUE(f->absent_since.has_value());
  EXPECT_EQ(api::FormatTime(*f->absent_since), api::FormatTime(night));
  EXPECT_FALSE(f->stale_since.has_value());
  EXPECT_EQ(f->manifest_digest, kDigest);  // the cache is still recorded
  EXPECT_EQ(f->last_nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
  const Action* e = FindEvent(p, "FingerprintAbsent");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->event_message.find("absentAfter 168h"), std::string::npos) << e->event_message;
  EXPECT_EQ(FindEvent(p, "FingerprintStale"), nullptr);
  EXPECT_EQ(*p.requeue_after, hours(168));
  // The status a user reads says Absent, since when, and on which nodes.
  const Json st = core::StatusToJson(p.status);
  EXPECT_EQ(st["fingerprints"][0]["state"], "Absent");
  EXPECT_EQ(st["fingerprints"][0]["absentSince"], api::FormatTime(night));
  EXPECT_EQ(st["fingerprints"][0]["lastNodes"], Json::array({"gpu-1", "gpu-2"}));

  // Past staleAfter (1h) and for days: no GC Job.
  for (auto t : {hours(1), hours(2), hours(24), hours(167)}) {
    p = w.Step(night + t);
    EXPECT_EQ(Mutations(p), 0u) << "at +" << t.count() << "h";
    EXPECT_EQ(w.Status(fp)->state, "Absent");
  }

  // The first pod of the morning: the pool is back, the cache is Ready at
  // once, nothing is re-warmed.
  {
    World morning = w;
    morning.obs.nodes = pool;
    Plan m = morning.Step(night + hours(12));
    EXPECT_EQ(morning.Status(fp)->state, "Ready");
    EXPECT_FALSE(morning.Status(fp)->absent_since.has_value());
    EXPECT_EQ(CountKind(m, Kind::kCreateJob), 0u);
    EXPECT_EQ(m.status.ready, "1/1");
  }

  // A pool that never comes back is collected after absentAfter.
  p = w.Step(night + hours(168));
  const std::string gc = GcJobName("llama", {fp});
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{gc});
  const Action* started = FindEvent(p, "GcStarted");
  ASSERT_NE(started, nullptr);
  EXPECT_NE(started->event_message.find(fp + " (absent for more than 168h)"), std::string::npos)
      << started->event_message;
  w.FindJob(gc)->complete = true;
  w.FindJob(gc)->finished = night + hours(168) + minutes(1);
  p = w.Step(night + hours(168) + minutes(2));
  EXPECT_EQ(w.Status(fp), nullptr);
  EXPECT_NE(FindEvent(p, "CacheCollected"), nullptr);
}

TEST(Decide, ChangedFingerprintIsStillCollectedAfterStaleAfter) {
  struct Case {
    const char* name;
    // Turns the two nodes carrying the old fingerprint into the new world.
    std::function<void(World&)> change;
  } cases[] = {
      {"both nodes upgraded in place",
       [](World& w) {
         for (auto& x : w.obs.nodes) x.labels = GpuLabels("NVIDIA-H200", "590.10.01");
       }},
      {"one upgraded, the other deleted",
       [](World& w) {
         w.obs.nodes[0].labels = GpuLabels("NVIDIA-H200", "590.10.01");
         w.obs.nodes.pop_back();
       }},
      {"new image: the same nodes, another fingerprint",
       [](World& w) {
         w.obs.kc.spec.image = "registry.example/llama@sha256:" + std::string(64, 'c');
       }},
  };
  for (const auto& c : cases) {
    World w;
    w.obs.kc.spec.retention.stale_after = "1h";
    w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()), GpuNodeView("gpu-2", GpuLabels())};
    w.WarmAll(kT0);
    const std::string old_fp = w.Fp(GpuLabels());
    c.change(w);
    const Time t = kT0 + hours(2);
    Plan p = w.Step(t);
    const FingerprintStatus* f = w.Status(old_fp);
    ASSERT_NE(f, nullptr) << c.name;
    EXPECT_EQ(f->state, "Stale") << c.name;
    ASSERT_TRUE(f->stale_since.has_value()) << c.name;
    EXPECT_FALSE(f->absent_since.has_value()) << c.name;
    const Action* e = FindEvent(p, "FingerprintStale");
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_NE(e->event_message.find("gpu-1 (now "), std::string::npos) << e->event_message;
    EXPECT_EQ(FindEvent(p, "FingerprintAbsent"), nullptr) << c.name;
    // Collected after staleAfter, not absentAfter.
    const std::string gc = GcJobName("llama", {old_fp});
    p = w.Step(t + minutes(59));
    auto created = Names(p, Kind::kCreateJob);
    EXPECT_EQ(std::find(created.begin(), created.end(), gc), created.end()) << c.name;
    p = w.Step(t + hours(1));
    created = Names(p, Kind::kCreateJob);
    EXPECT_NE(std::find(created.begin(), created.end(), gc), created.end()) << c.name;
    const Action* started = FindEvent(p, "GcStarted");
    ASSERT_NE(started, nullptr) << c.name;
    EXPECT_NE(started->event_message.find(old_fp + " (stale for more than 1h)"), std::string::npos)
        << started->event_message;
  }
}

TEST(Decide, AbsentTurnsStaleWhenOneOfItsNodesReturnsWithAnotherFingerprint) {
  World w;
  w.obs.kc.spec.retention.stale_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  w.obs.nodes.clear();
  w.Step(kT0 + hours(1));
  ASSERT_EQ(w.Status(fp)->state, "Absent");
  // gpu-1 comes back after a driver upgrade: the old fingerprint is
  // superseded, not merely absent.
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels("NVIDIA-H200", "590.10.01"))};
  Plan p = w.Step(kT0 + hours(5));
  EXPECT_EQ(w.Status(fp)->state, "Stale");
  EXPECT_EQ(api::FormatTime(*w.Status(fp)->stale_since), api::FormatTime(kT0 + hours(5)));
  EXPECT_FALSE(w.Status(fp)->absent_since.has_value());
  EXPECT_NE(FindEvent(p, "FingerprintStale"), nullptr);
  p = w.Step(kT0 + hours(6));
  const auto created = Names(p, Kind::kCreateJob);
  EXPECT_NE(std::find(created.begin(), created.end(), GcJobName("llama", {fp})), created.end());
}

TEST(Decide, AbsentCachesMakeRoomUnderMaxBytesOldestFirst) {
  // Three pools of 4 MiB caches under a 10 MiB budget. Two scale to zero
  // (A100 first, then L40S): nothing is over budget, both are kept. A new
  // pool's cache pushes the total to 16 MiB: the longest-absent one (A100)
  // is collected, which is enough; L40S and everything in use stay.
  World w;
  w.obs.kc.spec.retention.max_bytes = "10Mi";
  const Labels h200 = GpuLabels(), a100 = GpuLabels("NVIDIA-A100", "550.54.15", "8"),
               l40s = GpuLabels("NVIDIA-L40S", "550.54.15", "8"),
               b200 = GpuLabels("NVIDIA-B200", "590.10.01", "10");
  w.obs.nodes = {GpuNodeView("h-1", h200), GpuNodeView("a-1", a100), GpuNodeView("l-1", l40s)};
  w.Step(kT0);
  for (const auto& j : std::vector<JobView>(w.obs.jobs)) {
    w.Succeed(j.name, SealMsg(j.labels.at(kLabelFingerprint), 3 << 20), kT0 + minutes(1));
  }
  w.Step(kT0 + minutes(2));
  ASSERT_EQ(w.obs.kc.status.ready, "3/3");
  w.obs.nodes = {GpuNodeView("h-1", h200), GpuNodeView("l-1", l40s)};
  w.Step(kT0 + hours(1));
  w.obs.nodes = {GpuNodeView("h-1", h200)};
  Plan p = w.Step(kT0 + hours(2));
  EXPECT_EQ(w.Status(w.Fp(a100))->state, "Absent");
  EXPECT_EQ(w.Status(w.Fp(l40s))->state, "Absent");
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u) << "9 MiB fits in 10 MiB: nothing collected";

  w.obs.nodes = {GpuNodeView("h-1", h200), GpuNodeView("b-1", b200)};
  w.Step(kT0 + hours(3));
  w.Succeed(WarmupJobName("llama", w.Fp(b200)), SealMsg(w.Fp(b200), 3 << 20),
            kT0 + hours(3) + minutes(1), "b-1");
  p = w.Step(kT0 + hours(3) + minutes(2));
  ASSERT_EQ(w.Status(w.Fp(b200))->state, "Ready");
  const std::string gc = GcJobName("llama", {w.Fp(a100)});
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{gc});
  const Action* started = FindEvent(p, "GcStarted");
  ASSERT_NE(started, nullptr);
  EXPECT_NE(started->event_message.find("needed under spec.retention.maxBytes 10Mi"),
            std::string::npos)
      << started->event_message;
  EXPECT_EQ(started->event_message.find(w.Fp(l40s)), std::string::npos) << started->event_message;
  w.FindJob(gc)->complete = true;
  w.FindJob(gc)->finished = kT0 + hours(3) + minutes(3);
  w.Step(kT0 + hours(3) + minutes(4));
  EXPECT_EQ(w.Status(w.Fp(a100)), nullptr);
  EXPECT_EQ(w.Status(w.Fp(l40s))->state, "Absent");
  p = w.Step(kT0 + hours(3) + minutes(5));
  EXPECT_EQ(Mutations(p), 0u);
}

TEST(Decide, FingerprintBackDuringItsGcIsWarmedAnew) {
  World w;
  w.obs.kc.spec.retention.absent_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  const std::string job = WarmupJobName("llama", fp);
  auto nodes = w.obs.nodes;
  w.obs.nodes.clear();
  w.Step(kT0 + hours(1));  // Absent
  Plan p = w.Step(kT0 + hours(2));
  const std::string gc = GcJobName("llama", {fp});
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{gc});
  // The node returns while the GC Job runs: Ready again (the directory is
  // still there)...
  w.obs.nodes = nodes;
  w.Step(kT0 + hours(2) + seconds(10));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  // ...until the GC Job completes: then the cache is gone, so Pending, and
  // the old warmup Job is deleted.
  w.FindJob(gc)->complete = true;
  w.FindJob(gc)->finished = kT0 + hours(2) + minutes(1);
  // The informer still shows the old warmup Job on this pass.
  p = w.Decide(kT0 + hours(2) + minutes(2));
  w.Apply(p, kT0 + hours(2) + minutes(2));
  EXPECT_EQ(w.Status(fp)->state, "Pending");
  EXPECT_TRUE(w.Status(fp)->manifest_digest.empty());
  auto deleted = Names(p, Kind::kDeleteJob);
  std::sort(deleted.begin(), deleted.end());
  std::vector<std::string> want = {gc, job};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(deleted, want);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  // Once the old Job is gone it is warmed anew (never re-read as Ready).
  p = w.Step(kT0 + hours(2) + minutes(3));
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{job});
  EXPECT_EQ(w.Status(fp)->state, "Warming");
}

TEST(Decide, FingerprintBackDuringGcWaitsForTheOldJobToGo) {
  // Same, but the delete of the old Job is not yet visible: no re-read.
  World w;
  w.obs.kc.spec.retention.absent_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string fp = w.Fp(GpuLabels());
  auto nodes = w.obs.nodes;
  w.obs.nodes.clear();
  w.Step(kT0 + hours(1));
  w.Step(kT0 + hours(2));
  w.obs.nodes = nodes;
  const std::string gc = GcJobName("llama", {fp});
  w.FindJob(gc)->complete = true;
  w.FindJob(gc)->finished = kT0 + hours(2) + minutes(1);
  Plan p = w.Decide(kT0 + hours(2) + minutes(2));
  w.obs.kc.status = p.status;  // status written, deletes not yet observed
  p = w.Decide(kT0 + hours(2) + minutes(3));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_EQ(p.status.fingerprints[0].state, "Pending");
  EXPECT_TRUE(p.status.fingerprints[0].manifest_digest.empty());
}

TEST(Decide, ImageChangeRetiresOldFingerprints) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.WarmAll(kT0);
  const std::string old_fp = w.Fp(GpuLabels());
  w.obs.kc.spec.image = "registry.example/llama@sha256:" + std::string(64, 'c');
  w.obs.kc.metadata.generation = 2;
  const std::string new_fp = w.Fp(GpuLabels());
  ASSERT_NE(old_fp, new_fp);
  Plan p = w.Step(kT0 + hours(1));
  EXPECT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{WarmupJobName("llama", new_fp)});
  EXPECT_EQ(w.Status(old_fp)->state, "Stale");
  EXPECT_EQ(w.Status(new_fp)->state, "Warming");
  EXPECT_EQ(p.status.observed_generation, 2);
  EXPECT_EQ(Cond(p.status, "Ready").observed_generation, 2);
}

TEST(Decide, RuntimeChangeRetiresOldFingerprintsAndStopsTheirWarmups) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);  // warmup of the old fingerprint in flight
  const std::string old_fp = w.Fp(GpuLabels());
  w.obs.kc.spec.runtime["triton"] = "3.6.0";
  Plan p = w.Step(kT0 + minutes(1));
  EXPECT_EQ(Names(p, Kind::kCancelJob), std::vector<std::string>{WarmupJobName("llama", old_fp)});
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  EXPECT_EQ(w.Status(old_fp)->state, "Stale");
}

// A warmup the operator stops (its fingerprint went Stale mid-warmup) never
// reaches seal: the lock its prepare took stays on the volume. The Job is
// deleted in the foreground and remembered; once it is gone (and its pods
// with it), the next warmup of that fingerprint and its GC may break the
// lock. A publish forgets it.
TEST(Decide, CancelledWarmupIsADeadLockOwnerOnceItsJobIsGone) {
  World w;
  const Labels old_labels = GpuLabels();
  const Labels new_labels = GpuLabels("NVIDIA-H200", "580.200.01");
  w.obs.nodes = {GpuNodeView("gpu-1", old_labels)};
  w.Step(kT0);
  const std::string fp = w.Fp(old_labels);
  const std::string job = WarmupJobName("llama", fp);
  const std::string cancelled = w.FindJob(job)->uid;

  w.obs.nodes[0].labels = new_labels;  // the driver changes mid-warmup
  const auto before = w.obs.kc.status;
  Plan p = w.Step(kT0 + minutes(1));
  EXPECT_EQ(Names(p, Kind::kCancelJob), std::vector<std::string>{job});
  EXPECT_EQ(CountKind(p, Kind::kDeleteJob), 0u);
  EXPECT_EQ(w.Status(fp)->state, "Stale");
  EXPECT_EQ(w.Status(fp)->cancelled_job_uids, std::vector<std::string>{cancelled});
  // That pass's status write was put off (or lost): the next pass, from the
  // older status, finds the Job deleting in the foreground and records it.
  w.obs.kc.status = before;
  p = w.Step(kT0 + minutes(1) + seconds(5));  // still deleting: asked once
  EXPECT_EQ(CountKind(p, Kind::kCancelJob), 0u);
  EXPECT_EQ(w.Status(fp)->cancelled_job_uids, std::vector<std::string>{cancelled});

  // Back to the old driver while the cancelled Job's pods still terminate:
  // nothing is created under its name, and it is no dead owner yet.
  w.obs.nodes[0].labels = old_labels;
  p = w.Step(kT0 + minutes(2));
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u);
  EXPECT_TRUE(decide::DeadOwners(*w.Status(fp), w.obs.jobs, "llama").empty());

  w.ForegroundDeletesDone();
  EXPECT_EQ(decide::DeadOwners(*w.Status(fp), w.obs.jobs, "llama"),
            std::vector<std::string>{cancelled});
  p = w.Step(kT0 + minutes(3));
  ASSERT_EQ(Names(p, Kind::kCreateJob), std::vector<std::string>{job});
  const Action& create = *std::find_if(p.actions.begin(), p.actions.end(),
                                       [](const Action& x) { return x.kind == Kind::kCreateJob; });
  const Json& args = create.object["spec"]["template"]["spec"]["initContainers"][0]["args"];
  EXPECT_EQ(args.back(), "--break-lock-of=" + cancelled) << args;

  // The new Job publishes: the cancelled owner is forgotten.
  w.Succeed(job, SealMsg(fp), kT0 + minutes(4));
  w.Step(kT0 + minutes(4) + seconds(1));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_TRUE(w.Status(fp)->cancelled_job_uids.empty());
}

// ---- invalid spec --------------------------------------------------------------------

TEST(Decide, InvalidSpecCreatesNothing) {
  struct Case {
    const char* name;
    std::function<void(Observed&)> edit;
    const char* want;
  } cases[] = {
      {"env sets cache view",
       [](Observed& o) {
         o.kc.spec.warmup.env = {{{"name", "TRITON_CACHE_DIR"}, {"value", "/x"}}};
       },
       "spec.warmup.env[0].name"},
      {"no storage", [](Observed& o) { o.kc.spec.storage.size.clear(); }, "spec.storage"},
      {"parse error", [](Observed& o) { o.parse_errors = {"spec.image: expected a string"}; },
       "spec.image: expected a string"},
  };
  for (const auto& c : cases) {
    World w;
    w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
    c.edit(w.obs);
    Plan p = w.Step(kT0);
    EXPECT_EQ(CountKind(p, Kind::kCreateJob), 0u) << c.name;
    EXPECT_EQ(CountKind(p, Kind::kCreatePvc), 0u) << c.name;
    const auto& cond = Cond(p.status, "InvalidSpec");
    EXPECT_EQ(cond.status, "True") << c.name;
    EXPECT_NE(cond.message.find(c.want), std::string::npos) << c.name << ": " << cond.message;
    EXPECT_EQ(Cond(p.status, "Ready").status, "False") << c.name;
    EXPECT_EQ(p.status.phase, "Invalid") << c.name;
    const Action* e = FindEvent(p, "InvalidSpec");
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_EQ(e->event_type, "Warning");
    // Idempotent: no second event for the same problem.
    p = w.Step(kT0 + seconds(5));
    EXPECT_EQ(FindEvent(p, "InvalidSpec"), nullptr) << c.name;
  }
}

TEST(Decide, EventMessagesStayUnderOneKiB) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  for (int i = 0; i < 40; ++i) {
    w.obs.kc.spec.warmup.env.push_back({{"name", "TRITON_CACHE_DIR"}, {"value", "/x"}});
  }
  Plan p = w.Decide(kT0);
  const Action* e = FindEvent(p, "InvalidSpec");
  ASSERT_NE(e, nullptr);
  EXPECT_LE(e->event_message.size(), 1000u);
  EXPECT_TRUE(e->event_message.ends_with("..."));
  // The condition keeps the whole list.
  EXPECT_NE(Cond(p.status, "InvalidSpec").message.find("spec.warmup.env[39].name"),
            std::string::npos);
}

TEST(Decide, FixingTheSpecClearsInvalidSpec) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.obs.kc.spec.storage.size.clear();
  w.Step(kT0);
  w.obs.kc.spec.storage.size = "20Gi";
  Plan p = w.Step(kT0 + minutes(1));
  EXPECT_EQ(Cond(p.status, "InvalidSpec").status, "False");
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  EXPECT_EQ(p.status.phase, "Warming");
}

TEST(Decide, UnpinnedImageWarnsButWarms) {
  World w;
  w.obs.kc.spec.image = "registry.example/llama:latest";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  Plan p = w.Step(kT0);
  EXPECT_EQ(Cond(p.status, "ImageNotPinned").status, "True");
  EXPECT_NE(FindEvent(p, "ImageNotPinned"), nullptr);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob), 1u);
  p = w.Step(kT0 + seconds(1));
  EXPECT_EQ(FindEvent(p, "ImageNotPinned"), nullptr);
}

// ---- storage ------------------------------------------------------------------------

TEST(Decide, Storage) {
  struct Case {
    const char* name;
    std::function<void(Observed&)> edit;
    std::string want_reason;
    bool want_job;
  } cases[] = {
      {"existing claim missing",
       [](Observed& o) {
         o.kc.spec.storage = {"", "", "shared-cache"};
         o.pvc.reset();
       },
       "ClaimNotFound", false},
      {"existing claim RWO",
       [](Observed& o) {
         o.kc.spec.storage = {"", "", "shared-cache"};
         o.pvc = PvcView{"shared-cache", "u", "Bound", {"ReadWriteOnce"}, false, false, kT0};
       },
       "NotReadWriteMany", false},
      {"existing claim RWX bound",
       [](Observed& o) {
         o.kc.spec.storage = {"", "", "shared-cache"};
         o.pvc = PvcView{"shared-cache", "u", "Bound", {"ReadWriteMany"}, false, false, kT0};
       },
       "Bound", true},
      {"pending briefly",
       [](Observed& o) {
         o.pvc = PvcView{"llama-cache", "u",   "Pending",        {"ReadWriteMany"},
                         true,          false, kT0 - seconds(30)};
       },
       "Binding", true},
      {"pending too long (jobs still made: WaitForFirstConsumer)",
       [](Observed& o) {
         o.pvc = PvcView{"llama-cache", "u",   "Pending",        {"ReadWriteMany"},
                         true,          false, kT0 - minutes(10)};
       },
       "WaitingForBinding", true},
  };
  for (const auto& c : cases) {
    World w;
    w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
    c.edit(w.obs);
    Plan p = w.Decide(kT0);
    EXPECT_EQ(CountKind(p, Kind::kCreatePvc), 0u) << c.name;
    const auto& cond = Cond(p.status, "StorageReady");
    EXPECT_EQ(cond.reason, c.want_reason) << c.name << ": " << cond.message;
    EXPECT_EQ(cond.status, c.want_reason == "Bound" ? "True" : "False") << c.name;
    EXPECT_EQ(CountKind(p, Kind::kCreateJob), c.want_job ? 1u : 0u) << c.name;
    if (c.want_reason == "NotReadWriteMany" || c.want_reason == "ClaimNotFound" ||
        c.want_reason == "WaitingForBinding") {
      EXPECT_NE(FindEvent(p, c.want_reason), nullptr) << c.name;
    }
    if (c.want_reason == "Binding") {
      ASSERT_TRUE(p.requeue_after.has_value()) << c.name;
      EXPECT_EQ(*p.requeue_after, seconds(90)) << c.name;
    }
  }
}

// ---- size limit -----------------------------------------------------------------------

TEST(Decide, ShapeExplosion) {
  World w;
  w.obs.kc.spec.retention.max_bytes = "1Mi";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const std::string fp = w.Fp(GpuLabels());
  w.Succeed(WarmupJobName("llama", fp), SealMsg(fp, 5 << 20), kT0 + minutes(1));
  Plan p = w.Step(kT0 + minutes(2));
  EXPECT_EQ(w.Status(fp)->state, "Ready");
  EXPECT_EQ(Cond(p.status, "Degraded").status, "True");
  EXPECT_EQ(Cond(p.status, "Degraded").reason, "ShapeExplosion");
  EXPECT_EQ(p.status.phase, "Degraded");
  const Action* e = FindEvent(p, "ShapeExplosion");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->event_type, "Warning");
  EXPECT_NE(e->event_message.find("5Mi"), std::string::npos) << e->event_message;
  p = w.Step(kT0 + minutes(3));
  EXPECT_EQ(FindEvent(p, "ShapeExplosion"), nullptr);
}

// ---- deletion -------------------------------------------------------------------------

TEST(Decide, DeletionCleansUpWhatWeCreated) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  ASSERT_TRUE(w.obs.pvc.has_value());
  w.obs.kc.metadata.deletion_timestamp = kT0 + minutes(1);
  const auto status_before = w.obs.kc.status;
  Plan p = w.Step(kT0 + minutes(1));
  EXPECT_EQ(Names(p, Kind::kDeleteJob),
            std::vector<std::string>{WarmupJobName("llama", w.Fp(GpuLabels()))});
  EXPECT_EQ(Names(p, Kind::kDeletePvc), std::vector<std::string>{"llama-cache"});
  EXPECT_EQ(CountKind(p, Kind::kRemoveFinalizer), 1u);
  EXPECT_EQ(CountKind(p, Kind::kCreateJob) + CountKind(p, Kind::kCreatePvc), 0u);
  EXPECT_EQ(p.status, status_before);
  EXPECT_TRUE(w.obs.kc.metadata.finalizers.empty());
  // Finalizer gone: nothing more to do.
  p = w.Decide(kT0 + minutes(2));
  EXPECT_TRUE(p.actions.empty());
}

TEST(Decide, DeletionNeverDeletesAnExistingClaim) {
  for (bool owned : {false, true}) {
    World w;
    w.obs.kc.spec.storage = {"", "", "shared-cache"};
    // Even a claim that (oddly) names us as owner is the user's when it is
    // the existingClaim.
    w.obs.pvc = PvcView{"shared-cache", "u", "Bound", {"ReadWriteMany"}, owned, false, kT0};
    w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
    w.Step(kT0);
    w.obs.kc.metadata.deletion_timestamp = kT0 + minutes(1);
    Plan p = w.Decide(kT0 + minutes(1));
    EXPECT_EQ(CountKind(p, Kind::kDeletePvc), 0u);
    EXPECT_EQ(CountKind(p, Kind::kDeleteJob), 1u);
    EXPECT_EQ(CountKind(p, Kind::kRemoveFinalizer), 1u);
  }
}

TEST(Decide, DeletionKeepsAClaimWeDidNotCreate) {
  World w;
  w.obs.pvc = PvcView{"llama-cache", "u", "Bound", {"ReadWriteMany"}, false, false, kT0};
  w.obs.kc.metadata.deletion_timestamp = kT0;
  Plan p = w.Decide(kT0);
  EXPECT_EQ(CountKind(p, Kind::kDeletePvc), 0u);
  EXPECT_EQ(CountKind(p, Kind::kRemoveFinalizer), 1u);
}

// ---- idempotence and conditions --------------------------------------------------------

TEST(Decide, IdempotentAtEveryStage) {
  // At each stage of a life cycle, deciding again on the applied result
  // creates nothing and emits no event.
  World w;
  w.obs.kc.spec.retention.stale_after = "1h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()),
                 GpuNodeView("a-1", GpuLabels("NVIDIA-A100", "550.54.15", "8"))};
  const std::string h200 = w.Fp(GpuLabels());
  std::vector<std::function<void(World&, Time)>> stages = {
      [](World&, Time) {},
      [&](World& x, Time t) { x.Succeed(WarmupJobName("llama", h200), SealMsg(h200), t); },
      [&](World& x, Time t) {
        for (auto& j : x.obs.jobs) {
          if (!j.complete) x.Fail(j.name, t);
        }
      },
      [](World& x, Time) { x.obs.nodes.pop_back(); },
      [](World&, Time) {},
  };
  Time t = kT0;
  for (size_t i = 0; i < stages.size(); ++i) {
    stages[i](w, t);
    w.Step(t);
    // The world catches up (the created claim binds): still nothing new.
    Plan second = w.Step(t);
    EXPECT_EQ(CountKind(second, Kind::kCreateJob), 0u) << "stage " << i;
    EXPECT_EQ(CountKind(second, Kind::kCreatePvc), 0u) << "stage " << i;
    Plan again = w.Decide(t);
    EXPECT_EQ(CountKind(again, Kind::kCreateJob), 0u) << "stage " << i;
    EXPECT_EQ(CountKind(again, Kind::kCreatePvc), 0u) << "stage " << i;
    EXPECT_EQ(CountKind(again, Kind::kEmitEvent), 0u)
        << "stage " << i << ": " << (again.actions.empty() ? "" : again.actions[0].event_reason);
    EXPECT_EQ(again.status, w.obs.kc.status) << "stage " << i;
    t += minutes(2);
  }
}

TEST(Decide, ConditionsKeepTransitionTimeWhileUnchanged) {
  World w;
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels())};
  w.Step(kT0);
  const Time first = Cond(w.obs.kc.status, "Ready").last_transition_time;
  EXPECT_EQ(api::FormatTime(first), api::FormatTime(kT0));
  w.Step(kT0 + minutes(1));
  EXPECT_EQ(Cond(w.obs.kc.status, "Ready").last_transition_time, first);
  const std::string fp = w.Fp(GpuLabels());
  w.Succeed(WarmupJobName("llama", fp), SealMsg(fp), kT0 + minutes(2));
  w.Step(kT0 + minutes(3));
  EXPECT_EQ(Cond(w.obs.kc.status, "Ready").status, "True");
  EXPECT_EQ(api::FormatTime(Cond(w.obs.kc.status, "Ready").last_transition_time),
            api::FormatTime(kT0 + minutes(3)));
  for (const auto& c : w.obs.kc.status.conditions) EXPECT_EQ(c.observed_generation, 1);
}

TEST(Decide, RequeueIsTheEarliestTimer) {
  World w;
  w.obs.kc.spec.retention.absent_after = "2h";
  w.obs.kc.spec.retention.purge_schedule = "24h";
  w.obs.nodes = {GpuNodeView("gpu-1", GpuLabels()),
                 GpuNodeView("a-1", GpuLabels("NVIDIA-A100", "550.54.15", "8"))};
  w.WarmAll(kT0);
  w.obs.nodes.pop_back();  // A100 absent at kT0+1h: collect at kT0+3h; purge at kT0+24h
  Plan p = w.Step(kT0 + hours(1));
  ASSERT_TRUE(p.requeue_after.has_value());
  EXPECT_EQ(*p.requeue_after, hours(2));
}

TEST(Decide, ActionKindNames) {
  EXPECT_STREQ(ActionKindName(Kind::kCreateJob), "CreateJob");
  EXPECT_STREQ(ActionKindName(Kind::kRemoveFinalizer), "RemoveFinalizer");
  EXPECT_STREQ(ActionKindName(Kind::kCancelJob), "CancelJob");
}

// Decide's node step alone (decide_nodes.h), with this file's node fixtures.
TEST(GroupNodesTest, GroupsByFingerprintAndSplitsEligibility) {
  core::KernelCacheSpec spec;
  spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  NodeView cordoned = GpuNodeView("h200-2", GpuLabels("NVIDIA-H200"));
  cordoned.unschedulable = true;
  Labels unlabelled = {{"nvidia.com/gpu.present", "true"}};
  Labels unselected = GpuLabels("NVIDIA-A100");
  unselected["nvidia.com/gpu.present"] = "false";
  const decide::NodeGroups g =
      decide::GroupNodes(spec,
                         {GpuNodeView("h200-1", GpuLabels("NVIDIA-H200")), cordoned,
                          GpuNodeView("a100-1", GpuLabels("NVIDIA-A100")),
                          GpuNodeView("bare", unlabelled), GpuNodeView("other", unselected)},
                         nullptr, nullptr);
  ASSERT_EQ(g.groups.size(), 2u);
  EXPECT_EQ(g.node_fp.count("other"), 0u);
  EXPECT_EQ(g.node_fp.count("bare"), 0u);
  const decide::Group& h200 = g.groups.at(g.node_fp.at("h200-1"));
  EXPECT_EQ(h200.nodes, 2);
  EXPECT_EQ(h200.eligible, std::vector<std::string>{"h200-1"});
  EXPECT_EQ(h200.ineligible, std::vector<std::string>{"h200-2 (cordoned)"});
  EXPECT_EQ(h200.label_sets.size(), 1u);
  EXPECT_EQ(g.node_fp.at("h200-2"), g.node_fp.at("h200-1"));
  EXPECT_NE(g.node_fp.at("a100-1"), g.node_fp.at("h200-1"));
  EXPECT_TRUE(g.missing_labels.value);
  EXPECT_EQ(g.missing_labels.reason, "MissingGpuLabels");
  ASSERT_EQ(g.effects.events.size(), 1u);
  EXPECT_EQ(g.effects.events[0].event_reason, "NodeMissingLabels");

  // Named by the last condition already: no second Event.
  api::Condition prev;
  prev.status = "True";
  prev.message = g.missing_labels.message;
  const decide::NodeGroups again =
      decide::GroupNodes(spec, {GpuNodeView("bare", unlabelled)}, &prev, nullptr);
  EXPECT_TRUE(again.effects.events.empty());

  const decide::NodeGroups none = decide::GroupNodes(spec, {}, nullptr, nullptr);
  EXPECT_FALSE(none.missing_labels.value);
  EXPECT_EQ(none.missing_labels.reason, "AllLabelled");
  EXPECT_TRUE(none.warmup_fits.value);
  EXPECT_EQ(none.warmup_fits.reason, "Fits");
}

// A server warmup asks for its template's GPU count: nodes with fewer are
// not chosen, and a fingerprint none of whose nodes has them is reported.
TEST(GroupNodesTest, ServerWarmupNeedsTheTemplatesGpus) {
  core::KernelCacheSpec spec = Kc().spec;
  spec.image.clear();
  spec.warmup.command.clear();
  spec.warmup.server = core::ServerSpec{};
  spec.warmup.server->pod_template = {
      {"spec",
       {{"containers",
         {{{"name", "srv"},
           {"image", "srv:1"},
           {"ports", {{{"containerPort", 8000}}}},
           {"resources", {{"limits", {{"nvidia.com/gpu", "4"}}}}}}}}}}};
  auto sized = [](const std::string& name, const std::string& product, int64_t gpus) {
    NodeView n = GpuNodeView(name, GpuLabels(product));
    n.gpu_allocatable = gpus;
    return n;
  };
  const std::vector<NodeView> mixed = {sized("h200-8", "NVIDIA-H200", 8),
                                       sized("h200-2", "NVIDIA-H200", 2)};
  const decide::NodeGroups g = decide::GroupNodes(spec, mixed, nullptr, nullptr);
  const decide::Group& h200 = g.groups.at(g.node_fp.at("h200-8"));
  EXPECT_EQ(h200.eligible, std::vector<std::string>{"h200-8"});
  EXPECT_EQ(h200.ineligible,
            std::vector<std::string>{"h200-2 (2 allocatable nvidia.com/gpu, the warmup needs 4)"});
  EXPECT_TRUE(g.warmup_fits.value);
  EXPECT_EQ(g.warmup_fits.reason, "SomeNodesTooSmall");
  ASSERT_EQ(g.effects.events.size(), 1u);
  EXPECT_EQ(g.effects.events[0].event_reason, "WarmupDoesNotFit");

  const decide::NodeGroups small =
      decide::GroupNodes(spec, {sized("a100-2", "NVIDIA-A100", 2)}, nullptr, nullptr);
  EXPECT_FALSE(small.warmup_fits.value);
  EXPECT_EQ(small.warmup_fits.reason, "NoNodeFits");
  EXPECT_NE(small.warmup_fits.message.find("at most 2 allocatable GPU(s)"), std::string::npos)
      << small.warmup_fits.message;
  EXPECT_TRUE(small.groups.begin()->second.label_sets.empty());
  // The same message as last time: no second Event.
  api::Condition prev;
  prev.status = "False";
  prev.message = small.warmup_fits.message;
  EXPECT_TRUE(decide::GroupNodes(spec, {sized("a100-2", "NVIDIA-A100", 2)}, nullptr, &prev)
                  .effects.events.empty());
}

}  // namespace
}  // namespace kc::op
