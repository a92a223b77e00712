// Property test: thousands of generated KernelCaches,
// Nodes, Jobs, Pods and PVCs (valid JSON, hostile values: wrong types, huge
// and negative numbers, empty, very long and unicode strings, nulls, deep
// nesting, missing fields) go through every decoder the operator runs on
// informer objects (core::KernelCacheFromJson, the *ViewFromJson views,
// api/), core::ValidateSpec and Decide, and what the reconciler would
// send is serialised. Properties:
//   - nothing throws, and everything sent serialises (valid UTF-8);
//   - a typed spec field given a value of the wrong type is reported as a
//     decode error naming the field;
//   - a spec with decode errors is never acted on (no Job, no claim).
// Deterministic (fixed seed); a failure prints the case's seed and JSON.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pvc.h"
#include "base/duration.h"
#include "core/api_types.h"
#include "core/spec_validation.h"
#include "operator/decide/decide.h"
#include "operator/decide/views.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

const Time kNow = api::ParseTime("2026-12-02T10:00:00Z").value();

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  size_t Below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool OneIn(size_t n) { return Below(n) == 0; }

  std::string String() {
    static const std::vector<std::string> kPool = {
        "",
        " ",
        "a b",
        "Copy",
        "Shared",
        "LoadTest",
        "Fingerprint",
        "StartCold",
        "20Gi",
        "0",
        "-1",
        "1e400",
        "9999999999999999Gi",
        "0.5",
        "1.5Ki",
        "24h",
        "999999999h",
        "99999999999h",
        "1h30m",
        "-5s",
        "2026-12-02T10:00:00Z",
        "9999-12-31T23:59:59Z",
        "0000-01-01T00:00:00Z",
        "2026-13-45T99:99:99Z",
        "2026-12-02T10:00:00.123456789+05:30",
        "true",
        "null",
        "nvidia.com/gpu.present",
        "NVIDIA-H200",
        "9",
        "580.159.04",
        "13.0",
        "amd64",
        "seal",
        "warmup",
        "True",
        "Failed",
        "Complete",
        "ReadWriteMany",
        "Bound",
        "\xC3\xBC\xE2\x82\xAC\xF0\x9F\x94\xA5",  // ü€🔥
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",  // 日本語
        "{\"fingerprint\":\"0123456789abcdef\"}",
        "{\"fingerprint\":\"0123456789abcdef\",\"manifestDigest\":\"" + std::string(64, 'a') +
            "\",\"bytes\":-1,\"files\":1e30,\"durations\":{\"walkMs\":\"x\"}}",
    };
    switch (Below(6)) {
      case 0:
        return std::string(1 + Below(2000), "9a.\xC3\xBC"[Below(3)]);
      case 1: {
        std::string s;  // unicode text whose byte length lands anywhere
        const size_t n = Below(700);
        for (size_t i = 0; i < n; ++i) s += OneIn(3) ? "x" : "\xC3\xBC\xE2\x82\xAC";
        return s;
      }
      case 2:
        return std::string(Below(100000), 'z');
      case 3:
        return std::string(400, '9') + (OneIn(2) ? "Gi" : "h");
      default:
        return kPool[Below(kPool.size())];
    }
  }

  Json Scalar() {
    switch (Below(9)) {
      case 0:
        return nullptr;
      case 1:
        return OneIn(2);
      case 2:
        return static_cast<int64_t>(Below(200)) - 100;
      case 3:
        return std::numeric_limits<int64_t>::max();
      case 4:
        return std::numeric_limits<int64_t>::min();
      case 5:
        return std::numeric_limits<uint64_t>::max();
      case 6:
        return OneIn(2) ? 1e308 : -2.5;
      default:
        return String();
    }
  }

  Json Value(int depth = 0) {
    if (depth > 3 || Below(3) != 0) return Scalar();
    if (OneIn(40)) return Deep(50 + Below(400));
    Json out = OneIn(2) ? Json::array() : Json::object();
    const size_t n = Below(4);
    for (size_t i = 0; i < n; ++i) {
      if (out.is_array()) {
        out.push_back(Value(depth + 1));
      } else {
        out[Key()] = Value(depth + 1);
      }
    }
    return out;
  }

  Json Deep(size_t levels) {
    Json v = String();
    for (size_t i = 0; i < levels; ++i) v = OneIn(2) ? Json::array({v}) : Json{{"k", v}};
    return v;
  }

  std::string Key() {
    static const std::vector<std::string> kKeys = {"metadata",
                                                   "spec",
                                                   "status",
                                                   "name",
                                                   "namespace",
                                                   "labels",
                                                   "annotations",
                                                   "uid",
                                                   "generation",
                                                   "finalizers",
                                                   "deletionTimestamp",
                                                   "creationTimestamp",
                                                   "conditions",
                                                   "type",
                                                   "message",
                                                   "reason",
                                                   "lastTransitionTime",
                                                   "allocatable",
                                                   "nvidia.com/gpu",
                                                   "unschedulable",
                                                   "taints",
                                                   "podSelector",
                                                   "matchLabels",
                                                   "matchExpressions",
                                                   "key",
                                                   "operator",
                                                   "values",
                                                   "nodeSelector",
                                                   "tolerations",
                                                   "image",
                                                   "runtime",
                                                   "warmup",
                                                   "command",
                                                   "args",
                                                   "env",
                                                   "value",
                                                   "shapes",
                                                   "resources",
                                                   "limits",
                                                   "requests",
                                                   "activeDeadlineSeconds",
                                                   "backoffLimit",
                                                   "storage",
                                                   "size",
                                                   "existingClaim",
                                                   "storageClassName",
                                                   "consume",
                                                   "mode",
                                                   "waitTimeoutSeconds",
                                                   "onTimeout",
                                                   "verify",
                                                   "retention",
                                                   "staleAfter",
                                                   "absentAfter",
                                                   "securityContext",
                                                   "fsGroup",
                                                   "runAsUser",
                                                   "maxBytes",
                                                   "purgeSchedule",
                                                   "fingerprints",
                                                   "id",
                                                   "state",
                                                   "readyAt",
                                                   "staleSince",
                                                   "absentSince",
                                                   "lastNodes",
                                                   "failures",
                                                   "lastFailureTime",
                                                   "warmGeneration",
                                                   "jobUid",
                                                   "job",
                                                   "bytes",
                                                   "files",
                                                   "active",
                                                   "succeeded",
                                                   "failed",
                                                   "completionTime",
                                                   "phase",
                                                   "nodeName",
                                                   "initContainerStatuses",
                                                   "containerStatuses",
                                                   "terminated",
                                                   "exitCode",
                                                   "accessModes",
                                                   "ownerReferences",
                                                   "observedGeneration",
                                                   "x"};
    return kKeys[Below(kKeys.size())];
  }

  // Replaces, adds or removes values at random places of `j`, `n` times.
  void Mutate(Json& j, int n) {
    for (int i = 0; i < n; ++i) MutateOnce(j, 0);
  }

 private:
  void MutateOnce(Json& j, int depth) {
    if (j.is_object() && !j.empty() && depth < 8 && Below(3) != 0) {
      auto it = j.begin();
      std::advance(it, static_cast<long>(Below(j.size())));
      if (it->is_structured()) return MutateOnce(*it, depth + 1);
    }
    if (j.is_array() && !j.empty() && depth < 8 && Below(3) != 0) {
      return MutateOnce(j[Below(j.size())], depth + 1);
    }
    if (j.is_object()) {
      if (!j.empty() && OneIn(4)) {
        auto it = j.begin();
        std::advance(it, static_cast<long>(Below(j.size())));
        j.erase(it);
      } else {
        j[OneIn(3) ? Key() : (j.empty() ? Key() : j.begin().key())] = Value();
      }
    } else if (j.is_array()) {
      if (!j.empty() && OneIn(3)) {
        j[Below(j.size())] = Value();
      } else {
        j.push_back(Value());
      }
    } else {
      j = Value();
    }
  }

  std::mt19937_64 rng_;
};

Json BaseKernelCache() {
  return Json::parse(R"({
    "apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"name": "llama", "namespace": "ml", "uid": "kc-uid", "generation": 2,
                 "resourceVersion": "7", "finalizers": ["kernelcache.io/cleanup"],
                 "creationTimestamp": "2026-12-01T10:00:00Z"},
    "spec": {
      "podSelector": {"matchLabels": {"app": "llama"},
                      "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]},
      "nodeSelector": {"nvidia.com/gpu.present": "true"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "image": "registry.example/llama@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "runtime": {"pytorch": "2.11.0", "triton": "3.6.0"},
      "warmup": {"command": ["python3", "/app/warmup.py"], "args": ["--fast"],
                 "env": [{"name": "TRITON_PRINT_AUTOTUNING", "value": "1"}],
                 "shapes": [{"batch": 1, "seqLen": 128}],
                 "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "4"}},
                 "activeDeadlineSeconds": 1800, "backoffLimit": 2},
      "storage": {"size": "20Gi", "storageClassName": "nfs"},
      "consume": {"mode": "Copy", "waitTimeoutSeconds": 900, "onTimeout": "Fail",
                  "verify": "Manifest"},
      "retention": {"staleAfter": "24h", "maxBytes": "10Gi", "purgeSchedule": "168h"}
    },
    "status": {"observedGeneration": 1, "phase": "Warming",
      "conditions": [{"type": "Ready", "status": "False", "reason": "FingerprintsNotReady",
                      "message": "0/1", "lastTransitionTime": "2026-12-01T10:00:00Z"}],
      "fingerprints": [{"id": "0123456789abcdef", "state": "Ready", "nodes": 1,
                        "readyAt": "2026-12-01T11:00:00Z", "bytes": 10, "files": 2,
                        "failures": 0, "job": "llama-warm-0123456789abcdef"}]}
  })");
}

Json BaseNode(int i) {
  Json n = fixtures::GpuNodeJson("gpu-" + std::to_string(i));
  n["spec"]["unschedulable"] = false;
  n["status"]["capacity"]["nvidia.com/gpu"] = 8;
  return n;
}

Json BasePod(const std::string& job) {
  return {
      {"metadata",
       {{"name", job + "-pod"},
        {"labels", {{"job-name", job}, {kLabelName, "llama"}}},
        {"ownerReferences",
         {{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"name", job},
           {"uid", "job-uid"},
           {"controller", true}}}},
        {"creationTimestamp", "2026-12-02T09:00:01Z"}}},
      {"spec", {{"nodeName", "gpu-0"}}},
      {"status",
       {{"phase", "Failed"},
        {"initContainerStatuses",
         Json::array(
             {{{"name", "warmup"},
               {"state",
                {{"terminated", {{"exitCode", 1}, {"reason", "Error"}, {"message", "boom"}}}}}}})},
        {"containerStatuses",
         Json::array({{{"name", kSealContainer},
                       {"state",
                        {{"terminated",
                          {{"exitCode", 0},
                           {"message", "{\"fingerprint\":\"0123456789abcdef\"}"}}}}}}})}}}};
}

// What the reconciler serialises from a plan, with the strict UTF-8 check
// the REST client's dump() applies.
void Serialise(const Plan& p) {
  (void)core::StatusToJson(p.status).dump();
  for (const Action& a : p.actions) {
    (void)a.object.dump();
    (void)Json(a.event_message).dump();
  }
}

// The warmup Job Decide creates for the base objects: the starting point of
// generated Jobs, so mutations reach the paths that read Job outcomes.
Json WarmupJobFor(const Json& kc, const Json& node) {
  Observed o;
  o.kc = core::KernelCacheFromJson(kc, &o.parse_errors);
  o.kc.status = {};
  o.nodes = {NodeViewFromJson(node)};
  PvcView pvc;
  pvc.name = "llama-cache";
  pvc.phase = "Bound";
  pvc.access_modes = {"ReadWriteMany"};
  pvc.owned_by_us = true;
  o.pvc = pvc;
  for (const Action& a : Decide(o, kNow).actions) {
    if (a.kind == Action::Kind::kCreateJob) return a.object;
  }
  return Json::object();
}

TEST(FuzzTest, GeneratedObjectsNeverCrashTheDecodeValidateDecidePath) {
  const Json base_kc = BaseKernelCache();
  const Json base_job = [&] {
    Json j = WarmupJobFor(base_kc, BaseNode(0));
    j["metadata"]["uid"] = "job-uid";
    j["metadata"]["creationTimestamp"] = "2026-12-02T09:00:00Z";
    j["status"] = Json::parse(R"({"failed": 1, "conditions": [{"type": "Failed", "status": "True",
        "reason": "BackoffLimitExceeded", "lastTransitionTime": "2026-12-02T09:05:00Z"}],
        "completionTime": "2026-12-02T09:05:00Z"})");
    return j;
  }();
  ASSERT_TRUE(base_job.contains("spec")) << "the base objects should make Decide create a Job";
  const std::string job_name = base_job["metadata"]["name"];

  constexpr int kCases = 4000;
  int decode_errors = 0, acted = 0;
  for (int seed = 1; seed <= kCases; ++seed) {
    Gen g(static_cast<uint64_t>(seed));
    Json kc = base_kc;
    g.Mutate(kc, 1 + static_cast<int>(g.Below(4)));
    std::vector<Json> nodes = {BaseNode(0), BaseNode(1)};
    Json job = base_job;
    Json pod = BasePod(job_name);
    Json pvc = Json::parse(R"({"metadata": {"name": "llama-cache", "uid": "p",
        "ownerReferences": [{"uid": "kc-uid"}]}, "status": {"phase": "Bound",
        "accessModes": ["ReadWriteMany"]}})");
    switch (g.Below(5)) {
      case 0:
        g.Mutate(nodes[g.Below(2)], 1 + static_cast<int>(g.Below(3)));
        break;
      case 1:
        g.Mutate(job, 1 + static_cast<int>(g.Below(3)));
        break;
      case 2:
        g.Mutate(pod, 1 + static_cast<int>(g.Below(3)));
        break;
      case 3:
        g.Mutate(pvc, 1 + static_cast<int>(g.Below(2)));
        break;
      default:
        break;
    }
    if (g.OneIn(50)) kc = g.Value();  // not even an object

    bool ok = true;
    try {
      Observed o;
      o.kc = core::KernelCacheFromJson(kc, &o.parse_errors);
      (void)core::ValidateSpec(o.kc.spec);
      for (const Json& n : nodes) o.nodes.push_back(NodeViewFromJson(n));
      o.jobs = {JobViewFromJson(job)};
      o.pods = {PodViewFromJson(pod)};
      o.pvc = PvcViewFromJson(pvc, o.kc.metadata.uid);
      (void)nodes[0].get<api::Node>();
      (void)job.get<api::Job>();
      (void)pod.get<api::Pod>();
      (void)pvc.get<api::PersistentVolumeClaim>();
      const Plan p = Decide(o, kNow);
      Serialise(p);
      if (!o.parse_errors.empty()) {
        ++decode_errors;
        for (const Action& a : p.actions) {
          EXPECT_NE(a.kind, Action::Kind::kCreateJob) << "seed " << seed;
          EXPECT_NE(a.kind, Action::Kind::kCreatePvc) << "seed " << seed;
        }
      } else if (!p.actions.empty()) {
        ++acted;
      }
    } catch (const std::exception& e) {
      ok = false;
      ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n"
                    << kc.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 2000);
    }
    if (!ok && ::testing::Test::HasFailure() && seed > 50) break;  // enough to debug
  }
  // The generator reaches both sides.
  EXPECT_GT(decode_errors, kCases / 10);
  EXPECT_GT(acted, kCases / 20);
}

// Every typed spec field, given a value of the wrong JSON type, is a decode
// error naming that field (never a silent default, never an exception).
TEST(FuzzTest, WrongTypesAreReportedNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"/spec/podSelector/matchLabels", "object"},
      {"/spec/podSelector/matchExpressions", "array"},
      {"/spec/nodeSelector", "object"},
      {"/spec/tolerations", "array"},
      {"/spec/image", "string"},
      {"/spec/runtime", "object"},
      {"/spec/warmup", "object"},
      {"/spec/warmup/command", "array"},
      {"/spec/warmup/args", "array"},
      {"/spec/warmup/env", "array"},
      {"/spec/warmup/shapes", "array"},
      {"/spec/warmup/resources", "object"},
      {"/spec/warmup/activeDeadlineSeconds", "int64"},
      {"/spec/warmup/backoffLimit", "int32"},
      {"/spec/storage/size", "string"},
      {"/spec/storage/existingClaim", "string"},
      {"/spec/consume/mode", "string"},
      {"/spec/consume/waitTimeoutSeconds", "int64"},
      {"/spec/retention/staleAfter", "string"},
      {"/spec/retention/absentAfter", "string"},
      {"/spec/retention/maxBytes", "string"},
      {"/spec/securityContext", "object"},
      {"/spec/securityContext/fsGroup", "int64"},
      {"/spec/securityContext/runAsUser", "int64"},
  };
  const std::vector<Json> values = {true,
                                    -1.5,
                                    "text",
                                    Json::array({1}),
                                    Json::object({{"a", 1}}),
                                    std::numeric_limits<uint64_t>::max(),
                                    std::numeric_limits<int64_t>::min()};
  for (const auto& [pointer, kind] : fields) {
    for (const Json& v : values) {
      const bool same = (kind == "object" && v.is_object()) || (kind == "array" && v.is_array()) ||
                        (kind == "string" && v.is_string()) ||
                        (kind == "int64" && v.is_number_integer() && !v.is_number_unsigned());
      if (same) continue;
      Json kc = BaseKernelCache();
      kc[Json::json_pointer(pointer)] = v;
      std::vector<std::string> errors;
      EXPECT_NO_THROW((void)core::KernelCacheFromJson(kc, &errors));
      std::string path = pointer.substr(1);
      std::replace(path.begin(), path.end(), '/', '.');
      bool named = false;
      for (const auto& e : errors) named = named || e.rfind(path, 0) == 0;
      EXPECT_TRUE(named) << pointer << " = " << v.dump() << ": errors " << Json(errors).dump();
    }
  }
}

// The parsers of quantities, durations and times on generated text: never
// an exception; a result is consistent with the input.
TEST(FuzzTest, ScalarParsersAreTotal) {
  for (int seed = 1; seed <= 20000; ++seed) {
    Gen g(static_cast<uint64_t>(seed) * 7919);
    std::string s = g.String();
    if (g.OneIn(2)) s = s.substr(0, g.Below(s.size() + 1)) + (g.OneIn(2) ? "Gi" : "h");
    EXPECT_NO_THROW({
      auto q = api::ParseQuantityBytes(s);
      if (q.ok()) {
        EXPECT_GE(*q, 0) << s;
      }
      auto d = ParseDuration(s);
      if (d.ok()) {
        EXPECT_LE(*d, kMaxDuration) << s;
      }
      auto t = api::ParseTime(s);
      if (t.ok()) {
        EXPECT_TRUE(api::ParseTime(api::FormatTime(*t)).ok()) << s;
      }
    }) << s.substr(0, 100);
  }
}

}  // namespace
}  // namespace kc::op
