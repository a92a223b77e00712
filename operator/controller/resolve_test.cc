#include "operator/controller/resolve.h"

#include <gtest/gtest.h>

#include "core/fingerprint.h"
#include "core/resolve_answer.h"
#include "operator/testing/objects.h"
#include "testing/objects.h"

namespace kc::op {
namespace {

using namespace std::chrono_literals;

const Time kNow = Time(std::chrono::seconds(1'800'000'000));

NodeView GpuNode(const std::string& name) { return fixtures::GpuNodeView(name); }

core::KernelCache Kc() {
  core::KernelCache kc = testutil::KernelCacheNamed();
  kc.spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  kc.spec.image = "registry.example/llama@sha256:abc";
  kc.spec.runtime = {{"pytorch", "2.11.0"}};
  kc.spec.warmup.command = {"python3", "/app/warmup.py"};
  return kc;
}

std::string FpOf(const NodeView& n, const core::KernelCache& kc) {
  const auto& facts = n.labels.Facts();
  EXPECT_TRUE(facts.ok()) << facts.status();
  return core::ComputeFingerprint(*facts, core::RuntimeFactsFor(kc.spec)).id;
}

struct Case {
  std::string name;
  std::function<void(ResolveQuery&, ResolveInputs&)> setup;
  int want_status;
  std::string want_state;
  std::string want_message;  // substring (or the error for non-200)
};

TEST(ResolveTest, Table) {
  const NodeView gpu07 = GpuNode("gpu-07");
  const std::string fp = FpOf(gpu07, Kc());
  auto with_fp = [&](const std::string& state) {
    core::FingerprintStatus fs;
    fs.id = fp;
    fs.state = state;
    fs.job = "llama-warm-" + fp;
    return fs;
  };
  const Case cases[] = {
      {"missing node param", [](ResolveQuery& q, ResolveInputs&) { q.node.clear(); }, 400, "",
       "missing query parameter \"node\""},
      {"unknown kernelcache", [](ResolveQuery&, ResolveInputs& in) { in.kc.reset(); }, 404, "",
       "kernelcache ml/llama not found"},
      {"unknown node", [](ResolveQuery&, ResolveInputs& in) { in.node.reset(); }, 404, "",
       "node gpu-07 not found"},
      {"not recorded yet", [](ResolveQuery&, ResolveInputs&) {}, 200, "Pending",
       "not yet recorded by the operator"},
      {"not recorded, only node cordoned",
       [](ResolveQuery&, ResolveInputs& in) { in.nodes[0].unschedulable = true; }, 200, "Pending",
       "no warmup scheduled for fingerprint " + fp + ": no eligible node: gpu-07 (cordoned)"},
      {"pending, node in driver upgrade",
       [&](ResolveQuery&, ResolveInputs& in) {
         in.nodes[0].labels =
             in.nodes[0].labels.With("nvidia.com/gpu-driver-upgrade-state", "upgrade-required");
         in.kc->status.fingerprints.push_back(with_fp("Pending"));
       },
       200, "Pending", "no eligible node: gpu-07 (GPU driver upgrade: upgrade-required)"},
      {"warming, pod running on a node",
       [&](ResolveQuery&, ResolveInputs& in) {
         in.kc->status.fingerprints.push_back(with_fp("Warming"));
         JobView j;
         j.name = "llama-warm-" + fp;
         j.created = kNow - 150s;
         in.jobs.push_back(j);
         PodView p;
         p.name = j.name + "-abcde";
         p.job_name = j.name;
         p.node_name = "gpu-03";
         p.phase = "Running";
         p.created = kNow - 130s;
         in.pods.push_back(p);
       },
       200, "Warming", "warmup Job llama-warm-" + fp + " running for 2m10s on node gpu-03"},
      {"warming, pod not scheduled",
       [&](ResolveQuery&, ResolveInputs& in) {
         in.kc->status.fingerprints.push_back(with_fp("Warming"));
         PodView p;
         p.job_name = "llama-warm-" + fp;
         p.phase = "Pending";
         p.created = kNow - 5s;
         in.pods.push_back(p);
       },
       200, "Warming", "waiting 5s for a free GPU"},
      {"ready",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Ready");
         fs.manifest_digest = std::string(64, 'a');
         fs.files = 12;
         fs.bytes = 2048;
         fs.ready_at = kNow - 60s;
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Ready", "cache ready since 2027-01-15T07:59:00Z (12 files, 2Ki)"},
      {"failed",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Failed");
         fs.failures = 2;
         fs.last_failure = "BackoffLimitExceeded: warmup: Error (exit 1)";
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Failed", "failed 2 time(s): BackoffLimitExceeded: warmup: Error (exit 1)"},
      {"degraded: a gate quarantined it, re-warming",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Degraded");
         fs.job = "llama-warm-" + fp + "-g1";
         fs.last_failure = "CacheQuarantined: pod llama-0 on node gpu-07 found the cache bad";
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Degraded",
       "was found bad and is being re-warmed (CacheQuarantined: pod llama-0 on node gpu-07 found "
       "the cache bad); warmup Job llama-warm-" +
           fp + "-g1 starting"},
      {"stale",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Stale");
         fs.stale_since = kNow;
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Stale", "is stale since 2027-01-15T08:00:00Z"},
      {"absent but sealed: its nodes are back, the kept cache serves",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Absent");
         fs.absent_since = kNow - 3600s;
         fs.manifest_digest = std::string(64, 'a');
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Ready", "was absent since 2027-01-15T07:00:00Z (its nodes went away); its kept cache"},
      {"absent, never sealed",
       [&](ResolveQuery&, ResolveInputs& in) {
         auto fs = with_fp("Absent");
         in.kc->status.fingerprints.push_back(fs);
       },
       200, "Pending", "has no cache yet"},
      {"invalid spec",
       [&](ResolveQuery&, ResolveInputs& in) {
         api::Condition c;
         c.type = "InvalidSpec";
         c.status = "True";
         c.message = "spec.storage: set exactly one of size and existingClaim";
         in.kc->status.conditions.push_back(c);
       },
       200, "Unknown", "invalid spec: spec.storage: set exactly one"},
      {"node outside nodeSelector",
       [&](ResolveQuery&, ResolveInputs& in) {
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.present");
       },
       200, "Unknown",
       "does not match the KernelCache's nodeSelector (nvidia.com/gpu.present=true)"},
  };
  for (const Case& c : cases) {
    ResolveQuery q{"ml", "llama", "gpu-07"};
    ResolveInputs in;
    in.kc = Kc();
    in.node = gpu07;
    in.nodes = {gpu07};
    c.setup(q, in);
    ResolveResponse r = Resolve(q, in, kNow);
    EXPECT_EQ(r.http_status, c.want_status) << c.name << ": " << r.body.dump();
    if (c.want_status != 200) {
      EXPECT_NE(r.body.value("error", "").find(c.want_message), std::string::npos)
          << c.name << ": " << r.body.dump();
      continue;
    }
    EXPECT_EQ(r.body["fingerprint"], fp) << c.name;
    EXPECT_EQ(r.body["directory"], "v1/" + fp) << c.name;
    EXPECT_EQ(r.body["state"], c.want_state) << c.name;
    EXPECT_NE(r.body["message"].get<std::string>().find(c.want_message), std::string::npos)
        << c.name << ": " << r.body["message"];
    EXPECT_EQ(r.body["node"]["gpuProduct"], "NVIDIA-H200") << c.name;
    EXPECT_EQ(r.body["node"]["computeCapability"], "9.0") << c.name;
    EXPECT_EQ(r.body["node"]["driver"], "580.159.04") << c.name;
    EXPECT_EQ(r.body["node"]["arch"], "amd64") << c.name;
  }
}

// Answers that waiting cannot change are marked final, with a reason, so
// the gate acts on its onTimeout at once.
TEST(ResolveTest, FinalAnswers) {
  const NodeView gpu07 = GpuNode("gpu-07");
  struct FinalCase {
    std::string name;
    std::function<void(ResolveInputs&)> setup;
    std::string want_reason;  // "" = not final
    std::string want_message;
  } cases[] = {
      {"valid, selected, labelled", [](ResolveInputs&) {}, "", "not yet recorded"},
      {"invalid spec (condition)",
       [](ResolveInputs& in) {
         api::Condition c;
         c.type = "InvalidSpec";
         c.status = "True";
         c.message = "spec.storage: set exactly one of size and existingClaim";
         in.kc->status.conditions.push_back(c);
       },
       "InvalidSpec", "has an invalid spec: spec.storage"},
      {"invalid spec (parse error)",
       [](ResolveInputs& in) { in.parse_errors = {"spec.warmup.command[0]: expected a string"}; },
       "InvalidSpec", "spec.warmup.command[0]"},
      {"node outside nodeSelector",
       [](ResolveInputs& in) {
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.present");
       },
       "NodeNotSelected", "does not match the KernelCache's nodeSelector"},
      {"node without GPU labels",
       [](ResolveInputs& in) {
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.product");
       },
       "NodeHasNoFingerprint", "has no GPU fingerprint"},
      {"node without GPU labels, outside nodeSelector",
       [](ResolveInputs& in) {
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.product");
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.present");
       },
       "NodeNotSelected", "nodeSelector"},
      {"node without GPU labels, invalid spec",
       [](ResolveInputs& in) {
         in.node->labels = in.node->labels.Without("nvidia.com/gpu.product");
         in.parse_errors = {"spec.image: expected a string"};
       },
       "InvalidSpec", "spec.image"},
  };
  for (const auto& c : cases) {
    ResolveQuery q{"ml", "llama", "gpu-07"};
    ResolveInputs in;
    in.kc = Kc();
    in.node = gpu07;
    in.nodes = {gpu07};
    c.setup(in);
    ResolveResponse r = Resolve(q, in, kNow);
    ASSERT_EQ(r.http_status, 200) << c.name << ": " << r.body.dump();
    EXPECT_EQ(r.body.value("final", false), !c.want_reason.empty()) << c.name << r.body.dump();
    EXPECT_EQ(r.body.value("reason", ""), c.want_reason) << c.name;
    if (!c.want_reason.empty()) {
      EXPECT_EQ(r.body["state"], "Unknown") << c.name;
    }
    EXPECT_NE(r.body.value("message", "").find(c.want_message), std::string::npos)
        << c.name << ": " << r.body.dump();
  }
}

// A full GPU pool: the warmup pod has been unschedulable past the grace,
// so the answer says startCold (StartCold pods go now); not before the
// grace, not once it schedules, never for a Ready cache.
TEST(ResolveTest, UnschedulableWarmupSaysStartCold) {
  const NodeView gpu07 = GpuNode("gpu-07");
  const std::string fp = FpOf(gpu07, Kc());
  const std::string job = "llama-warm-" + fp;
  struct StartColdCase {
    std::string name;
    std::string state;
    std::chrono::seconds unschedulable_for;  // 0 = scheduled
    bool want;
  } cases[] = {
      {"warming, unschedulable 3m", "Warming", 180s, true},
      {"warming, unschedulable 30s (inside the 2m grace)", "Warming", 30s, false},
      {"warming, scheduled", "Warming", 0s, false},
      {"degraded re-warm, unschedulable", "Degraded", 300s, true},
      {"ready: the cache serves, whatever the re-warm does", "Ready", 300s, false},
  };
  for (const auto& c : cases) {
    ResolveInputs in;
    in.kc = Kc();
    in.node = gpu07;
    in.nodes = {gpu07};
    in.unschedulable_grace = 120s;
    core::FingerprintStatus fs;
    fs.id = fp;
    fs.state = c.state;
    fs.job = job;
    if (c.state == "Ready") fs.manifest_digest = std::string(64, 'a');
    in.kc->status.fingerprints.push_back(fs);
    PodView p;
    p.name = job + "-abcde";
    p.job_name = job;
    p.phase = "Pending";
    p.created = kNow - c.unschedulable_for - 1s;
    if (c.unschedulable_for.count() > 0) {
      p.unschedulable_since = kNow - c.unschedulable_for;
      p.unschedulable_message = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.";
    } else {
      p.node_name = "gpu-07";
      p.phase = "Running";
    }
    in.pods = {p};
    ResolveResponse r = Resolve({"ml", "llama", "gpu-07"}, in, kNow);
    ASSERT_EQ(r.http_status, 200) << c.name;
    EXPECT_EQ(r.body.value("startCold", false), c.want) << c.name << ": " << r.body.dump();
    EXPECT_FALSE(r.body.value("final", false)) << c.name;
    if (c.want) {
      EXPECT_EQ(r.body["reason"], "WarmupUnschedulable") << c.name;
      const std::string msg = r.body["message"];
      EXPECT_NE(msg.find("unschedulable for"), std::string::npos) << msg;
      EXPECT_NE(msg.find("Insufficient nvidia.com/gpu"), std::string::npos) << msg;
      auto parsed = core::ParseResolveAnswer(r.body.dump());
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_TRUE(parsed->start_cold);
    }
  }
}

}  // namespace
}  // namespace kc::op
